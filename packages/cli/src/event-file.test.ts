import { RawJson } from '@postern/client';
import { readEventFile } from './event-file.js';

/** Each event of the file as it would be sent: its `data` as the text it will be sent as. */
const sent = (text: string) =>
  readEventFile(text).map(({ event }) => {
    if (event === null || typeof event !== 'object') return event;
    const { data, ...rest } = event;
    return data instanceof RawJson ? { ...rest, data: data.text } : event;
  });

test('NDJSON: one event per line, blank lines skipped, each with its line; data kept as written', () => {
  const text = '{"type":"a.b","data":{"amount":1.0}}\n\n{"type":"a.c","data":12345678901234567890,"idempotencyKey":"k"}\r\n';
  expect(readEventFile(text).map(({ index, line }) => [index, line])).toEqual([
    [0, 1],
    [1, 3],
  ]);
  expect(sent(text)).toEqual([
    { type: 'a.b', data: '{"amount":1.0}' },
    { type: 'a.c', data: '12345678901234567890', idempotencyKey: 'k' },
  ]);
});

test('a JSON array, a batch body and a single event are read whole', () => {
  expect(sent('[{"type":"a.b","data":[1.50]}, "not an event"]')).toEqual([{ type: 'a.b', data: '[1.50]' }, 'not an event']);
  expect(readEventFile('[{"type":"a.b","data":1}]')[0]).toEqual({ event: expect.objectContaining({ type: 'a.b' }), index: 0 });
  expect(sent('{"events":[{"type":"a.b","data":{"x":1.0}}]}')).toEqual([{ type: 'a.b', data: '{"x":1.0}' }]);
  expect(sent('  {"type":"a.b","data":2.0}\n')).toEqual([{ type: 'a.b', data: '2.0' }]);
});

test('a line that is not JSON, or no event at all, is an error naming it', () => {
  expect(() => readEventFile('{"type":"a.b","data":1}\n{"type":\n')).toThrow(/^line 2 is not JSON/);
  expect(() => readEventFile('\n  \n')).toThrow('the file holds no events');
  expect(() => readEventFile('[]')).toThrow('the file holds no events');
});

import { rawJson, stringifyBody } from './raw-json.js';

test('raw JSON is written byte for byte where it stands; everything else as JSON.stringify writes it', () => {
  const data = '{"amount":1.0,"big":12345678901234567890,"z":1,"a":2}';
  expect(stringifyBody({ type: 'a.b', data: rawJson(data), note: '\u0000x' })).toBe(`{"type":"a.b","data":${data},"note":"\\u0000x"}`);
  expect(stringifyBody({ list: [rawJson('1.0'), rawJson('"s"')] })).toBe('{"list":[1.0,"s"]}');
  expect(stringifyBody({ a: 1 })).toBe('{"a":1}');
});

test('rawJson refuses text that is not one JSON value', () => {
  expect(() => rawJson('{"a":')).toThrow('rawJson: text must be one valid JSON value');
  expect(() => rawJson('1 2')).toThrow(TypeError);
});

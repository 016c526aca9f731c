import { buildEnvelope, extractRawArrayElements, extractRawField } from './envelope.js';

const base = { id: 'evt_01JD3Q5T9M7XKQ2V8N4R6B1C0F', type: 'invoice.paid', timestampMs: Date.UTC(2026, 0, 2, 3, 4, 5, 678) };

describe('buildEnvelope', () => {
  it('lays out id, type, ISO timestamp and data in that order', () => {
    expect(buildEnvelope({ ...base, dataJson: '{"a":1}' })).toBe(
      '{"id":"evt_01JD3Q5T9M7XKQ2V8N4R6B1C0F","type":"invoice.paid","timestamp":"2026-01-02T03:04:05.678Z","data":{"a":1}}',
    );
  });

  it.each([
    ['unicode', '{"name":"Zoë 😀 中文"}'],
    ['a float written 1.0', '{"amount":1.0}'],
    ['an integer beyond double precision', '{"n":12345678901234567890123}'],
    ['nested escapes', '{"s":"a\\"b\\u00e9","deep":{"t":"\\\\\\/\\n"}}'],
    ['whitespace inside', '{ "a" :\n\t[ 1 , 2 ]\r\n}'],
    ['a bare scalar', '1e400'],
  ])('keeps data byte for byte: %s', (_label, dataJson) => {
    const envelope = buildEnvelope({ ...base, dataJson });
    expect(envelope.endsWith(`,"data":${dataJson}}`)).toBe(true);
    expect(extractRawField(envelope, 'data')).toBe(dataJson);
    expect(Buffer.from(extractRawField(envelope, 'data') as string, 'utf8').equals(Buffer.from(dataJson, 'utf8'))).toBe(true);
  });

  it('escapes id and type as JSON strings', () => {
    const envelope = buildEnvelope({ ...base, type: 'a"b\\c', dataJson: 'null' });
    expect(JSON.parse(envelope).type).toBe('a"b\\c');
  });

  it('throws on a timestamp that is not a date', () => {
    expect(() => buildEnvelope({ ...base, timestampMs: Number.NaN, dataJson: '{}' })).toThrow(RangeError);
  });
});

describe('extractRawField', () => {
  it('returns the source text of the top-level value, trimmed', () => {
    const body = '{ "type" : "x" , "data" :  {"a": [1, {"b": 2}]}  , "z": true }';
    expect(extractRawField(body, 'data')).toBe('{"a": [1, {"b": 2}]}');
    expect(extractRawField(body, 'type')).toBe('"x"');
    expect(extractRawField(body, 'z')).toBe('true');
  });

  it('is not fooled by braces, brackets and quotes inside strings', () => {
    const body = '{"note":"} ] { [ \\" , \\"data\\": 1","data":{"s":"}{][\\"\\\\"},"after":"{"}';
    expect(JSON.parse(body).data).toEqual({ s: '}{][\"\\' });
    expect(extractRawField(body, 'data')).toBe('{"s":"}{][\\"\\\\"}');
    expect(extractRawField(body, 'after')).toBe('"{"');
  });

  it('ignores keys of nested objects', () => {
    const body = '{"outer":{"data":"nested"},"x":1}';
    expect(extractRawField(body, 'data')).toBeUndefined();
  });

  it('takes the last of duplicate keys, as JSON.parse does', () => {
    const body = '{"data":{"first":1},"data":[2.50]}';
    expect(JSON.parse(body).data).toEqual([2.5]);
    expect(extractRawField(body, 'data')).toBe('[2.50]');
  });

  it('compares keys after unescaping them', () => {
    expect(extractRawField('{"d\\u0061ta":-0.0}', 'data')).toBe('-0.0');
  });

  it('handles scalars, empty containers and a missing key', () => {
    expect(extractRawField('{"data":null}', 'data')).toBe('null');
    expect(extractRawField('{"data":-1.5e+10}', 'data')).toBe('-1.5e+10');
    expect(extractRawField('{"data":[]}', 'data')).toBe('[]');
    expect(extractRawField('{"data":{}}', 'data')).toBe('{}');
    expect(extractRawField('{"data":""}', 'data')).toBe('""');
    expect(extractRawField('{}', 'data')).toBeUndefined();
    expect(extractRawField('{"type":"x"}', 'data')).toBeUndefined();
  });

  it('returns undefined for text that is not a JSON object', () => {
    expect(extractRawField('[{"data":1}]', 'data')).toBeUndefined();
    expect(extractRawField('"data"', 'data')).toBeUndefined();
    expect(extractRawField('{"data":', 'data')).toBeUndefined();
    expect(extractRawField('{"data":{"a":1}', 'data')).toBeUndefined();
  });
});

describe('extractRawArrayElements', () => {
  it('returns each element of the array as it was written, in order', () => {
    const body = '{ "events" : [ {"type":"a","data":1.0} ,{"type":"b","data":{"n":12345678901234567890}},\n"x", 2.50, null, [] ] }';
    expect(extractRawArrayElements(body, 'events')).toEqual(['{"type":"a","data":1.0}', '{"type":"b","data":{"n":12345678901234567890}}', '"x"', '2.50', 'null', '[]']);
    const [second] = extractRawArrayElements(body, 'events')!.slice(1);
    expect(extractRawField(second!, 'data')).toBe('{"n":12345678901234567890}');
  });

  it('is not fooled by brackets, commas and quotes inside strings', () => {
    const body = '{"events":[{"data":"],[\\"{"},{"data":"\\\\"}]}';
    expect(JSON.parse(body).events).toHaveLength(2);
    expect(extractRawArrayElements(body, 'events')).toEqual(['{"data":"],[\\"{"}', '{"data":"\\\\"}']);
  });

  it('takes the last of duplicate keys, and an empty array as no elements', () => {
    expect(extractRawArrayElements('{"events":[1],"events":[2,3]}', 'events')).toEqual(['2', '3']);
    expect(extractRawArrayElements('{"events":[ ]}', 'events')).toEqual([]);
  });

  it('returns undefined when the field is absent or not an array', () => {
    expect(extractRawArrayElements('{"events":{"a":1}}', 'events')).toBeUndefined();
    expect(extractRawArrayElements('{"other":[1]}', 'events')).toBeUndefined();
    expect(extractRawArrayElements('[1,2]', 'events')).toBeUndefined();
  });
});

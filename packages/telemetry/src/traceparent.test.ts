import { formatTraceparent, parseTraceparent } from './traceparent.js';

const VALID = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

test('a valid traceparent round-trips', () => {
  const parsed = parseTraceparent(VALID);
  expect(parsed).toEqual({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 });
  expect(formatTraceparent(parsed!)).toBe(VALID);
  expect(formatTraceparent({ ...parsed!, traceFlags: 0 })).toBe(VALID.replace(/01$/, '00'));
});

test.each([
  [undefined],
  [''],
  ['garbage'],
  ['00-00000000000000000000000000000000-00f067aa0ba902b7-01'],
  ['00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01'],
  ['ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'],
  ['00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01'],
  ['00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra'],
])('%j is refused', (value) => {
  expect(parseTraceparent(value)).toBeNull();
});

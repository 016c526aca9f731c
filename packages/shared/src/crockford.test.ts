import { CROCKFORD_ALPHABET, crockfordDigit, decodeCrockford, encodeCrockford } from './crockford.js';

test('encodes zero-padded, most significant first, and decodes back', () => {
  expect(encodeCrockford(0, 4)).toBe('0000');
  expect(encodeCrockford(31, 2)).toBe('0Z');
  expect(encodeCrockford(32, 2)).toBe('10');
  expect(encodeCrockford(2 ** 48 - 1, 10)).toBe('7ZZZZZZZZZ');
  expect(encodeCrockford(2 ** 40 - 1, 8)).toBe('ZZZZZZZZ');
  for (const value of [0, 1, 1234567, 2 ** 40 - 2, 2 ** 48 - 1]) {
    expect(decodeCrockford(`x${encodeCrockford(value, 10)}y`, 1, 10)).toBe(value);
  }
});

test('encoded numbers of one length sort as the numbers do', () => {
  const values = [0, 5, 31, 32, 1000, 2 ** 20, 2 ** 40 - 1];
  const encoded = values.map((v) => encodeCrockford(v, 8));
  expect([...encoded].sort()).toEqual(encoded);
});

test('a character outside the alphabet is -1 and makes a decode NaN', () => {
  expect(CROCKFORD_ALPHABET).toHaveLength(32);
  for (const ch of ['I', 'L', 'O', 'U', 'a', '_', 'é']) expect(crockfordDigit(ch.charCodeAt(0))).toBe(-1);
  expect([...CROCKFORD_ALPHABET].map((ch) => crockfordDigit(ch.charCodeAt(0)))).toEqual([...Array(32).keys()]);
  expect(decodeCrockford('01I', 0, 3)).toBeNaN();
});

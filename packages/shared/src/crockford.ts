/**
 * Crockford base32, the alphabet of every Postern id's ULID body (ULID spec): digits and upper-case
 * letters without I, L, O and U, so that encoded numbers of one length sort as the numbers do.
 */
export const CROCKFORD_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** Each Crockford character's value by its char code; -1 for other characters below 128. */
const VALUE_OF = new Int8Array(128).fill(-1);
for (let i = 0; i < CROCKFORD_ALPHABET.length; i++) VALUE_OF[CROCKFORD_ALPHABET.charCodeAt(i)] = i;

/**
 * The value of the Crockford character with char code `code`, 0..31; -1 when it is not one
 * (lower case and the spec's aliases I, L, O count as not one: ids are written upper case).
 */
export function crockfordDigit(code: number): number {
  return code < 128 ? VALUE_OF[code]! : -1;
}

/**
 * `value` as exactly `length` Crockford characters, most significant first, zero-padded.
 *
 * @param value - a non-negative integer below 32^length and 2^53 (not checked: callers pass
 *   timestamps and 40-bit halves of an id's random part).
 * @param length - characters to write; 10 carry a 48-bit millisecond time, 8 a 40-bit half.
 */
export function encodeCrockford(value: number, length: number): string {
  let out = '';
  let rest = value;
  for (let i = 0; i < length; i++) {
    out = CROCKFORD_ALPHABET[rest % 32]! + out;
    rest = Math.floor(rest / 32);
  }
  return out;
}

/**
 * The value of `length` Crockford characters of `s` from index `from`.
 *
 * @param length - at most 10 (50 bits, exact in a double).
 * @returns the value, or NaN when one of the characters is not Crockford base32 (check the shape
 *   first where that matters, as id parsers do with their body pattern).
 */
export function decodeCrockford(s: string, from: number, length: number): number {
  let value = 0;
  for (let i = from; i < from + length; i++) {
    const digit = crockfordDigit(s.charCodeAt(i));
    if (digit < 0) return NaN;
    value = value * 32 + digit;
  }
  return value;
}

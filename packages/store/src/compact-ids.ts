/**
 * Ids in 20 characters instead of 26: the 128 bits of an id's ULID body (`<prefix>_` + 26
 * Crockford base32 characters, the first ≤ 7) in Z85 (ZeroMQ's base 85: 4 bytes → 5 characters;
 * no quote or backslash, so JSON carries it unescaped). Used where a few ids must fit one
 * 64-byte Redis value (a BullMQ job's data, docs/architecture.md "Compact records").
 */

import { CROCKFORD_ALPHABET, crockfordDigit } from '@postern/shared';

const Z85 = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#';
const BODY = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

/** Characters of one compact id. */
export const COMPACT_ID_CHARS = 20;

/**
 * Base conversion without BigInt (whose every step allocates; this runs for each id of every job):
 * the 128 bits as four 32-bit limbs in plain numbers, most significant first. A limb times 85 plus
 * a carry, and a remainder times 2^32 plus a limb, stay below 2^53, so every step is exact.
 */
const TWO_32 = 0x1_0000_0000;
/** Character code → digit value, -1 for characters outside the alphabet. */
function digitTable(alphabet: string): Int8Array {
  const table = new Int8Array(128).fill(-1);
  for (let i = 0; i < alphabet.length; i++) table[alphabet.charCodeAt(i)] = i;
  return table;
}
const Z85_DIGIT = digitTable(Z85);
const limbs = new Float64Array(4);
const codes = new Array<number>(26);

/** `limbs = limbs * factor + add`; the carry out of the top limb (non-zero = past 128 bits). */
function mulAdd(factor: number, add: number): number {
  let carry = add;
  for (let i = 3; i >= 0; i--) {
    const x = limbs[i]! * factor + carry;
    carry = Math.floor(x / TWO_32);
    limbs[i] = x - carry * TWO_32;
  }
  return carry;
}

/** `limbs = floor(limbs / divisor)`; the remainder. */
function divMod(divisor: number): number {
  let rem = 0;
  for (let i = 0; i < 4; i++) {
    const x = rem * TWO_32 + limbs[i]!;
    const q = Math.floor(x / divisor);
    rem = x - q * divisor;
    limbs[i] = q;
  }
  return rem;
}

/** The 20-character form of `<prefix>_<ULID body>`, or null when `id` has another shape. */
export function compactId(id: string, prefix: string): string | null {
  if (!id.startsWith(`${prefix}_`)) return null;
  const start = prefix.length + 1;
  if (!BODY.test(id.slice(start))) return null;
  limbs.fill(0);
  for (let i = start; i < id.length; i++) mulAdd(32, crockfordDigit(id.charCodeAt(i)));
  for (let i = COMPACT_ID_CHARS - 1; i >= 0; i--) codes[i] = Z85.charCodeAt(divMod(85));
  return String.fromCharCode(...codes.slice(0, COMPACT_ID_CHARS));
}

/** The id back from its {@link compactId} form; null when `s` is not one. */
export function expandId(s: string, prefix: string): string | null {
  if (s.length !== COMPACT_ID_CHARS) return null;
  limbs.fill(0);
  for (let i = 0; i < COMPACT_ID_CHARS; i++) {
    const code = s.charCodeAt(i);
    const d = code < 128 ? Z85_DIGIT[code]! : -1;
    if (d < 0 || mulAdd(85, d) !== 0) return null;
  }
  for (let i = 25; i >= 0; i--) codes[i] = CROCKFORD_ALPHABET.charCodeAt(divMod(32));
  return `${prefix}_${String.fromCharCode(...codes)}`;
}

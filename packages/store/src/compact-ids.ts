/**
 * Ids in 20 characters instead of 26: the 128 bits of an id's ULID body (`<prefix>_` + 26
 * Crockford base32 characters, the first ≤ 7) in Z85 (ZeroMQ's base 85: 4 bytes → 5 characters;
 * no quote or backslash, so JSON carries it unescaped). Used where a few ids must fit one
 * 64-byte Redis value (a BullMQ job's data, docs/architecture.md "Compact records").
 */

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const Z85 = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#';
const BODY = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

/** Characters of one compact id. */
export const COMPACT_ID_CHARS = 20;

/** The 20-character form of `<prefix>_<ULID body>`, or null when `id` has another shape. */
export function compactId(id: string, prefix: string): string | null {
  if (!id.startsWith(`${prefix}_`)) return null;
  const body = id.slice(prefix.length + 1);
  if (!BODY.test(body)) return null;
  let n = 0n;
  for (const c of body) n = (n << 5n) | BigInt(CROCKFORD.indexOf(c));
  let out = '';
  for (let i = 0; i < COMPACT_ID_CHARS; i++) {
    out = Z85.charAt(Number(n % 85n)) + out;
    n /= 85n;
  }
  return out;
}

/** The id back from its {@link compactId} form; null when `s` is not one. */
export function expandId(s: string, prefix: string): string | null {
  if (s.length !== COMPACT_ID_CHARS) return null;
  let n = 0n;
  for (const c of s) {
    const d = Z85.indexOf(c);
    if (d < 0) return null;
    n = n * 85n + BigInt(d);
  }
  if (n >> 128n !== 0n) return null;
  let body = '';
  for (let i = 0; i < 26; i++) {
    body = CROCKFORD.charAt(Number(n & 31n)) + body;
    n >>= 5n;
  }
  return `${prefix}_${body}`;
}

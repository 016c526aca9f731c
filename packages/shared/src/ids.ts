import { randomBytes } from 'node:crypto';
import { CROCKFORD_ALPHABET, decodeCrockford, encodeCrockford } from './crockford.js';

/**
 * Kinds of record that carry a Postern id, and the prefix each id starts with:
 * `org` tenant, `ep` endpoint, `evt` event, `dlv` delivery, `key` API key,
 * `ntf` notification, `ps` portal session, `pfk` platform key, `aud` audit log entry.
 */
export type IdPrefix = 'org' | 'ep' | 'evt' | 'dlv' | 'key' | 'ntf' | 'ps' | 'pfk' | 'aud';

/** Every prefix {@link newId} accepts, in no particular order. */
export const ID_PREFIXES: readonly IdPrefix[] = Object.freeze(['org', 'ep', 'evt', 'dlv', 'key', 'ntf', 'ps', 'pfk', 'aud']);

/**
 * Source of random bytes: returns a Buffer of exactly `n` bytes.
 * Defaults to `crypto.randomBytes`; tests pass their own for fixed output.
 */
export type RandomBytes = (n: number) => Buffer;

/** A function that mints ids; see {@link createIdFactory}. */
export type IdFactory = (prefix: IdPrefix, nowMs: number) => string;

const TIME_CHARS = 10;
const RANDOM_CHARS = 16;
const RANDOM_BYTES = 10; // 16 base32 chars carry exactly 80 bits
const MAX_TIME_MS = 2 ** 48 - 1;
/**
 * The 80 random bits are kept as two 40-bit halves of 8 characters each, which doubles hold
 * exactly (BigInt arithmetic allocated a number per character of every id).
 */
const HALF = 2 ** 40;
const HALF_CHARS = 8;
const HALF_BYTES = 5;
const BODY = new RegExp(`^[0-7][${CROCKFORD_ALPHABET}]{${TIME_CHARS + RANDOM_CHARS - 1}}$`);

function checkTime(nowMs: number): void {
  if (!Number.isInteger(nowMs) || nowMs < 0 || nowMs > MAX_TIME_MS) {
    throw new RangeError(`nowMs must be an integer from 0 to ${MAX_TIME_MS}, got ${nowMs}`);
  }
}

function checkPrefix(prefix: string): void {
  if (!(ID_PREFIXES as readonly string[]).includes(prefix)) {
    throw new RangeError(`unknown id prefix "${prefix}"; expected one of ${ID_PREFIXES.join(', ')}`);
  }
}

/** The random part's high and low 40 bits, from {@link RANDOM_BYTES} bytes of `random`. */
function randomPart(random: RandomBytes): { high: number; low: number } {
  const bytes = random(RANDOM_BYTES);
  if (bytes.length < RANDOM_BYTES) {
    throw new RangeError(`random source returned ${bytes.length} bytes, need ${RANDOM_BYTES}`);
  }
  return { high: bytes.readUIntBE(0, HALF_BYTES), low: bytes.readUIntBE(HALF_BYTES, HALF_BYTES) };
}

function format(prefix: IdPrefix, timeMs: number, high: number, low: number): string {
  return `${prefix}_${encodeCrockford(timeMs, TIME_CHARS)}${encodeCrockford(high, HALF_CHARS)}${encodeCrockford(low, HALF_CHARS)}`;
}

/**
 * Mints one id, ULID-style: `<prefix>_` then 26 Crockford base32 characters,
 * 10 for the millisecond timestamp and 16 for 80 random bits. Ids from
 * different milliseconds sort lexicographically in creation order; two ids
 * from the same millisecond are in random order (use {@link createIdFactory}
 * when that matters).
 *
 * @param prefix - record kind, one of {@link ID_PREFIXES}.
 * @param nowMs - creation time, Unix epoch milliseconds, integer 0..2^48-1.
 * @param random - byte source, default `crypto.randomBytes`.
 * @returns e.g. `evt_01JD3Q5T9M7XKQ2V8N4R6B1C0F`.
 * @throws RangeError on an unknown prefix, an out-of-range `nowMs`, or a
 *   random source that returns fewer than 10 bytes.
 */
export function newId(prefix: IdPrefix, nowMs: number, random: RandomBytes = randomBytes): string {
  checkPrefix(prefix);
  checkTime(nowMs);
  const { high, low } = randomPart(random);
  return format(prefix, nowMs, high, low);
}

/**
 * Returns an id minting function that is strictly increasing across every
 * call on it: within one millisecond (or if `nowMs` goes backwards) it reuses
 * the last timestamp and adds one to the last random part, as the ULID spec's
 * monotonic mode does. The state lives in the returned closure, so each
 * process (or test) makes its own factory; there is no shared global.
 *
 * @param random - byte source, default `crypto.randomBytes`.
 * @returns `(prefix, nowMs) => id`; the same format as {@link newId}.
 * @throws (from the returned function) RangeError as {@link newId} does, or
 *   when 2^80 ids were minted in one millisecond.
 */
export function createIdFactory(random: RandomBytes = randomBytes): IdFactory {
  let lastTimeMs = -1;
  let lastHigh = 0;
  let lastLow = 0;
  return (prefix, nowMs) => {
    checkPrefix(prefix);
    checkTime(nowMs);
    if (nowMs > lastTimeMs) {
      lastTimeMs = nowMs;
      ({ high: lastHigh, low: lastLow } = randomPart(random));
    } else if (lastLow < HALF - 1) {
      lastLow += 1;
    } else {
      if (lastHigh === HALF - 1) {
        throw new RangeError('id space for this millisecond is exhausted');
      }
      lastHigh += 1;
      lastLow = 0;
    }
    return format(prefix, lastTimeMs, lastHigh, lastLow);
  };
}

/**
 * Whether `s` is a well-formed id with the given prefix (format only; says
 * nothing about whether the record exists).
 *
 * @param prefix - expected record kind.
 * @param s - candidate, e.g. from a URL path.
 */
export function isId(prefix: IdPrefix, s: string): boolean {
  if (typeof s !== 'string' || !s.startsWith(`${prefix}_`)) return false;
  return BODY.test(s.slice(prefix.length + 1));
}

/**
 * The creation time encoded in an id.
 *
 * @param id - any id made by {@link newId} or {@link createIdFactory}.
 * @returns Unix epoch milliseconds.
 * @throws RangeError when `id` is not a well-formed Postern id.
 */
export function idTimeMs(id: string): number {
  const underscore = id.indexOf('_');
  const prefix = id.slice(0, underscore);
  if (underscore < 0 || !(ID_PREFIXES as readonly string[]).includes(prefix) || !isId(prefix as IdPrefix, id)) {
    throw new RangeError(`not a Postern id: "${id}"`);
  }
  return decodeCrockford(id, underscore + 1, TIME_CHARS);
}

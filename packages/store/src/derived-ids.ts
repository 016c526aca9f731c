/**
 * Ids and times a compact record leaves out because they are derived from the record's own id
 * (docs/architecture.md, "Compact records"). Postern ids are `<prefix>_` + a ULID body: 10
 * Crockford base32 characters of creation time (ms) and 16 of an 80-bit random part, which the
 * ingest's monotonic factory counts up by one within a millisecond. An event and its deliveries
 * are minted in one go, so delivery `i` (from 0) of an event is usually the event's id plus
 * `i + 1`, with the same time; that is checked when written, and the id is stored whole when it
 * does not hold (a redelivery, ids minted across a millisecond).
 */

import { decodeCrockford, encodeCrockford } from '@postern/shared';

const BODY = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;
/**
 * The 80-bit random part is worked on as two 40-bit halves (8 characters each), which doubles hold
 * exactly: BigInt arithmetic allocated a number per character, on every record read and written.
 */
const HALF = 2 ** 40;
const HALF_CHARS = 8;
/** The largest offset stored as a number instead of an id (a fan-out wider than this stores ids). */
const MAX_OFFSET = 9999;

interface IdParts {
  prefix: string;
  /** The 10 time characters as written. */
  time: string;
  /** The random part's high and low 40 bits. */
  high: number;
  low: number;
}

function split(id: string): IdParts | null {
  const underscore = id.indexOf('_');
  if (underscore <= 0) return null;
  const body = id.slice(underscore + 1);
  if (!BODY.test(body)) return null;
  return { prefix: id.slice(0, underscore), time: body.slice(0, 10), high: decodeCrockford(body, 10, HALF_CHARS), low: decodeCrockford(body, 10 + HALF_CHARS, HALF_CHARS) };
}

/** The id `<prefix>_` with `parts`' time and its random part plus `delta` (|delta| < 2^40); null past either end. */
function withOffset(prefix: string, parts: IdParts, delta: number): string | null {
  let { high, low } = parts;
  low += delta;
  if (low < 0 || low >= HALF) {
    high += Math.floor(low / HALF);
    low -= Math.floor(low / HALF) * HALF;
  }
  if (high < 0 || high >= HALF) return null;
  return `${prefix}_${parts.time}${encodeCrockford(high, HALF_CHARS)}${encodeCrockford(low, HALF_CHARS)}`;
}

/** The creation time (epoch ms) in an id's ULID body; null when `id` has another shape. */
export function idTimeOf(id: string): number | null {
  const underscore = id.indexOf('_');
  if (underscore <= 0 || !BODY.test(id.slice(underscore + 1))) return null;
  return decodeCrockford(id, underscore + 1, 10);
}

/**
 * The id `<prefix>_` with `id`'s time and its random part plus `delta` (an integer, |delta| below
 * 2^40); null when the result is out of range or `id` has another shape.
 */
export function idWithOffset(id: string, prefix: string, delta: number): string | null {
  const parts = split(id);
  return parts ? withOffset(prefix, parts, delta) : null;
}

/**
 * How a delivery hash stores its event's id: null (left out) when it is the delivery's id minus
 * one, the offset `k` as a string when it is the delivery's id minus `k` (2 ≤ k ≤ 9999, a fan-out),
 * else the id whole. Read back by {@link eventIdOfDelivery}.
 */
export function storedEventId(eventId: string, deliveryId: string): string | null {
  const e = split(eventId);
  const d = split(deliveryId);
  if (!e || !d || e.prefix !== 'evt' || e.time !== d.time) return eventId;
  // Exact: halves more than one apart put k far past MAX_OFFSET either way.
  const highs = d.high - e.high;
  if (highs < -1 || highs > 1) return eventId;
  const k = highs * HALF + d.low - e.low;
  if (k < 1 || k > MAX_OFFSET) return eventId;
  return k === 1 ? null : String(k);
}

/** A delivery's event id from its hash's `eventId` field (see {@link storedEventId}); '' when it cannot be told. */
export function eventIdOfDelivery(stored: string | null | undefined, deliveryId: string): string {
  if (stored && !/^[0-9]{1,4}$/.test(stored)) return stored;
  return idWithOffset(deliveryId, 'evt', stored ? -Number(stored) : -1) ?? '';
}

/**
 * How an event hash stores its `deliveryIds`: their count when they are the event's id plus 1, 2,
 * … (a fan-out minted with the event), else their JSON. Read back by {@link deliveryIdsOfEvent}.
 */
export function storedDeliveryIds(eventId: string, deliveryIds: readonly string[]): string {
  const event = deliveryIds.length > 0 ? split(eventId) : null;
  const derived = event !== null && deliveryIds.every((id, i) => id === withOffset('dlv', event, i + 1));
  return derived ? String(deliveryIds.length) : JSON.stringify(deliveryIds);
}

/** An event's delivery ids from its hash's `deliveryIds` field (see {@link storedDeliveryIds}); absent is none. */
export function deliveryIdsOfEvent(stored: string | undefined, eventId: string): string[] {
  if (stored === undefined || stored === '') return [];
  if (!/^[0-9]+$/.test(stored)) return JSON.parse(stored) as string[];
  const ids: string[] = [];
  const event = split(eventId);
  if (!event) return ids;
  for (let i = 1; i <= Number(stored); i++) {
    const id = withOffset('dlv', event, i);
    if (id) ids.push(id);
  }
  return ids;
}

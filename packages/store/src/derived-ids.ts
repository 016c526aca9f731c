/**
 * Ids and times a compact record leaves out because they are derived from the record's own id
 * (docs/architecture.md, "Compact records"). Postern ids are `<prefix>_` + a ULID body: 10
 * Crockford base32 characters of creation time (ms) and 16 of an 80-bit random part, which the
 * ingest's monotonic factory counts up by one within a millisecond. An event and its deliveries
 * are minted in one go, so delivery `i` (from 0) of an event is usually the event's id plus
 * `i + 1`, with the same time; that is checked when written, and the id is stored whole when it
 * does not hold (a redelivery, ids minted across a millisecond).
 */

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const BODY = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;
const RANDOM_CHARS = 16;
const MAX_RANDOM = (1n << 80n) - 1n;
/** The largest offset stored as a number instead of an id (a fan-out wider than this stores ids). */
const MAX_OFFSET = 9999n;

function split(id: string): { prefix: string; time: string; random: bigint } | null {
  const underscore = id.indexOf('_');
  if (underscore <= 0) return null;
  const body = id.slice(underscore + 1);
  if (!BODY.test(body)) return null;
  let random = 0n;
  for (const c of body.slice(10)) random = (random << 5n) | BigInt(CROCKFORD.indexOf(c));
  return { prefix: id.slice(0, underscore), time: body.slice(0, 10), random };
}

function join(prefix: string, time: string, random: bigint): string {
  let out = '';
  let rest = random;
  for (let i = 0; i < RANDOM_CHARS; i++) {
    out = CROCKFORD.charAt(Number(rest & 31n)) + out;
    rest >>= 5n;
  }
  return `${prefix}_${time}${out}`;
}

/** The creation time (epoch ms) in an id's ULID body; null when `id` has another shape. */
export function idTimeOf(id: string): number | null {
  const parts = split(id);
  if (!parts) return null;
  let ms = 0;
  for (const c of parts.time) ms = ms * 32 + CROCKFORD.indexOf(c);
  return ms;
}

/** The id `<prefix>_` with `id`'s time and its random part plus `delta`; null when out of range or `id` has another shape. */
export function idWithOffset(id: string, prefix: string, delta: bigint): string | null {
  const parts = split(id);
  if (!parts) return null;
  const random = parts.random + delta;
  if (random < 0n || random > MAX_RANDOM) return null;
  return join(prefix, parts.time, random);
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
  const k = d.random - e.random;
  if (k < 1n || k > MAX_OFFSET) return eventId;
  return k === 1n ? null : String(k);
}

/** A delivery's event id from its hash's `eventId` field (see {@link storedEventId}); '' when it cannot be told. */
export function eventIdOfDelivery(stored: string | null | undefined, deliveryId: string): string {
  if (stored && !/^[0-9]{1,4}$/.test(stored)) return stored;
  const k = stored ? BigInt(stored) : 1n;
  return idWithOffset(deliveryId, 'evt', -k) ?? '';
}

/**
 * How an event hash stores its `deliveryIds`: their count when they are the event's id plus 1, 2,
 * … (a fan-out minted with the event), else their JSON. Read back by {@link deliveryIdsOfEvent}.
 */
export function storedDeliveryIds(eventId: string, deliveryIds: readonly string[]): string {
  const derived = deliveryIds.length > 0 && deliveryIds.every((id, i) => id === idWithOffset(eventId, 'dlv', BigInt(i + 1)));
  return derived ? String(deliveryIds.length) : JSON.stringify(deliveryIds);
}

/** An event's delivery ids from its hash's `deliveryIds` field (see {@link storedDeliveryIds}); absent is none. */
export function deliveryIdsOfEvent(stored: string | undefined, eventId: string): string[] {
  if (stored === undefined || stored === '') return [];
  if (!/^[0-9]+$/.test(stored)) return JSON.parse(stored) as string[];
  const ids: string[] = [];
  for (let i = 1; i <= Number(stored); i++) {
    const id = idWithOffset(eventId, 'dlv', BigInt(i));
    if (id) ids.push(id);
  }
  return ids;
}

import { ALL_EVENT_TYPES, EVENT_TYPE_GROUP_PATTERN, eventTypeSchema } from './event-types.js';

/**
 * The statuses a live change carries: the delivery's status after an attempt ended
 * (finish-attempt.lua) or after it ended or was held without one (settle-delivery.lua). `pending`
 * is a retry scheduled or a delivery held; `in_flight` is never one: claiming an attempt is not a
 * change the feed records, the attempt's end is.
 */
export const LIVE_DELIVERY_STATUSES = Object.freeze(['pending', 'succeeded', 'failed', 'cancelled'] as const);

/** One of {@link LIVE_DELIVERY_STATUSES}. */
export type LiveDeliveryStatus = (typeof LIVE_DELIVERY_STATUSES)[number];

/**
 * One change of a delivery as the live stream (`GET /v1/deliveries/stream`) sends it: an attempt
 * that finished (`attempt` its number), or a delivery ended or held without one (`attempt` null).
 * Times are epoch ms here; the API shows them as ISO 8601.
 */
export interface LiveDeliveryChange {
  deliveryId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  /** The delivery's status after the change: `pending` (a retry is scheduled), `succeeded`, `failed`, `cancelled`. */
  status: string;
  /** The attempt that finished, 1-based; null when the delivery changed without one. */
  attempt: number | null;
  responseStatus: number | null;
  /** The attempt's error code, or the reason a delivery ended without one; null for a success. */
  error: string | null;
  durationMs: number | null;
  /** When the next attempt is due, epoch ms (with `pending`); else null. */
  nextAttemptAt: number | null;
  /** When the change happened, epoch ms. */
  at: number;
}

/**
 * What a live stream subscriber asked for: every field given must match; absent = any.
 * `eventType` is an exact type, a `prefix.*` pattern (as the org's `disabledEventTypes`) or `*`.
 */
export interface LiveDeliveryFilter {
  endpointId?: string;
  status?: string;
  eventType?: string;
}

/**
 * Whether `pattern` is an `eventType` filter a live change can match: `*`, a group `prefix.*`
 * ({@link EVENT_TYPE_GROUP_PATTERN}) or an exact event type. Anything else (`invoice*`, `*.paid`,
 * `in?oice.paid`) would match nothing, since types hold no `*` and no other wildcard is supported.
 */
export function isLiveEventTypeFilter(pattern: string): boolean {
  return pattern === ALL_EVENT_TYPES || EVENT_TYPE_GROUP_PATTERN.test(pattern) || eventTypeSchema.safeParse(pattern).success;
}

/** Whether a change passes a subscriber's filter (every given field matches). */
export function matchesLiveFilter(change: LiveDeliveryChange, filter: LiveDeliveryFilter): boolean {
  if (filter.endpointId !== undefined && change.endpointId !== filter.endpointId) return false;
  if (filter.status !== undefined && change.status !== filter.status) return false;
  if (filter.eventType !== undefined && !matchesTypePattern(filter.eventType, change.eventType)) return false;
  return true;
}

/** `invoice.paid` matches itself only; `invoice.*` matches every type under `invoice.`; `*` matches all. */
function matchesTypePattern(pattern: string, type: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('.*')) return type.startsWith(pattern.slice(0, -1));
  return pattern === type;
}

/** A Redis stream entry id (`<ms>-<seq>`), as the live stream uses for `id:` and `Last-Event-ID`. */
export const STREAM_ID_PATTERN = /^\d{1,16}-\d{1,16}$/;

/**
 * Orders two stream entry ids (`<ms>-<seq>`) as Redis does: by time, then by sequence.
 * Returns < 0, 0 or > 0. Both must match {@link STREAM_ID_PATTERN}.
 */
export function compareStreamIds(a: string, b: string): number {
  const [am = '0', as = '0'] = a.split('-');
  const [bm = '0', bs = '0'] = b.split('-');
  const byMs = BigInt(am) - BigInt(bm);
  if (byMs !== 0n) return byMs < 0n ? -1 : 1;
  const bySeq = BigInt(as) - BigInt(bs);
  return bySeq === 0n ? 0 : bySeq < 0n ? -1 : 1;
}

/**
 * Where a subscriber resuming after `lastEventId` starts, given the oldest entry still kept in
 * the org's feed (`oldestKeptId`, null when the feed is empty):
 * - `replay`: every entry after `lastEventId` is still kept: send them, then go on live;
 * - `gap`: some entries after it were trimmed (the feed keeps a bounded window): send what is
 *   kept after it, preceded by a `reset` so the client reloads what it shows.
 * An empty feed replays nothing (there is nothing to miss).
 */
export function resumeFrom(lastEventId: string, oldestKeptId: string | null): 'replay' | 'gap' {
  if (oldestKeptId === null) return 'replay';
  return compareStreamIds(lastEventId, oldestKeptId) < 0 ? 'gap' : 'replay';
}

/**
 * Whether a credential may open one more live stream: at most `maxPerKey` at a time per API key,
 * platform key (per org it acts for) or portal session, per ingest process. 0 turns streams off.
 */
export function mayOpenStream(openNow: number, maxPerKey: number): boolean {
  return openNow < maxPerKey;
}

/**
 * The live stream's defaults: heartbeat every 15 s (a comment line, so proxies keep the connection
 * and clients see a dead one), credential re-checked every 5 s (a revoked key's stream ends within
 * that), 5 streams per key, and a feed of about 1 000 changes per org kept for 1 h after the last
 * one (the window `Last-Event-ID` can resume within).
 */
export const LIVE_STREAM_DEFAULTS = Object.freeze({
  heartbeatMs: 15_000,
  credentialCheckMs: 5_000,
  maxPerKey: 5,
  feedMaxEntries: 1_000,
  feedTtlS: 3_600,
});

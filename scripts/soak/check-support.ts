/**
 * What the soak's checks share: tolerances, the violation kinds, and interval arithmetic over
 * the receivers' records. Pure.
 */
import type { ReceiverRecord } from './records.js';

/** An attempt may start this much before its scheduled time (clock reads and rounding of `durationMs`). */
export const SCHEDULE_TOLERANCE_MS = 50;
/**
 * A request the client abandoned (a timeout: the sender closed the socket) counts as ended this
 * much earlier at the receiver, because the sender frees its slot before the receiver sees the close.
 */
export const CLIENT_CLOSE_TOLERANCE_MS = 20;
/**
 * Arrivals allowed in any 1-s window at a receiver above `ceil(perSecond) + burst` (README, "Rate
 * limits": that many requests leave Postern in any second at most; where a receiver counts them,
 * the network and the receiver's own delays can move one more into a window).
 */
export const RATE_SLACK = 1;
/** The sliding window of the rate checks. */
export const RATE_WINDOW_MS = 1000;
/** After a sender's SIGKILL, endpoints with waiting deliveries must get a request again within this (target 10 s). */
export const SOAK_MAX_RESUME_MS = 10_000;

/** Every kind of violation the checker reports. */
export const VIOLATION_KINDS = [
  'early-attempt',
  'attempt-reused',
  'delivery-overlap',
  'event-overlap',
  'endpoint-concurrency',
  'org-concurrency',
  'rate-limit-arrivals',
  'rate-limit-starts',
  'ordering-overlap',
  'ordering-sequence',
  'pause-ignored',
  'pacing-stall',
  'pace-over-cut',
  'lost',
  'no-delivery',
  'not-terminal',
  'missing-reason',
  'duplicate',
  'slow-resume',
] as const;

/** One of {@link VIOLATION_KINDS}. */
export type ViolationKind = (typeof VIOLATION_KINDS)[number];

/** One broken promise: its kind, the delivery (or endpoint) it is about, and what was seen. */
export interface Violation {
  kind: ViolationKind;
  /** A delivery id, or `endpoint:<key>` when no single delivery is at fault. */
  id: string;
  detail: string;
}


/** When a request stops counting as in flight at the receiver. */
export function effectiveEnd(r: ReceiverRecord): number {
  if (r.answer !== 'closed-by-client') return r.answerMs;
  return Math.min(r.answerMs - CLIENT_CLOSE_TOLERANCE_MS, r.abandonedAtMs ?? Infinity);
}

/**
 * Requests of `sorted` (by arrival) that arrived while a request of another delivery was still in
 * flight, each with `holder`: of the requests before it, the one in flight longest. For "one at a
 * time" across deliveries: per ordering key, or per event across its redeliveries.
 */
export function crossDeliveryOverlaps(sorted: readonly ReceiverRecord[]): { request: ReceiverRecord; holder: ReceiverRecord }[] {
  const out: { request: ReceiverRecord; holder: ReceiverRecord }[] = [];
  let latestEnd: ReceiverRecord | null = null;
  for (const r of sorted) {
    if (latestEnd && latestEnd.deliveryId !== r.deliveryId && r.arrivalMs < effectiveEnd(latestEnd)) out.push({ request: r, holder: latestEnd });
    if (!latestEnd || effectiveEnd(r) > effectiveEnd(latestEnd)) latestEnd = r;
  }
  return out;
}

/** Peak of overlapping [arrival, end) intervals; ends sort before starts at the same time. Returns the peak and who was in flight then. */
export function peakInFlight(requests: readonly ReceiverRecord[]): { peak: number; at: number; ids: string[] } {
  const events: { t: number; d: 1 | -1; r: ReceiverRecord }[] = [];
  for (const r of requests) {
    const end = Math.max(r.arrivalMs, effectiveEnd(r));
    if (end <= r.arrivalMs) continue;
    events.push({ t: r.arrivalMs, d: 1, r }, { t: end, d: -1, r });
  }
  events.sort((a, b) => a.t - b.t || a.d - b.d);
  const open = new Set<ReceiverRecord>();
  let best = { peak: 0, at: 0, ids: [] as string[] };
  for (const e of events) {
    if (e.d === 1) open.add(e.r);
    else open.delete(e.r);
    if (open.size > best.peak) best = { peak: open.size, at: e.t, ids: [...open].map((r) => r.deliveryId) };
  }
  return best;
}

/** Most timestamps in any window [t, t + RATE_WINDOW_MS), and the indexes where that window starts and ends. */
export function peakInWindow(sortedTimes: readonly number[]): { count: number; from: number; to: number } {
  let best = { count: 0, from: 0, to: 0 };
  let j = 0;
  for (let i = 0; i < sortedTimes.length; i++) {
    if (j < i) j = i;
    while (j < sortedTimes.length && (sortedTimes[j] as number) < (sortedTimes[i] as number) + RATE_WINDOW_MS) j++;
    if (j - i > best.count) best = { count: j - i, from: i, to: j };
  }
  return best;
}

/** `items` grouped by `key`, each group in input order. */
export function groupBy<T, K>(items: readonly T[], key: (t: T) => K): Map<K, T[]> {
  const out = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = out.get(k);
    if (list) list.push(item);
    else out.set(k, [item]);
  }
  return out;
}

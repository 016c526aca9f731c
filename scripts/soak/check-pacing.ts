/**
 * The soak's adaptive-pacing checks (README, "Rate limits and adaptive pacing"): no attempt inside a
 * Retry-After pause, no delivery stalled behind a collapsed pace, no pace cut more often than the
 * slow-down signals allow. Pure.
 */
import { SCHEDULE_TOLERANCE_MS, SOAK_MAX_RESUME_MS, type ViolationKind } from './check-support.js';
import type { DeliveryLog, FaultKind, FaultRecord, ReceiverRecord, SoakRecords } from './records.js';

/** Under adaptive pacing a delivery's first attempt may wait this long after acceptance, with no fault in between. */
export const ADAPTIVE_MAX_FIRST_ATTEMPT_DELAY_MS = 30_000;
/** Starts this soon after a `429` + `Retry-After` answer may have been claimed before the sender saw it. */
export const PAUSE_GRACE_MS = 100;
/** Faults that may hold deliveries back (a delivery waiting across one is not a pacing collapse). */
export const DELAYING_FAULTS: readonly FaultKind[] = ['sender-sigkill', 'sender-sigterm', 'redis-restart', 'redis-primary-stop', 'redis-failover', 'redis-client-kill'];
/** A pace cut starts from this many requests a second per slot without a `rateLimit` (`PACE_ASSUMED_PER_SECOND_PER_SLOT`). */
export const PACE_ASSUMED_PER_SECOND_PER_SLOT = 10;
/** The floor of a cut rate, requests a second (`PACE_MIN_PER_SECOND`). */
export const PACE_MIN_PER_SECOND = 0.5;
/**
 * A `429` this close to the end of a Retry-After pause (receiver's clock) may be seen by the sender
 * after the pause ended, and cut again: counted as a new pause, so the allowed cuts are an upper bound.
 */
export const PAUSE_EDGE_MS = 250;
/** The pace read before a pause counts only this long after the previous pause began (its own cut is in by then). */
export const PACE_SETTLE_MS = 500;
/**
 * A rate inside a pause counts as cut twice only below this fraction of one cut (a second cut
 * gives half): a cut computed from a pace read a little stale (a raise lost) is not one.
 */
export const PACE_OVERCUT_FACTOR = 0.75;
/** README, adaptive pacing: one cut per window; an overload answer to a request sent this long or more after the last cut cuts again. */
export const PACE_CUT_WINDOW_MS = 1000;
/** The pace before a pause is the lowest read in this long before it. */
export const PACE_BEFORE_WINDOW_MS = 1000;

/** What {@link checkPacing} measures, per adaptive endpoint. */
export interface PacingMetrics {
  /** Longest acceptance → first attempt, ms. */
  adaptiveMaxFirstAttemptDelayMs: Record<string, number>;
  /** The lowest pace sampled (null: none sampled). */
  lowestPace: Record<string, { perSecond: number | null; concurrency: number } | null>;
  /** Slow-down signals that may cut the pace: Retry-After pauses plus timeouts (an upper bound). */
  allowedCuts: Record<string, number>;
  /** Starts inside a Retry-After pause whose storing time is unknown, excused because a Redis fault may have delayed storing it ({@link STORE_DELAYING_FAULTS}). */
  pausesStoredLate: Record<string, number>;
}

/** Faults of Redis that can delay the write of an attempt's outcome (its finish is retried once Redis answers). */
export const STORE_DELAYING_FAULTS: readonly FaultKind[] = ['redis-restart', 'redis-primary-stop', 'redis-failover', 'redis-client-kill'];
/** A Redis fault delays writes this long past its restore (a primary's replica taking over, a restarted server loading). */
export const STORE_DELAY_MS = 5000;

/** Whether a fault of {@link STORE_DELAYING_FAULTS} began before `toMs` and lasted (restored + {@link STORE_DELAY_MS}) past `fromMs`. */
export function storeDelayingFault(faults: readonly FaultRecord[], fromMs: number, toMs: number): boolean {
  return faults.some((f) => STORE_DELAYING_FAULTS.includes(f.kind) && f.atMs <= toMs && (f.restoredAtMs ?? f.atMs) + STORE_DELAY_MS >= fromMs);
}

/**
 * The Retry-After pauses the receiver asked of an endpoint, as [from, until] spans (receiver's
 * clock: from its answer, for its `Retry-After`), merged and sorted.
 */
export function pauseSpans(requests: readonly ReceiverRecord[]): { fromMs: number; untilMs: number }[] {
  const spans = requests
    .filter((r) => r.answer === 429 && r.retryAfterS !== null && r.retryAfterS > 0)
    .map((r) => ({ fromMs: r.answerMs, untilMs: r.answerMs + (r.retryAfterS ?? 0) * 1000 }))
    .sort((a, b) => a.fromMs - b.fromMs);
  const merged: { fromMs: number; untilMs: number }[] = [];
  for (const s of spans) {
    const last = merged[merged.length - 1];
    if (last && s.fromMs <= last.untilMs) last.untilMs = Math.max(last.untilMs, s.untilMs);
    else merged.push({ ...s });
  }
  return merged;
}

/** How much of `fromMs`..`toMs` the merged `spans` cover, ms. */
export function coveredMs(spans: readonly { fromMs: number; untilMs: number }[], fromMs: number, toMs: number): number {
  let total = 0;
  for (const s of spans) total += Math.max(0, Math.min(s.untilMs, toMs) - Math.max(s.fromMs, fromMs));
  return total;
}

/**
 * Checks every `pacing: "adaptive"` endpoint of `records`: `deliveries` is the delivery log,
 * `byEndpoint` the receivers' records by endpoint key, `acceptedAt` when each delivery's event was
 * posted. Violations go to `add`.
 */
export function checkPacing(
  records: SoakRecords,
  deliveries: readonly DeliveryLog[],
  byEndpoint: ReadonlyMap<string, ReceiverRecord[]>,
  acceptedAt: ReadonlyMap<string, number>,
  add: (kind: ViolationKind, id: string, detail: string) => void,
): PacingMetrics {
  const adaptiveMaxFirstAttemptDelayMs: Record<string, number> = {};
  const lowestPace: PacingMetrics['lowestPace'] = {};
  const allowedCuts: Record<string, number> = {};
  const pausesStoredLate: Record<string, number> = {};
  for (const endpoint of records.endpoints) {
    if (endpoint.pacing !== 'adaptive') continue;
    const mine = deliveries.filter((d) => d.endpointKey === endpoint.key);
    const starts = mine.flatMap((d) => d.attempts.map((a) => ({ t: a.startedAtMs, id: d.id }))).sort((a, b) => a.t - b.t);
    for (const r of byEndpoint.get(endpoint.key) ?? []) {
      if (r.answer !== 429 || r.retryAfterS === null) continue;
      // The pause runs from when Postern recorded the answer: when the finish script stored it
      // (Redis's clock, from the live feed), else the end of that attempt in the log (the sender's
      // clock, as attempt starts are). A busy sender may read the answer a while after the receiver
      // wrote it and store it a while after that; a claim that ran before it was stored could not
      // see it. It lasts Retry-After from the attempt's end, as the sender computed it (`nextPace`).
      const answered = records.deliveries.get(r.deliveryId)?.attempts.find((a) => a.number === r.attempt && a.finishedAtMs >= r.arrivalMs)?.finishedAtMs;
      const recorded = records.outcomeRecordedAt?.[`${r.deliveryId}.${r.attempt}`];
      const from = Math.max(r.answerMs, recorded ?? answered ?? r.answerMs) + PAUSE_GRACE_MS;
      const until = Math.max(r.answerMs, answered ?? r.answerMs) + r.retryAfterS * 1000 - SCHEDULE_TOLERANCE_MS;
      for (const s of starts) {
        if (s.t < from || s.t >= until) continue;
        // The pause holds from when it is stored: without the time it was (its feed entry lost), a
        // Redis fault between the answer and the start (the finish that stores it retried after a
        // restart, a failover, a killed connection) may have let a claim in before it. Counted
        // apart, not a violation.
        if (recorded === undefined && storeDelayingFault(records.faults, from - PAUSE_GRACE_MS, s.t)) {
          pausesStoredLate[endpoint.key] = (pausesStoredLate[endpoint.key] ?? 0) + 1;
          continue;
        }
        add('pause-ignored', s.id, `started ${until + SCHEDULE_TOLERANCE_MS - s.t} ms before the end of the ${r.retryAfterS}-s Retry-After pause answered to ${r.deliveryId}`);
      }
    }
    let worst = 0;
    for (const d of mine) {
      const first = d.attempts.find((a) => a.number === 1);
      const accepted = acceptedAt.get(d.id);
      if (!first || accepted === undefined) continue;
      const delay = first.startedAtMs - accepted;
      worst = Math.max(worst, delay);
      const faultBetween = records.faults.some((f) => DELAYING_FAULTS.includes(f.kind) && f.atMs <= first.startedAtMs && (f.restoredAtMs ?? f.atMs) + SOAK_MAX_RESUME_MS * 6 >= accepted);
      if (delay > ADAPTIVE_MAX_FIRST_ATTEMPT_DELAY_MS && !faultBetween) add('pacing-stall', d.id, `first attempt ${delay} ms after acceptance (limit ${ADAPTIVE_MAX_FIRST_ATTEMPT_DELAY_MS} ms), no fault nearby`);
    }
    adaptiveMaxFirstAttemptDelayMs[endpoint.key] = worst;
    // Pace (README): a 429 or 503 halves rate and concurrency; answers to requests sent less than a
    // window after the cut (in flight then, or sent while the receiver still counted the old ones)
    // do not cut again; successes only raise.
    // So from the first 429 of a pause until it ends, the pace is at least half what it was just
    // before (a timeout in between cuts too: not checked then). Pauses are grouped from the
    // receiver's 429s: one joins the current pause when it was answered inside it or its request
    // arrived before the pause's first 429 was answered; one answered within PAUSE_EDGE_MS of the
    // end starts a new one (the sender may have seen the pause over).
    const answers = [...(byEndpoint.get(endpoint.key) ?? [])].sort((a, b) => a.answerMs - b.answerMs);
    const pauses: { startMs: number; endMs: number; answers: number }[] = [];
    for (const r of answers) {
      if (r.answer !== 429 && r.answer !== 503) continue;
      const last = pauses[pauses.length - 1];
      const endMs = r.answerMs + (r.retryAfterS ?? 0) * 1000;
      if (last && (r.answerMs < last.endMs - PAUSE_EDGE_MS || r.arrivalMs < last.startMs)) {
        last.answers++;
        last.endMs = Math.max(last.endMs, endMs);
      } else pauses.push({ startMs: r.answerMs, endMs, answers: 1 });
    }
    const timeouts = answers.filter((r) => r.answer === 'closed-by-client').map((r) => r.answerMs);
    const samples = records.paceSamples.filter((s) => s.endpointKey === endpoint.key).sort((a, b) => a.atMs - b.atMs);
    const start = { perSecond: endpoint.rateLimit?.perSecond ?? PACE_ASSUMED_PER_SECOND_PER_SLOT * endpoint.perEndpoint, concurrency: endpoint.perEndpoint };
    let lowest: { perSecond: number | null; concurrency: number } | null = null;
    for (const s of samples) if (!lowest || (s.perSecond ?? Infinity) < (lowest.perSecond ?? Infinity)) lowest = { perSecond: s.perSecond, concurrency: s.concurrency };
    for (const [i, pause] of pauses.entries()) {
      const settledFrom = i > 0 ? pauses[i - 1]!.startMs + PACE_SETTLE_MS : -Infinity;
      // The lowest pace of the last second before the pause: a raise that a sender's cut overwrote
      // (two senders updating the pace at once) is not counted as a second cut.
      const window = samples.filter((s) => s.atMs < pause.startMs && s.atMs > Math.max(settledFrom, pause.startMs - PACE_BEFORE_WINDOW_MS));
      const before = window[window.length - 1];
      if (!before) continue;
      const from = {
        perSecond: Math.min(...window.map((s) => s.perSecond ?? start.perSecond)),
        concurrency: Math.min(...window.map((s) => s.concurrency)),
      };
      const minRate = Math.max(PACE_MIN_PER_SECOND, from.perSecond / 2);
      const minConcurrency = Math.max(1, Math.floor(from.concurrency / 2));
      const inside = samples.filter((s) => s.atMs > pause.startMs && s.atMs < pause.endMs - PAUSE_EDGE_MS);
      // 0.01: the API rounds the rate to two decimals.
      // The law cuts once per window: an overload answer to a request sent a window or more after
      // the pause's first one is a new signal (the receiver still refuses at the lower pace), and
      // may cut again; a second cut is a violation only before any such answer.
      const newSignal = (s: { atMs: number }) => answers.some((r) => (r.answer === 429 || r.answer === 503) && r.arrivalMs >= pause.startMs + PACE_CUT_WINDOW_MS - SCHEDULE_TOLERANCE_MS && r.answerMs <= s.atMs);
      const bad = inside.find((s) => !timeouts.some((t) => t > before.atMs && t <= s.atMs) && !newSignal(s) && ((s.perSecond !== null && s.perSecond < minRate * PACE_OVERCUT_FACTOR - 0.01) || s.concurrency < minConcurrency));
      if (!bad) continue;
      add('pace-over-cut', `endpoint:${endpoint.key}`, `pace ${bad.perSecond}/s × ${bad.concurrency} at ${new Date(bad.atMs).toISOString()}, inside the Retry-After pause that began ${bad.atMs - pause.startMs} ms before (${pause.answers} answer(s) 429/503 in it): one cut from ${from.perSecond}/s × ${from.concurrency} allows ${Math.round(minRate * 100) / 100}/s × ${minConcurrency} (rate slack ×${PACE_OVERCUT_FACTOR})`);
    }
    lowestPace[endpoint.key] = lowest;
    allowedCuts[endpoint.key] = pauses.length + timeouts.length;
  }
  return { adaptiveMaxFirstAttemptDelayMs, lowestPace, allowedCuts, pausesStoredLate };
}

import type { Policy, RateLimit } from './policy.js';

/**
 * An endpoint's current pace under `pacing: "adaptive"`: the request rate and the concurrency it is
 * allowed now, at most the policy's limits, when a Retry-After pause ends, and what the law needs to
 * remember between answers (when it last cut, when it last changed the rate, the rate to recover
 * to). Stored on the endpoint (JSON) and applied by the claim step; absent = the policy's limits, no
 * pause. Paces stored before `cutAt`, `changedAt` and `goodPerSecond` existed read as null there.
 */
export interface Pace {
  /** Requests per second allowed now; null = no rate bound (the policy has none and nothing was cut, or the rate climbed back to {@link paceCeiling}). */
  perSecond: number | null;
  /** Attempts in flight allowed now, 1..`concurrency.perEndpoint` (fractional: raised a little per success; the claim uses its floor). */
  concurrency: number;
  /** Until when (epoch ms) the whole endpoint waits, after a 429/503 with Retry-After; null = not paused. */
  pausedUntil: number | null;
  /** When (epoch ms) the last cut was made; null = none remembered. Answers to attempts started before `cutAt + PACE_CUT_WINDOW_MS` do not cut again. */
  cutAt?: number | null;
  /** When (epoch ms) the rate was last cut or raised: a raise grows the rate by the time since then. */
  changedAt?: number | null;
  /**
   * The rate fast recovery climbs back to, requests per second: {@link PACE_GOOD_FACTOR} × the rate
   * in force at the last cut that came after successes (the last rate that worked, a little under
   * the one that drew the 429). null = unknown (the endpoint ran without a rate bound): recovery is
   * fast all the way to {@link paceCeiling}.
   */
  goodPerSecond?: number | null;
}

/** What an attempt's answer says about the receiver's load: `slow-down` (429, 503, timeout), `ok` (2xx), `neutral` (anything else). */
export type PaceSignal = 'slow-down' | 'ok' | 'neutral';

/** The multiplicative cut of rate and concurrency on a slow-down signal (halved). */
export const PACE_CUT_FACTOR = 0.5;
/** The lowest rate a cut goes down to, requests per second. */
export const PACE_MIN_PER_SECOND = 0.5;
/**
 * The rate a first cut starts from when the endpoint runs without a rate bound, requests per second
 * per slot of concurrency: an endpoint with 4 slots is taken to have run at 40/s.
 */
export const PACE_ASSUMED_PER_SECOND_PER_SLOT = 10;
/**
 * The ceiling of the pace without a policy `rateLimit`, requests per second per slot of concurrency
 * (400/s at 4 slots): recovery climbs to it step by step, and only there is the rate bound lifted.
 * At 100/s per slot the concurrency bound alone keeps the rate there for any receiver that takes 10
 * ms or more to answer, so the lift adds no burst for those.
 */
export const PACE_MAX_PER_SECOND_PER_SLOT = 100;
/**
 * How long after a cut the receiver may still be counting requests sent before it, ms: a slow-down
 * answer to an attempt started before `cutAt` plus this does not cut again (one cut per window; a
 * receiver limiting per second keeps refusing for up to a second whatever the new pace is). Such an
 * answer may still extend a Retry-After pause.
 */
export const PACE_CUT_WINDOW_MS = 1000;
/** The share of the rate in force at a cut that fast recovery climbs back to (`goodPerSecond`). */
export const PACE_GOOD_FACTOR = 0.75;
/**
 * Beyond `goodPerSecond` the rate grows additively by this share of `goodPerSecond` per second of
 * successes (at least 1/s per second): 10 %, so a receiver a little faster than the last good rate
 * is found within seconds while overshoots stay small.
 */
export const PACE_PROBE_RATIO = 0.1;
/** A Retry-After pause lasts at most this long, ms (1 hour): a receiver cannot stop an endpoint for days. */
export const PACE_MAX_PAUSE_MS = 60 * 60 * 1000;

/**
 * Classifies an attempt's outcome for pacing: a 429 or 503 answer or a timeout asks to slow down,
 * a 2xx lets the pace rise, anything else (other errors, connection failures) leaves it alone.
 */
export function paceSignalOf(outcome: { error: string | null }): PaceSignal {
  if (outcome.error === null) return 'ok';
  if (outcome.error === 'http_429' || outcome.error === 'http_503' || outcome.error === 'timeout') return 'slow-down';
  return 'neutral';
}

/** The pace at the policy's limits: what an endpoint without a stored pace runs at. */
export function fullPace(policy: Pick<Policy, 'concurrency' | 'rateLimit'>): Pace {
  return { perSecond: policy.rateLimit?.perSecond ?? null, concurrency: policy.concurrency.perEndpoint, pausedUntil: null };
}

/**
 * The highest rate the pace climbs to, requests per second: the policy's `rateLimit.perSecond`, or
 * without one {@link PACE_MAX_PER_SECOND_PER_SLOT} × `concurrency.perEndpoint`, where the bound is lifted.
 */
export function paceCeiling(policy: Pick<Policy, 'concurrency' | 'rateLimit'>): number {
  return policy.rateLimit?.perSecond ?? PACE_MAX_PER_SECOND_PER_SLOT * policy.concurrency.perEndpoint;
}

/**
 * The next pace after one attempt's answer (`outcome.startedAt`: when the attempt started, epoch ms;
 * default `nowMs`). The law:
 *
 * - **Cut, once per window.** A slow-down signal halves the rate and the concurrency
 *   ({@link PACE_CUT_FACTOR}; rate at least {@link PACE_MIN_PER_SECOND}, concurrency at least 1; no
 *   rate bound is first taken as {@link PACE_ASSUMED_PER_SECOND_PER_SLOT} per slot) and records
 *   `cutAt = nowMs` — unless the attempt started before `cutAt + PACE_CUT_WINDOW_MS` of the last
 *   cut: answers to requests in flight at the cut, or sent while the receiver still counted the old
 *   ones, are the same signal. A Retry-After (`retryAfterMs`, ≤ {@link PACE_MAX_PAUSE_MS}) on any
 *   slow-down answer pauses the endpoint until `nowMs + retryAfterMs` (the later pause wins).
 * - **Remember what worked.** A cut after successes (the rate was raised since the last cut, or
 *   there was none) sets `goodPerSecond = PACE_GOOD_FACTOR × the rate cut from` (null when the
 *   endpoint had no rate bound: unknown); cuts in a row with no success between keep it.
 * - **Recover fast, then probe.** A success raises the rate by the time `t` (s, at most 1) since the
 *   rate last changed: below `goodPerSecond` (or {@link paceCeiling} when unknown) multiplicatively,
 *   `rate × 2^t` (doubling per second of successes), up to it; from there additively,
 *   `rate + max(1, PACE_PROBE_RATIO × goodPerSecond) × t`. Concurrency rises by 1/concurrency per
 *   success. At {@link paceCeiling} the rate is the policy's (without a `rateLimit`, the bound is
 *   lifted: by then it is far above what the slots can use for most receivers). Successes of
 *   attempts started before the last cut change nothing.
 *
 * Because the rate changes step by step and the claim step spaces requests by it, a waiting backlog
 * (and the deliveries held by a pause, when it ends) leaves at the pace, never in one burst.
 *
 * Returns the new pace, `null` when it is back at the policy's limits with no pause (nothing to
 * store), or `undefined` when nothing changes (no adaptive pacing, a neutral signal, a success at
 * full pace, or an answer the last cut already accounts for).
 *
 * @param pace - the stored pace, or null (the policy's limits)
 * @param nowMs - now, epoch ms
 */
export function nextPace(
  pace: Pace | null,
  outcome: { signal: PaceSignal; retryAfterMs?: number | undefined; startedAt?: number | undefined },
  nowMs: number,
  policy: Pick<Policy, 'concurrency' | 'rateLimit' | 'pacing'>,
): Pace | null | undefined {
  if (policy.pacing !== 'adaptive' || outcome.signal === 'neutral') return undefined;
  const full = fullPace(policy);
  const ceiling = paceCeiling(policy);
  const current = pace ?? full;
  const cutAt = current.cutAt ?? null;
  const changedAt = current.changedAt ?? null;
  const startedAt = outcome.startedAt ?? nowMs;
  if (outcome.signal === 'slow-down') {
    const retryAfterMs = outcome.retryAfterMs === undefined ? null : Math.min(Math.max(0, outcome.retryAfterMs), PACE_MAX_PAUSE_MS);
    const pausedUntil = Math.max(current.pausedUntil ?? 0, retryAfterMs === null ? 0 : nowMs + retryAfterMs) || null;
    if (cutAt !== null && startedAt < cutAt + PACE_CUT_WINDOW_MS) {
      return pace !== null && pausedUntil !== current.pausedUntil ? { ...pace, pausedUntil } : undefined;
    }
    const rate = Math.min(current.perSecond ?? PACE_ASSUMED_PER_SECOND_PER_SLOT * full.concurrency, ceiling);
    const afterSuccesses = cutAt === null || (changedAt !== null && changedAt > cutAt);
    const goodPerSecond = afterSuccesses ? (current.perSecond === null ? null : rate * PACE_GOOD_FACTOR) : (current.goodPerSecond ?? null);
    return {
      perSecond: Math.max(PACE_MIN_PER_SECOND, rate * PACE_CUT_FACTOR),
      concurrency: Math.max(1, Math.floor(current.concurrency * PACE_CUT_FACTOR)),
      pausedUntil,
      cutAt: nowMs,
      changedAt: nowMs,
      goodPerSecond,
    };
  }
  if (pace === null || (cutAt !== null && startedAt < cutAt)) return undefined;
  const pausedUntil = pace.pausedUntil !== null && pace.pausedUntil > nowMs ? pace.pausedUntil : null;
  const concurrency = Math.min(full.concurrency, pace.concurrency + 1 / pace.concurrency);
  let perSecond = pace.perSecond;
  let changed = changedAt;
  if (perSecond !== null) {
    // A pace stored without `changedAt` grows by one success's worth of time.
    const t = Math.min(1, Math.max(0, changedAt === null ? 1 / perSecond : (nowMs - changedAt) / 1000));
    const good = Math.min(pace.goodPerSecond ?? ceiling, ceiling);
    const raised = perSecond < good ? Math.min(good, perSecond * 2 ** t) : perSecond + Math.max(1, PACE_PROBE_RATIO * good) * t;
    perSecond = raised >= ceiling ? full.perSecond : raised;
    changed = nowMs;
  }
  if (perSecond === full.perSecond && concurrency >= full.concurrency && pausedUntil === null) return null;
  return { perSecond, concurrency, pausedUntil, cutAt, changedAt: changed, goodPerSecond: pace.goodPerSecond ?? null };
}

/** The limits the claim step applies now: concurrency slots and the rate (null = no rate bound). */
export interface EffectiveLimits {
  perEndpoint: number;
  rate: RateLimit | null;
  /** The endpoint is paused until then (epoch ms), or null. */
  pausedUntil: number | null;
}

/**
 * The limits an endpoint runs under at `nowMs`: its policy's, narrowed by its pace when the policy
 * paces adaptively (a stored pace of another policy is ignored). Mirrors `claim-attempt.lua`.
 */
export function effectiveLimits(policy: Pick<Policy, 'concurrency' | 'rateLimit' | 'pacing'>, pace: Pace | null, nowMs: number): EffectiveLimits {
  const rate = policy.rateLimit ?? null;
  if (policy.pacing !== 'adaptive' || pace === null) return { perEndpoint: policy.concurrency.perEndpoint, rate, pausedUntil: null };
  const perSecond = pace.perSecond === null ? rate?.perSecond ?? null : Math.min(pace.perSecond, rate?.perSecond ?? Infinity);
  return {
    perEndpoint: Math.max(1, Math.min(policy.concurrency.perEndpoint, Math.floor(pace.concurrency))),
    rate: perSecond === null ? null : { perSecond, burst: rate?.burst ?? 0 },
    pausedUntil: pace.pausedUntil !== null && pace.pausedUntil > nowMs ? pace.pausedUntil : null,
  };
}

/**
 * One step of the generic cell rate algorithm (GCRA) the claim step runs per request
 * (`claim-attempt.lua` does the same arithmetic): requests are spaced `1000 / perSecond` ms apart,
 * with `burst` more allowed at once. `tatMs` is the stored theoretical arrival time (0 = none).
 * Returns `{allowed: true, tatMs}` with the new value to store, or `{allowed: false, retryAtMs}`:
 * the earliest time the request conforms. In any window of one second at most
 * `ceil(perSecond) + burst` requests are allowed.
 */
export function gcraStep(tatMs: number, nowMs: number, rate: RateLimit): { allowed: true; tatMs: number } | { allowed: false; retryAtMs: number } {
  const intervalMs = 1000 / rate.perSecond;
  const toleranceMs = rate.burst * intervalMs;
  const tat = Math.max(tatMs, nowMs);
  if (tat - nowMs > toleranceMs) return { allowed: false, retryAtMs: Math.ceil(tat - toleranceMs) };
  return { allowed: true, tatMs: tat + intervalMs };
}

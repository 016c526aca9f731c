import type { Policy, RateLimit } from './policy.js';

/**
 * An endpoint's current pace under `pacing: "adaptive"` (issue 13): the request rate and the
 * concurrency it is allowed now, at most the policy's limits, and when a Retry-After pause ends.
 * Stored on the endpoint and applied by the claim step; absent = the policy's limits, no pause.
 */
export interface Pace {
  /** Requests per second allowed now; null = no rate bound (the policy has none and nothing was cut). */
  perSecond: number | null;
  /** Attempts in flight allowed now, 1..`concurrency.perEndpoint` (fractional: raised a little per success; the claim uses its floor). */
  concurrency: number;
  /** Until when (epoch ms) the whole endpoint waits, after a 429/503 with Retry-After; null = not paused. */
  pausedUntil: number | null;
}

/** What an attempt's answer says about the receiver's load: `slow-down` (429, 503, timeout), `ok` (2xx), `neutral` (anything else). */
export type PaceSignal = 'slow-down' | 'ok' | 'neutral';

/** The multiplicative cut of rate and concurrency on a slow-down signal (halved). */
export const PACE_CUT_FACTOR = 0.5;
/** The lowest rate a cut goes down to, requests per second. */
export const PACE_MIN_PER_SECOND = 0.5;
/**
 * The rate a first cut starts from when the policy sets no `rateLimit`, requests per second per
 * slot of concurrency: an endpoint with 4 slots is assumed to have taken up to 40/s.
 */
export const PACE_ASSUMED_PER_SECOND_PER_SLOT = 10;
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
 * The next pace after one attempt (AIMD, issue 13). A slow-down signal halves the rate and the
 * concurrency (rate at least {@link PACE_MIN_PER_SECOND}, concurrency at least 1; an unbounded rate
 * is first taken as {@link PACE_ASSUMED_PER_SECOND_PER_SLOT} per slot), and a Retry-After on it
 * (`retryAfterMs`, ≤ {@link PACE_MAX_PAUSE_MS}) pauses the endpoint until `nowMs + retryAfterMs`.
 * A success raises the rate by 1/rate (about +1/s for each second of successes) and the
 * concurrency by 1/concurrency (about +1 per round of successes), up to the policy's limits. A cut
 * made while the endpoint was already paused does not cut again: the answers of requests sent
 * before the pause are one signal, not several.
 *
 * Returns the new pace, `null` when it is back at the policy's limits with no pause (nothing to
 * store), or `undefined` when nothing changes (no adaptive pacing, a neutral signal, or a success
 * at full pace).
 *
 * @param pace - the stored pace, or null (the policy's limits)
 * @param nowMs - now, epoch ms
 */
export function nextPace(
  pace: Pace | null,
  outcome: { signal: PaceSignal; retryAfterMs?: number | undefined },
  nowMs: number,
  policy: Pick<Policy, 'concurrency' | 'rateLimit' | 'pacing'>,
): Pace | null | undefined {
  if (policy.pacing !== 'adaptive' || outcome.signal === 'neutral') return undefined;
  const full = fullPace(policy);
  const current = pace ?? full;
  if (outcome.signal === 'slow-down') {
    const alreadyPaused = current.pausedUntil !== null && current.pausedUntil > nowMs;
    const retryAfterMs = outcome.retryAfterMs === undefined ? null : Math.min(Math.max(0, outcome.retryAfterMs), PACE_MAX_PAUSE_MS);
    const pausedUntil = Math.max(current.pausedUntil ?? 0, retryAfterMs === null ? 0 : nowMs + retryAfterMs) || null;
    if (alreadyPaused) return { ...current, pausedUntil };
    const rate = current.perSecond ?? PACE_ASSUMED_PER_SECOND_PER_SLOT * full.concurrency;
    return {
      perSecond: Math.max(PACE_MIN_PER_SECOND, rate * PACE_CUT_FACTOR),
      concurrency: Math.max(1, Math.floor(current.concurrency * PACE_CUT_FACTOR)),
      pausedUntil,
    };
  }
  if (pace === null) return undefined;
  const pausedUntil = pace.pausedUntil !== null && pace.pausedUntil > nowMs ? pace.pausedUntil : null;
  const concurrency = Math.min(full.concurrency, pace.concurrency + 1 / pace.concurrency);
  let perSecond: number | null = null;
  if (pace.perSecond !== null) {
    const raised = pace.perSecond + 1 / pace.perSecond;
    const ceiling = full.perSecond ?? PACE_ASSUMED_PER_SECOND_PER_SLOT * full.concurrency;
    // Back at the ceiling with no policy rate: the rate bound is lifted altogether.
    perSecond = raised >= ceiling ? full.perSecond : raised;
  }
  if (perSecond === full.perSecond && concurrency >= full.concurrency && pausedUntil === null) return null;
  return { perSecond, concurrency, pausedUntil };
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

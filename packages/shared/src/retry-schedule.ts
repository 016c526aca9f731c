import type { Policy } from './policy.js';

/** A source of uniform random numbers in [0, 1), like `Math.random`. Injected so jitter is testable. */
export type RandomFn = () => number;

/** Input of {@link retryDelayMs}. */
export interface RetryDelayInput {
  policy: Policy;
  /** The attempt that just failed, 1-based (BullMQ's `attemptsMade`). */
  failedAttemptNumber: number;
  /** Uniform in [0, 1); default `Math.random`. */
  random?: RandomFn;
  /**
   * The endpoint's Retry-After, ms from now (see {@link parseRetryAfterMs}).
   * The sender passes it for 429 and 503 answers only.
   */
  retryAfterMs?: number;
}

/** Smallest and largest wait a schedule can produce after one failed attempt, ms. */
export interface WaitBounds {
  minMs: number;
  maxMs: number;
}

function checkAttempt(failedAttemptNumber: number): void {
  if (!Number.isInteger(failedAttemptNumber) || failedAttemptNumber < 1) {
    throw new RangeError(`failedAttemptNumber must be an integer of 1 or more, got ${failedAttemptNumber}`);
  }
}

/** Entry `index` of a wait list; a list shorter than validation allows reuses its last entry. */
function entry(list: readonly number[], index: number): number {
  return list[Math.min(index, list.length - 1)] ?? 0;
}

function clampRandom(r: number): number {
  return Number.isFinite(r) ? Math.min(Math.max(r, 0), 1) : 0;
}

/** Uniform whole number in [lo, hi]; r = 1 (out of contract, but injectable) still lands on hi. */
function uniformInt(lo: number, hi: number, r: number): number {
  return Math.min(hi, lo + Math.floor(clampRandom(r) * (hi - lo + 1)));
}

/**
 * The range of the wait after failed attempt `failedAttemptNumber`, before any
 * Retry-After: fixed waits ± `jitterRatio`; `random-up-to` from the floor to
 * the cap; full jitter from 0 to `min(capMs, baseMs * 2^(n-1))`.
 *
 * @returns null when no attempt follows (`failedAttemptNumber >= maxAttempts`).
 * @throws RangeError when `failedAttemptNumber` is not an integer >= 1.
 */
export function waitBoundsMs(policy: Policy, failedAttemptNumber: number): WaitBounds | null {
  checkAttempt(failedAttemptNumber);
  if (failedAttemptNumber >= policy.maxAttempts) return null;
  const { schedule } = policy;
  const index = failedAttemptNumber - 1;
  switch (schedule.kind) {
    case 'fixed': {
      const waitMs = entry(schedule.waitsMs, index);
      return {
        minMs: Math.max(0, Math.round(waitMs * (1 - policy.jitterRatio))),
        maxMs: Math.round(waitMs * (1 + policy.jitterRatio)),
      };
    }
    case 'random-up-to':
      return { minMs: schedule.floorMs, maxMs: Math.max(schedule.floorMs, entry(schedule.capsMs, index)) };
    case 'exponential-full-jitter':
      return { minMs: 0, maxMs: Math.min(schedule.capMs, schedule.baseMs * 2 ** (failedAttemptNumber - 1)) };
  }
}

/**
 * How long to wait, after failed attempt `failedAttemptNumber`, before the
 * next attempt. The wait counts from the failure, as in custral.
 *
 * - `fixed`: `waitsMs[n-1] * (1 + jitterRatio * (2r - 1))`, rounded; with
 *   r = 0.5 or `jitterRatio` 0 it is the table value exactly.
 * - `random-up-to`: uniform whole ms in `[floorMs, max(floorMs, capsMs[n-1])]` (jitter-45h).
 * - `exponential-full-jitter`: uniform whole ms in
 *   `[0, min(capMs, baseMs * 2^(n-1))]` (kestrel).
 *
 * With `retryAfter: 'honour'` and `retryAfterMs` given, the result is
 * `retryAfterMs` clamped to `[wait, 2 × wait]`: a server may ask for more
 * time, but never for an earlier retry or an unbounded delay.
 *
 * @returns whole ms >= 0, or null when the attempt budget is spent
 *   (`failedAttemptNumber >= maxAttempts`).
 * @throws RangeError when `failedAttemptNumber` is not an integer >= 1.
 */
export function retryDelayMs({ policy, failedAttemptNumber, random = Math.random, retryAfterMs }: RetryDelayInput): number | null {
  const bounds = waitBoundsMs(policy, failedAttemptNumber);
  if (bounds === null) return null;
  const { schedule } = policy;
  let waitMs: number;
  if (schedule.kind === 'fixed') {
    const baseMs = entry(schedule.waitsMs, failedAttemptNumber - 1);
    const r = clampRandom(random());
    waitMs = Math.max(0, Math.round(baseMs * (1 + policy.jitterRatio * (2 * r - 1))));
  } else {
    waitMs = uniformInt(bounds.minMs, bounds.maxMs, random());
  }
  if (policy.retryAfter === 'honour' && retryAfterMs !== undefined && Number.isFinite(retryAfterMs)) {
    waitMs = Math.round(Math.min(Math.max(retryAfterMs, waitMs), 2 * waitMs));
  }
  return waitMs;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAY_SHORT = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const DAY_LONG = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTH = `(${MONTHS.join('|')})`;
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
// RFC 9110 §5.6.7: the preferred IMF-fixdate, plus the two obsolete forms recipients must accept.
const IMF_FIXDATE = new RegExp(`^${DAY_SHORT}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
const RFC850 = new RegExp(`^${DAY_LONG}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
const ASCTIME = new RegExp(`^${DAY_SHORT} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`);

function utcMs(year: number, month: string, day: number, h: number, m: number, s: number): number | undefined {
  const monthIndex = MONTHS.indexOf(month);
  if (monthIndex < 0 || h > 23 || m > 59 || s > 60) return undefined;
  const ms = Date.UTC(year, monthIndex, day, h, m, Math.min(s, 59));
  // Reject dates that roll over, such as 31 Feb.
  return new Date(ms).getUTCDate() === day ? ms : undefined;
}

function parseHttpDate(text: string, nowMs: number): number | undefined {
  let match = IMF_FIXDATE.exec(text);
  if (match) {
    const [, d, mon, y, h, m, s] = match;
    return utcMs(Number(y), mon as string, Number(d), Number(h), Number(m), Number(s));
  }
  match = RFC850.exec(text);
  if (match) {
    const [, d, mon, yy, h, m, s] = match;
    // Two-digit year: the century that puts it no more than 50 years ahead (RFC 9110).
    const nowYear = new Date(nowMs).getUTCFullYear();
    let year = Math.floor(nowYear / 100) * 100 + Number(yy);
    if (year > nowYear + 50) year -= 100;
    return utcMs(year, mon as string, Number(d), Number(h), Number(m), Number(s));
  }
  match = ASCTIME.exec(text);
  if (match) {
    const [, mon, d, h, m, s, y] = match;
    return utcMs(Number(y), mon as string, Number((d as string).trim()), Number(h), Number(m), Number(s));
  }
  return undefined;
}

/**
 * Reads a Retry-After header (RFC 9110 §10.2.3): delay-seconds or an
 * HTTP-date (IMF-fixdate, RFC 850 or asctime form).
 *
 * @param header - the raw header value, or undefined when absent.
 * @param nowMs - the receiving clock, Unix epoch ms (to turn a date into a delay).
 * @returns the delay in ms from `nowMs`; 0 for a date already past;
 *   undefined when absent, malformed, negative or too large to represent.
 */
export function parseRetryAfterMs(header: string | undefined, nowMs: number): number | undefined {
  if (typeof header !== 'string') return undefined;
  const text = header.trim();
  if (/^\d+$/.test(text)) {
    const ms = Number(text) * 1000;
    return Number.isSafeInteger(ms) ? ms : undefined;
  }
  const atMs = parseHttpDate(text, nowMs);
  if (atMs === undefined || !Number.isFinite(atMs)) return undefined;
  return Math.max(0, atMs - nowMs);
}

/** One row of {@link policyTimeline}. */
export interface TimelineEntry {
  /** Attempt number, 1-based. */
  attempt: number;
  /** Earliest start, ms after the first attempt. */
  earliestMs: number;
  /** Latest start, ms after the first attempt. */
  latestMs: number;
}

/**
 * When each attempt can start, relative to the first, for
 * `GET /v1/policies/:name/timeline`. Attempt 1 is at 0; each later one adds
 * the smallest and largest wait of {@link waitBoundsMs}. Attempt durations and
 * Retry-After are left out (a timed-out attempt shifts everything after it
 * by up to `timeout.ms`).
 *
 * @returns `maxAttempts` rows.
 */
export function policyTimeline(policy: Policy): TimelineEntry[] {
  const rows: TimelineEntry[] = [{ attempt: 1, earliestMs: 0, latestMs: 0 }];
  let earliestMs = 0;
  let latestMs = 0;
  for (let failed = 1; failed < policy.maxAttempts; failed++) {
    const bounds = waitBoundsMs(policy, failed);
    if (bounds === null) break;
    earliestMs += bounds.minMs;
    latestMs += bounds.maxMs;
    rows.push({ attempt: failed + 1, earliestMs, latestMs });
  }
  return rows;
}

import type { RateLimit } from './policy.js';

/**
 * How late after its turn a rate-limited request may still be sent, ms. Turns are spaced for one
 * second plus this lag ({@link rateIntervalMs}), so requests sent at most this long after their
 * turns never exceed the bound in any window of one second where they are sent.
 */
export const RATE_SEND_LAG_MS = 25;

/**
 * How late the sender lets a request go without a new turn, ms: the rest of {@link RATE_SEND_LAG_MS}
 * is for the request to leave the process once the sender has decided to send it.
 */
export const RATE_SEND_CHECK_MS = 20;

/**
 * The spacing of an endpoint's rate-limit turns, ms: `(1000 + RATE_SEND_LAG_MS) / perSecond`, with
 * `burst` more turns allowed at once (a GCRA, `gcraStep` in pace.ts; `claim-attempt.lua` runs it).
 * With every request sent within {@link RATE_SEND_LAG_MS} of its turn, any window of one second
 * sees at most `ceil(perSecond) + burst` requests sent; the limiter runs about 2.4 % under
 * `perSecond` for it.
 */
export function rateIntervalMs(rate: Pick<RateLimit, 'perSecond'>): number {
  return (1000 + RATE_SEND_LAG_MS) / rate.perSecond;
}

/**
 * Whether an attempt about to be sent at `nowMs` is too late for the rate-limit turn it took at
 * `turnAtMs` (more than {@link RATE_SEND_CHECK_MS}): it must take a new turn (waiting for one) first,
 * or it could join the requests of the next second.
 */
export function isTurnStale(turnAtMs: number, nowMs: number): boolean {
  return nowMs - turnAtMs > RATE_SEND_CHECK_MS;
}

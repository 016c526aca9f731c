import type { RateLimit } from './policy.js';

/**
 * The sending lag a rate limit's turns are spaced for, ms: turns `(1000 + lag) / perSecond` apart
 * ({@link rateIntervalMs}), so that requests sent a little after their turns (up to
 * {@link allowedLatenessMs}) still never exceed the bound in any one-second window where they are
 * sent.
 */
export const RATE_SEND_LAG_MS = 25;

/**
 * Of {@link RATE_SEND_LAG_MS}, what the sender keeps for a request to leave the process once it
 * has decided to send it, ms.
 */
export const RATE_SEND_MARGIN_MS = 5;

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
 * How late after its turn a request of this rate may still leave without a new turn, ms: the
 * lateness that keeps `ceil(perSecond) + burst` as the bound of any one-second window, less
 * {@link RATE_SEND_MARGIN_MS}. Turns `(1000 + lag) / perSecond` apart allow a request to be
 * `(1000 + lag) × ceil(perSecond) / perSecond − 1000` ms late: 20 ms at 20/s, about 9 s at 0.1/s
 * (a slow rate's turns are far apart, so a late request cannot join the next one's second).
 */
export function allowedLatenessMs(rate: Pick<RateLimit, 'perSecond'>): number {
  return ((1000 + RATE_SEND_LAG_MS) * Math.ceil(rate.perSecond)) / rate.perSecond - 1000 - RATE_SEND_MARGIN_MS;
}

/**
 * Whether an attempt about to be sent at `nowMs` is too late for the rate-limit turn it took at
 * `turnAtMs` (more than {@link allowedLatenessMs}): it must take a new turn (waiting for one)
 * first, or it could join the requests of the next second.
 */
export function isTurnStale(turnAtMs: number, nowMs: number, rate: Pick<RateLimit, 'perSecond'>): boolean {
  return nowMs - turnAtMs > allowedLatenessMs(rate);
}

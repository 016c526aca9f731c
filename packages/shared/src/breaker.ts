import { countsAgainstEndpoint } from './error-codes.js';
import type { BreakerRule, Policy } from './policy.js';

/**
 * What one finished attempt does to its endpoint's failure streak:
 * `success` resets it, `failure` extends it, `none` leaves it as it is.
 */
export type HealthEffect = 'success' | 'failure' | 'none';

/** Input of {@link healthEffect}. */
export interface HealthEffectInput {
  policy: Policy;
  /** The attempt's error code, or null when it succeeded. */
  error: string | null;
  isTestEvent: boolean;
  /** True when this failure ended the delivery (`failed`: no attempt follows). */
  deliveryFailed: boolean;
}

/**
 * The streak rule of docs/architecture.md's breaker row. Any success resets the streak (jitter-45h and tourical).
 * A failure counts when {@link countsAgainstEndpoint} says so (never Postern's own `internal:*`
 * faults; only 4xx under tourical; test events only under vestiarion), and, for breakers that count
 * deliveries (kestrel), only when it ended the delivery. Policies without a breaker still keep
 * the count, so operators see it.
 */
export function healthEffect({ policy, error, isTestEvent, deliveryFailed }: HealthEffectInput): HealthEffect {
  if (error === null) return 'success';
  if (!countsAgainstEndpoint(error, policy, { isTestEvent })) return 'none';
  if (policy.breaker?.counts === 'deliveries' && !deliveryFailed) return 'none';
  return 'failure';
}

/** An endpoint's failure streak as stored. Times are epoch ms. */
export interface FailureStreak {
  consecutiveFailures: number;
  /** When the first failure of the current streak finished; null when there is no streak. */
  failureStreakStartedAt: number | null;
}

/**
 * Whether the breaker trips now: the streak has reached `threshold` failures **and** has lasted at
 * least `minStreakMs` (jitter-45h: 20 attempts and 72 h; tourical: 24 × 4xx and 24 h; kestrel and
 * vestiarion: the count alone). A null rule (custral) never trips.
 *
 * @param nowMs - the current time, epoch ms
 */
export function shouldTrip(rule: BreakerRule | null, streak: FailureStreak, nowMs: number): boolean {
  if (rule === null) return false;
  if (streak.consecutiveFailures < rule.threshold) return false;
  if (streak.failureStreakStartedAt === null) return rule.minStreakMs === 0;
  return nowMs - streak.failureStreakStartedAt >= rule.minStreakMs;
}

import { healthEffect, shouldTrip, type FailureStreak, type HealthEffect } from './breaker.js';
import { httpStatusCode, isRetried } from './error-codes.js';
import type { Policy } from './policy.js';
import { parseRetryAfterMs, retryDelayMs, type RandomFn } from './retry-schedule.js';

/**
 * The rules of one attempt, decided in one place (docs: "One attempt, end to end"). Each function
 * here is pure: it takes what the store read, the policy, `nowMs` and `random`, and returns a plan
 * that the sender carries out. Nothing here reads Redis or the network.
 *
 * The stages, in order: {@link planBeforeAttempt} (may the attempt be sent at all?),
 * {@link planAfterAttempt} (what the outcome does to the delivery and to the endpoint's health),
 * {@link planBreakerTrip} (does the endpoint's streak switch it off, and how?).
 */

/** What the claim step found when it did not begin an attempt, as far as the rules need it. */
export interface ClaimBlockers {
  /** The delivery's endpoint; null when it was deleted. */
  endpoint: {
    status: 'active' | 'paused' | 'disabled';
    /** Set when a breaker switched the endpoint off (a manual pause leaves it null). */
    disabledAt: number | null;
    policy: Pick<Policy, 'onEndpointInactive' | 'maxPayloadBytes'>;
  } | null;
  orgSuspended: boolean;
  /** The delivery's event type is in the org's `disabledEventTypes` (`isEventTypeDisabled`); absent = false. */
  eventTypeDisabled?: boolean;
  /** Byte length of the event's envelope; null when the event is gone. */
  envelopeBytes: number | null;
}

/**
 * Plan before an attempt:
 * - `send`: nothing stands in the way;
 * - `settle`: end (`cancelled`, `failed`) or hold the delivery with `reason`, sending nothing.
 */
export type BeforeAttemptPlan =
  | { kind: 'send' }
  | { kind: 'settle'; outcome: 'cancelled' | 'failed' | 'held'; reason: string };

/**
 * Whether a delivery may be attempted now, checked before every attempt.
 *
 * In order: a deleted endpoint cancels (`endpoint_deleted`); a suspended org (`org_suspended`) or
 * an endpoint that is paused or disabled (`endpoint_inactive`) cancels, holds or fails as the
 * policy's `onEndpointInactive` says (jitter-45h cancels, custral and vestiarion fail, standard,
 * tourical and kestrel hold). An endpoint switched off by its breaker cancels with
 * `breaker_tripped`, like the deliveries pending at the trip, so a bulk redelivery takes it too
 * (jitter-45h). An event type the org switched off (`disabledEventTypes`, issue 16) cancels with
 * `event_type_disabled` whatever the policy says: switching it back on does not replay. A payload over `maxPayloadBytes` is never sent and fails (`payload_too_large`,
 * tourical). A missing event is not decided here: the attempt records `internal:event_missing`.
 */
export function planBeforeAttempt(state: ClaimBlockers): BeforeAttemptPlan {
  const { endpoint } = state;
  if (endpoint === null) return { kind: 'settle', outcome: 'cancelled', reason: 'endpoint_deleted' };
  const inactiveReason = state.orgSuspended ? 'org_suspended' : endpoint.status !== 'active' ? 'endpoint_inactive' : null;
  if (inactiveReason !== null) {
    const action = endpoint.policy.onEndpointInactive;
    if (action === 'hold') return { kind: 'settle', outcome: 'held', reason: inactiveReason };
    if (action === 'fail') return { kind: 'settle', outcome: 'failed', reason: inactiveReason };
    const trippedByBreaker = inactiveReason === 'endpoint_inactive' && endpoint.disabledAt !== null;
    return { kind: 'settle', outcome: 'cancelled', reason: trippedByBreaker ? 'breaker_tripped' : inactiveReason };
  }
  if (state.eventTypeDisabled === true) return { kind: 'settle', outcome: 'cancelled', reason: 'event_type_disabled' };
  const { maxPayloadBytes } = endpoint.policy;
  if (maxPayloadBytes !== null && state.envelopeBytes !== null && state.envelopeBytes > maxPayloadBytes) {
    return { kind: 'settle', outcome: 'failed', reason: 'payload_too_large' };
  }
  return { kind: 'send' };
}

/** How one attempt ended, as the transport (or a fault before it) reported it. */
export interface AttemptOutcome {
  /** Error code of the attempt (see `ERROR_CODES`), or null when the endpoint answered 2xx. */
  error: string | null;
  /** The endpoint's Retry-After as ms from now, only for 429 and 503 answers; else undefined. */
  retryAfterMs?: number | undefined;
}

/**
 * What an HTTP answer means for the attempt: any 2xx is success; a 3xx the policy does not follow
 * is `redirect_not_followed` (every preset but tourical, which follows up to 3 hops; a 3xx that
 * still comes back after following is `http_3xx`); anything else is `http_<status>`. A 429 or 503
 * carries its Retry-After (seconds or an HTTP date, as ms from `nowMs`) for the schedule to weigh.
 *
 * @param retryAfter - the answer's Retry-After header, if any
 */
export function outcomeOfResponse(status: number, retryAfter: string | undefined, policy: Pick<Policy, 'redirects'>, nowMs: number): AttemptOutcome {
  if (status >= 200 && status < 300) return { error: null };
  const error = status >= 300 && status < 400 && !policy.redirects.follow ? 'redirect_not_followed' : httpStatusCode(status);
  return { error, retryAfterMs: status === 429 || status === 503 ? parseRetryAfterMs(retryAfter, nowMs) : undefined };
}

/** Input of {@link planAfterAttempt}. */
export interface AfterAttemptInput {
  policy: Policy;
  /** The attempt that just ended, 1-based. */
  attemptNumber: number;
  /** The delivery is a `webhook.test` event. */
  isTestEvent: boolean;
  outcome: AttemptOutcome;
  /** When the attempt ended, epoch ms: waits count from the failure (custral). */
  nowMs: number;
  random: RandomFn;
}

/**
 * What an attempt's outcome does:
 * - `next`: the delivery `succeeded`, is `failed` for good, or stays `pending` with its next attempt
 *   at `nextAttemptAt` (epoch ms) after `delayMs`;
 * - `health`: what the attempt does to the endpoint's failure streak.
 */
export interface AfterAttemptPlan {
  next:
    | { status: 'succeeded' }
    | { status: 'failed' }
    | { status: 'pending'; delayMs: number; nextAttemptAt: number };
  health: HealthEffect;
}

/**
 * Decides what follows an attempt: success ends the delivery; a failure is retried when its code is
 * retried under the policy (`isRetried`: never `payload_too_large` or an inactive endpoint; a test
 * event not under vestiarion; an unsafe URL not under standard or custral) and the attempt budget
 * allows (`retryDelayMs`, which honours Retry-After where the policy does), else the delivery fails.
 * The health effect follows `healthEffect` (breaker counting rules of each preset).
 */
export function planAfterAttempt(input: AfterAttemptInput): AfterAttemptPlan {
  const { policy, outcome, isTestEvent } = input;
  if (outcome.error === null) return { next: { status: 'succeeded' }, health: healthEffect({ policy, error: null, isTestEvent, deliveryFailed: false }) };
  const delayMs = isRetried(outcome.error, policy, { isTestEvent })
    ? retryDelayMs({ policy, failedAttemptNumber: input.attemptNumber, random: input.random, retryAfterMs: outcome.retryAfterMs })
    : null;
  const next: AfterAttemptPlan['next'] = delayMs === null ? { status: 'failed' } : { status: 'pending', delayMs, nextAttemptAt: input.nowMs + delayMs };
  return { next, health: healthEffect({ policy, error: outcome.error, isTestEvent, deliveryFailed: next.status === 'failed' }) };
}

/**
 * A breaker trip to carry out: the endpoint's new status, what happens to its pending deliveries,
 * whether only re-creating it brings it back (vestiarion), and the reason shown to operators.
 */
export interface BreakerTripPlan {
  status: 'paused' | 'disabled';
  pendingOnTrip: 'cancel' | 'hold' | 'fail';
  recreateRequired: boolean;
  /** E.g. `20 consecutive failed attempts`. */
  reason: string;
}

/**
 * Whether the endpoint's breaker trips after an attempt whose health effect was `health` left the
 * streak at `streak` (as stored after the attempt). Only a counted failure can trip it; the rule
 * itself is `shouldTrip` (count and minimum streak length per preset). Returns null when it does not.
 */
export function planBreakerTrip(policy: Policy, health: HealthEffect, streak: FailureStreak, nowMs: number): BreakerTripPlan | null {
  const rule = policy.breaker;
  if (rule === null || health !== 'failure' || !shouldTrip(rule, streak, nowMs)) return null;
  const unit = rule.counts === 'deliveries' ? 'failed deliveries' : rule.of === '4xx' ? '4xx answers' : 'failed attempts';
  return {
    status: rule.action === 'pause' ? 'paused' : 'disabled',
    pendingOnTrip: rule.pendingOnTrip,
    recreateRequired: rule.action === 'disable' && rule.reenable === 'recreate',
    reason: `${streak.consecutiveFailures} consecutive ${unit}`,
  };
}

/**
 * Whether an answer of `410 Gone` switches the endpoint off at once (the policy's `goneDisables`):
 * disabled, its pending deliveries settled as `onEndpointInactive` says (cancel, hold or fail),
 * re-enabled as the breaker says (`recreate` only where the breaker's `reenable` is `recreate`).
 * Returns null for any other error, or when the policy does not disable on 410 (every seed preset:
 * their rules retry a 4xx like any failure).
 */
export function planGoneTrip(policy: Policy, error: string | null): BreakerTripPlan | null {
  if (error !== 'http_410' || policy.goneDisables !== true) return null;
  return {
    status: 'disabled',
    pendingOnTrip: policy.onEndpointInactive,
    recreateRequired: policy.breaker?.reenable === 'recreate',
    reason: 'the endpoint answered 410 Gone',
  };
}

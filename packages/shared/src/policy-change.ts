import type { Policy } from './policy.js';

/** The parts of a policy that decide when a waiting delivery may start. */
type WaitingRules = Pick<Policy, 'concurrency' | 'rateLimit' | 'ordering' | 'pacing'>;

/**
 * What an endpoint's waiting deliveries must do after its policy changed, so the new limits apply
 * to them at once rather than when each would have looked again by itself (up to one old rate
 * interval, a pause, or the park safety delay later):
 * - `callLine`: the first of the endpoint's line (as many as the new limits leave room for) are
 *   called now; releases then call the rest as usual;
 * - `releaseKeyLines`: per-key ordering was switched off, so every delivery waiting for an earlier
 *   one of its ordering key is woken (each claims again under the new policy);
 * - `resetRate`: the rate limiter's state (its theoretical arrival time) is dropped, so a turn
 *   scheduled under the old rate does not hold back the new one;
 * - `clearPace`: the adaptive pace learnt under the old limits is dropped (back at the policy's).
 *
 * Returns null when nothing that gates waiting deliveries changed (schedule, timeout, breaker …).
 */
export interface PolicyChangePlan {
  callLine: boolean;
  releaseKeyLines: boolean;
  resetRate: boolean;
  clearPace: boolean;
}

/** Plans {@link PolicyChangePlan} for a policy going from `before` to `after`. Pure. */
export function planPolicyChange(before: WaitingRules, after: WaitingRules): PolicyChangePlan | null {
  const concurrency = before.concurrency.perEndpoint !== after.concurrency.perEndpoint || before.concurrency.perOrg !== after.concurrency.perOrg;
  const rate = JSON.stringify(before.rateLimit ?? null) !== JSON.stringify(after.rateLimit ?? null);
  const pacing = (before.pacing ?? 'none') !== (after.pacing ?? 'none');
  const releaseKeyLines = before.ordering === 'per-key' && after.ordering !== 'per-key';
  if (!concurrency && !rate && !pacing && !releaseKeyLines) return null;
  return { callLine: true, releaseKeyLines, resetRate: rate || pacing, clearPace: rate || pacing };
}

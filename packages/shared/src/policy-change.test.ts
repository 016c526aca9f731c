import { planPolicyChange } from './policy-change.js';

const base = { concurrency: { perEndpoint: 4, perOrg: 20 }, rateLimit: null, ordering: 'none' as const, pacing: 'none' as const };

test.each([
  ['nothing that gates waiting deliveries', {}, null],
  ['a rate limit removed', { rateLimit: null, was: { rateLimit: { perSecond: 0.1, burst: 0 } } }, { callLine: true, releaseKeyLines: false, resetRate: true, clearPace: true }],
  ['a rate limit changed', { rateLimit: { perSecond: 20, burst: 0 }, was: { rateLimit: { perSecond: 0.1, burst: 0 } } }, { callLine: true, releaseKeyLines: false, resetRate: true, clearPace: true }],
  ['more slots', { concurrency: { perEndpoint: 8, perOrg: 20 } }, { callLine: true, releaseKeyLines: false, resetRate: false, clearPace: false }],
  ['per-key ordering switched off', { ordering: 'none', was: { ordering: 'per-key' } }, { callLine: true, releaseKeyLines: true, resetRate: false, clearPace: false }],
  ['per-key ordering switched on (waiting deliveries are held at their next claim)', { ordering: 'per-key' }, null],
  ['adaptive pacing switched off', { pacing: 'none', was: { pacing: 'adaptive' } }, { callLine: true, releaseKeyLines: false, resetRate: true, clearPace: true }],
] as const)('%s', (_name, change, expected) => {
  const { was = {}, ...after } = change as Record<string, unknown> & { was?: Record<string, unknown> };
  expect(planPolicyChange({ ...base, ...was } as never, { ...base, ...after } as never)).toEqual(expected);
});

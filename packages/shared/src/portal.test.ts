import { PRESETS } from './presets.js';
import { checkPortalPolicyInput, endpointActions, endpointStatusSummary, policyChoiceLabel, retryLabel, spanInWords } from './portal.js';
import type { Policy } from './policy.js';

const preset = (name: string) => (PRESETS as Record<string, { policy: Policy }>)[name]!.policy;

describe('portal labels', () => {
  test('spans in words', () => {
    expect(spanInWords(30_000)).toBe('30 seconds');
    expect(spanInWords(600_000)).toBe('10 minutes');
    expect(spanInWords(5 * 3_600_000)).toBe('5 hours');
    expect(spanInWords(72 * 3_600_000)).toBe('3 days');
    expect(spanInWords(1_000)).toBe('1 second');
  });

  test('retry labels carry no preset id', () => {
    expect(retryLabel({ ...preset('standard'), maxAttempts: 1 })).toBe('No retries');
    const label = policyChoiceLabel(preset('standard'));
    expect(label).toMatch(/^Retries for up to \d+ (hours|days) \(8 attempts\) · Switched off after repeated failures$/);
    expect(policyChoiceLabel(preset('custral'))).toContain('Never switched off');
    for (const name of Object.keys(PRESETS)) expect(policyChoiceLabel(preset(name))).not.toMatch(/standard|custral|tourical|kestrel|vestiarion|jitter|seed/i);
  });

  test('state: paused by the breaker, since when, how many wait; actions the API accepts', () => {
    const s = endpointStatusSummary({ status: 'paused', disabledAt: 1000, disabledReason: '24 consecutive 4xx answers', policy: preset('tourical'), heldCount: 12 });
    expect(s).toEqual({ tone: 'warn', headline: 'Paused after repeated failures', since: 1000, waiting: 12, meanwhile: 'New deliveries wait and are sent when it is back.', actions: ['resume'] });
    expect(endpointStatusSummary({ status: 'paused', disabledAt: null, disabledReason: null, policy: preset('standard'), heldCount: 0 }).headline).toBe('Paused');
    expect(endpointStatusSummary({ status: 'disabled', disabledAt: 5, disabledReason: 'the endpoint answered 410 Gone', policy: preset('standard'), heldCount: 0 }).headline).toBe('Switched off: the URL answered 410 Gone');
    expect(endpointActions({ status: 'disabled', policy: preset('vestiarion') })).toEqual(['recreate']);
    expect(endpointActions({ status: 'disabled', policy: preset('kestrel') })).toEqual(['resume']);
    expect(endpointActions({ status: 'active', policy: preset('vestiarion') })).toEqual(['pause', 'send_test']);
  });

  test('portal policy input within the allowed choices', () => {
    const allowed = { presets: ['standard', 'tourical'], fields: ['maxAttempts' as const] };
    expect(checkPortalPolicyInput('standard', allowed)).toEqual({ ok: true });
    expect(checkPortalPolicyInput({ preset: 'tourical', maxAttempts: 3 }, allowed)).toEqual({ ok: true });
    expect(checkPortalPolicyInput('custral', allowed)).toMatchObject({ ok: false, reason: 'policy: this portal offers standard, tourical' });
    expect(checkPortalPolicyInput({ preset: 'standard', timeout: { ms: 1000, measures: 'whole-response' } }, allowed)).toMatchObject({ ok: false, reason: expect.stringContaining('policy.timeout') });
    expect(checkPortalPolicyInput({ maxAttempts: 3 }, allowed)).toMatchObject({ ok: false });
  });
});

import { outcomeOfResponse, planAfterAttempt, planBeforeAttempt, planBreakerTrip, type ClaimBlockers } from './attempt-plan.js';
import type { PresetName } from './policy.js';
import { PRESETS } from './presets.js';

/** The rules of one attempt, per preset, without Redis: each row is what a user of that preset sees. */

const T0 = 1_800_000_000_000;
const HOUR = 3_600_000;
const policy = (name: PresetName) => PRESETS[name].policy;
const half = () => 0.5;

describe('planBeforeAttempt: what stops an attempt before it is sent', () => {
  const state = (name: PresetName, over: Partial<NonNullable<ClaimBlockers['endpoint']>> = {}, rest: Partial<ClaimBlockers> = {}): ClaimBlockers => ({
    endpoint: { status: 'active', disabledAt: null, policy: policy(name), ...over },
    orgSuspended: false,
    envelopeBytes: 100,
    ...rest,
  });

  test.each([
    // preset, endpoint paused by hand → outcome
    ['standard', 'held'],
    ['custral', 'failed'],
    ['jitter-45h', 'cancelled'],
    ['tourical', 'held'],
    ['kestrel', 'held'],
    ['vestiarion', 'failed'],
  ] as const)('%s: a paused endpoint → %s (endpoint_inactive)', (name, outcome) => {
    expect(planBeforeAttempt(state(name, { status: 'paused' }))).toEqual({ kind: 'settle', outcome, reason: 'endpoint_inactive' });
  });

  test.each(['standard', 'custral', 'jitter-45h', 'tourical', 'kestrel', 'vestiarion'] as const)('%s: a deleted endpoint cancels (endpoint_deleted)', (name) => {
    expect(planBeforeAttempt(state(name, {}, { endpoint: null }))).toEqual({ kind: 'settle', outcome: 'cancelled', reason: 'endpoint_deleted' });
  });

  test('a suspended org settles like an inactive endpoint, with its own reason', () => {
    expect(planBeforeAttempt(state('jitter-45h', {}, { orgSuspended: true }))).toEqual({ kind: 'settle', outcome: 'cancelled', reason: 'org_suspended' });
    expect(planBeforeAttempt(state('standard', {}, { orgSuspended: true }))).toEqual({ kind: 'settle', outcome: 'held', reason: 'org_suspended' });
    expect(planBeforeAttempt(state('custral', {}, { orgSuspended: true }))).toEqual({ kind: 'settle', outcome: 'failed', reason: 'org_suspended' });
  });

  test('jitter-45h: an endpoint its breaker disabled cancels with breaker_tripped, so a bulk redelivery takes it', () => {
    expect(planBeforeAttempt(state('jitter-45h', { status: 'disabled', disabledAt: T0 }))).toEqual({ kind: 'settle', outcome: 'cancelled', reason: 'breaker_tripped' });
  });

  test('tourical: a payload over 1 MB is never sent and fails for good; others have no limit', () => {
    expect(planBeforeAttempt(state('tourical', {}, { envelopeBytes: 1_048_577 }))).toEqual({ kind: 'settle', outcome: 'failed', reason: 'payload_too_large' });
    expect(planBeforeAttempt(state('tourical', {}, { envelopeBytes: 1_048_576 }))).toEqual({ kind: 'send' });
    expect(planBeforeAttempt(state('standard', {}, { envelopeBytes: 50_000_000 }))).toEqual({ kind: 'send' });
  });

  test('an active endpoint with a missing event is sent: the attempt itself records internal:event_missing', () => {
    expect(planBeforeAttempt(state('standard', {}, { envelopeBytes: null }))).toEqual({ kind: 'send' });
  });
});

describe('outcomeOfResponse: what an answer means', () => {
  test.each([
    ['standard', 302, 'redirect_not_followed'],
    ['custral', 301, 'redirect_not_followed'],
    ['kestrel', 307, 'redirect_not_followed'],
    ['tourical', 302, 'http_302'],
    ['standard', 200, null],
    ['standard', 204, null],
    ['standard', 404, 'http_404'],
    ['standard', 500, 'http_500'],
  ] as const)('%s: %i → %s', (name, status, error) => {
    expect(outcomeOfResponse(status, undefined, policy(name), T0).error).toBe(error);
  });

  test('Retry-After is read only on 429 and 503', () => {
    expect(outcomeOfResponse(429, '7', policy('standard'), T0).retryAfterMs).toBe(7_000);
    expect(outcomeOfResponse(503, '2', policy('standard'), T0).retryAfterMs).toBe(2_000);
    expect(outcomeOfResponse(500, '7', policy('standard'), T0).retryAfterMs).toBeUndefined();
  });
});

describe('planAfterAttempt: retry, fail or succeed, and what it does to the endpoint', () => {
  const after = (name: PresetName, error: string | null, attemptNumber = 1, opts: { isTestEvent?: boolean; retryAfterMs?: number } = {}) =>
    planAfterAttempt({ policy: policy(name), attemptNumber, isTestEvent: opts.isTestEvent ?? false, outcome: { error, retryAfterMs: opts.retryAfterMs }, nowMs: T0, random: half });

  test('success ends the delivery and resets the streak', () => {
    expect(after('standard', null)).toEqual({ next: { status: 'succeeded' }, health: 'success' });
  });

  test.each([
    // preset, failed attempt, wait after it (ms) with random 0.5
    ['standard', 1, 5_000],
    ['custral', 1, 5_000],
    ['custral', 7, 18 * HOUR],
    ['tourical', 1, 60_000],
    ['vestiarion', 6, 12 * HOUR],
  ] as const)('%s: attempt %i fails with http_500 → next attempt after %i ms, counted from the failure', (name, attemptNumber, waitMs) => {
    expect(after(name, 'http_500', attemptNumber).next).toEqual({ status: 'pending', delayMs: waitMs, nextAttemptAt: T0 + waitMs });
  });

  test.each([
    ['standard', 8],
    ['custral', 8],
    ['jitter-45h', 8],
    ['tourical', 6],
    ['kestrel', 6],
    ['vestiarion', 7],
  ] as const)('%s: the last of %i attempts fails → the delivery fails', (name, maxAttempts) => {
    expect(policy(name).maxAttempts).toBe(maxAttempts);
    expect(after(name, 'http_500', maxAttempts).next).toEqual({ status: 'failed' });
  });

  test.each([
    ['standard', 'failed'],
    ['custral', 'failed'],
    ['jitter-45h', 'pending'],
    ['tourical', 'pending'],
    ['kestrel', 'pending'],
    ['vestiarion', 'pending'],
  ] as const)('%s: an unsafe URL → %s', (name, status) => {
    expect(after(name, 'unsafe_url:loopback').next.status).toBe(status);
  });

  test.each([
    ['standard', 'none'],
    ['jitter-45h', 'none'],
    ['tourical', 'none'],
    ['vestiarion', 'failure'],
  ] as const)('%s: what an unsafe URL does to the endpoint: %s (only vestiarion counts it)', (name, health) => {
    expect(after(name, 'unsafe_url:private').health).toBe(health);
  });

  test('vestiarion never retries a test event, and counts it; the others retry it and do not', () => {
    expect(after('vestiarion', 'http_500', 1, { isTestEvent: true })).toEqual({ next: { status: 'failed' }, health: 'failure' });
    expect(after('standard', 'http_500', 1, { isTestEvent: true })).toEqual({ next: { status: 'pending', delayMs: 5_000, nextAttemptAt: T0 + 5_000 }, health: 'none' });
  });

  test.each(['standard', 'custral', 'jitter-45h', 'tourical', 'kestrel', 'vestiarion'] as const)(
    "%s: Postern's own fault is retried and never charged to the endpoint",
    (name) => {
      const plan = after(name, 'internal:event_missing');
      expect(plan.next.status).toBe('pending');
      expect(plan.health).toBe('none');
    },
  );

  test('tourical counts only 4xx; kestrel counts a failure only when it ends the delivery', () => {
    expect(after('tourical', 'http_404').health).toBe('failure');
    expect(after('tourical', 'http_500').health).toBe('none');
    expect(after('tourical', 'dns_lookup_failed:ENOTFOUND').health).toBe('none');
    expect(after('kestrel', 'http_500', 1).health).toBe('none');
    expect(after('kestrel', 'http_500', 6).health).toBe('failure');
  });

  test('standard honours Retry-After within [wait, 2 × wait]; custral ignores it', () => {
    expect(after('standard', 'http_503', 1, { retryAfterMs: 8_000 }).next).toMatchObject({ delayMs: 8_000 });
    expect(after('standard', 'http_503', 1, { retryAfterMs: 60_000 }).next).toMatchObject({ delayMs: 10_000 });
    expect(after('custral', 'http_503', 1, { retryAfterMs: 60_000 }).next).toMatchObject({ delayMs: 5_000 });
  });

  test('payload_too_large and an inactive endpoint are never retried', () => {
    expect(after('standard', 'payload_too_large').next.status).toBe('failed');
    expect(after('standard', 'endpoint_inactive').next.status).toBe('failed');
  });
});

describe('planBreakerTrip: when the streak switches the endpoint off, and how', () => {
  const streak = (consecutiveFailures: number, ageMs: number) => ({ consecutiveFailures, failureStreakStartedAt: T0 - ageMs });

  test.each([
    ['standard', streak(20, 120 * HOUR), { status: 'disabled', pendingOnTrip: 'hold', recreateRequired: false, reason: '20 consecutive failed attempts' }],
    ['jitter-45h', streak(20, 72 * HOUR), { status: 'disabled', pendingOnTrip: 'cancel', recreateRequired: false, reason: '20 consecutive failed attempts' }],
    ['tourical', streak(24, 24 * HOUR), { status: 'paused', pendingOnTrip: 'hold', recreateRequired: false, reason: '24 consecutive 4xx answers' }],
    ['kestrel', streak(20, 0), { status: 'disabled', pendingOnTrip: 'hold', recreateRequired: false, reason: '20 consecutive failed deliveries' }],
    ['vestiarion', streak(20, 0), { status: 'disabled', pendingOnTrip: 'fail', recreateRequired: true, reason: '20 consecutive failed attempts' }],
  ] as const)('%s trips at its threshold and minimum streak', (name, s, plan) => {
    expect(planBreakerTrip(policy(name), 'failure', s, T0)).toEqual(plan);
  });

  test.each([
    ['standard', streak(20, 119 * HOUR)],
    ['jitter-45h', streak(19, 100 * HOUR)],
    ['tourical', streak(24, 23 * HOUR)],
    ['kestrel', streak(19, 0)],
    ['custral', streak(10_000, 1000 * HOUR)],
  ] as const)('%s does not trip yet (or ever)', (name, s) => {
    expect(planBreakerTrip(policy(name), 'failure', s, T0)).toBeNull();
  });

  test('only a counted failure trips: a success or an uncounted failure never does', () => {
    expect(planBreakerTrip(policy('kestrel'), 'none', streak(25, 0), T0)).toBeNull();
    expect(planBreakerTrip(policy('kestrel'), 'success', streak(25, 0), T0)).toBeNull();
  });
});

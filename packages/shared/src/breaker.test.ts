import { healthEffect, shouldTrip } from './breaker.js';
import { PRESETS } from './presets.js';
import type { PresetName } from './policy.js';

const HOUR = 3_600_000;
const T0 = 1_800_000_000_000;
const rule = (name: PresetName) => PRESETS[name].policy.breaker;

describe('shouldTrip with the minimum-streak rules', () => {
  test('jitter-45h: needs 20 failures AND 72 h', () => {
    expect(shouldTrip(rule('jitter-45h'), { consecutiveFailures: 19, failureStreakStartedAt: T0 }, T0 + 72 * HOUR)).toBe(false);
    expect(shouldTrip(rule('jitter-45h'), { consecutiveFailures: 20, failureStreakStartedAt: T0 }, T0 + 1 * HOUR)).toBe(false);
    expect(shouldTrip(rule('jitter-45h'), { consecutiveFailures: 20, failureStreakStartedAt: T0 }, T0 + 72 * HOUR)).toBe(true);
    expect(shouldTrip(rule('jitter-45h'), { consecutiveFailures: 20, failureStreakStartedAt: T0 }, T0 + 72 * HOUR - 1)).toBe(false);
  });
  test('tourical: 24 and 24 h', () => {
    expect(shouldTrip(rule('tourical'), { consecutiveFailures: 23, failureStreakStartedAt: T0 }, T0 + 48 * HOUR)).toBe(false);
    expect(shouldTrip(rule('tourical'), { consecutiveFailures: 24, failureStreakStartedAt: T0 }, T0 + 23 * HOUR)).toBe(false);
    expect(shouldTrip(rule('tourical'), { consecutiveFailures: 24, failureStreakStartedAt: T0 }, T0 + 24 * HOUR)).toBe(true);
  });
  test.each(['kestrel', 'vestiarion'] as const)('%s: 20 failures trip at once', (name) => {
    expect(shouldTrip(rule(name), { consecutiveFailures: 19, failureStreakStartedAt: T0 }, T0)).toBe(false);
    expect(shouldTrip(rule(name), { consecutiveFailures: 20, failureStreakStartedAt: T0 }, T0)).toBe(true);
  });
  test('standard: 20 failures spanning 5 days', () => {
    expect(shouldTrip(rule('standard'), { consecutiveFailures: 20, failureStreakStartedAt: T0 }, T0 + 119 * HOUR)).toBe(false);
    expect(shouldTrip(rule('standard'), { consecutiveFailures: 20, failureStreakStartedAt: T0 }, T0 + 120 * HOUR)).toBe(true);
  });
  test('custral never trips', () => {
    expect(rule('custral')).toBeNull();
    expect(shouldTrip(null, { consecutiveFailures: 10_000, failureStreakStartedAt: T0 }, T0 + 1000 * HOUR)).toBe(false);
  });
});

describe('healthEffect', () => {
  const p = (name: PresetName) => PRESETS[name].policy;
  test('success resets under every preset', () => {
    for (const name of ['standard', 'custral', 'jitter-45h', 'tourical', 'kestrel', 'vestiarion'] as const) {
      expect(healthEffect({ policy: p(name), error: null, isTestEvent: false, deliveryFailed: false })).toBe('success');
    }
  });
  test("Postern's own faults never count", () => {
    expect(healthEffect({ policy: p('vestiarion'), error: 'internal:secret_unreadable', isTestEvent: false, deliveryFailed: true })).toBe('none');
  });
  test('tourical counts only 4xx', () => {
    expect(healthEffect({ policy: p('tourical'), error: 'http_404', isTestEvent: false, deliveryFailed: false })).toBe('failure');
    expect(healthEffect({ policy: p('tourical'), error: 'http_500', isTestEvent: false, deliveryFailed: false })).toBe('none');
    expect(healthEffect({ policy: p('tourical'), error: 'timeout', isTestEvent: false, deliveryFailed: false })).toBe('none');
  });
  test('kestrel counts failed deliveries, not attempts', () => {
    expect(healthEffect({ policy: p('kestrel'), error: 'http_500', isTestEvent: false, deliveryFailed: false })).toBe('none');
    expect(healthEffect({ policy: p('kestrel'), error: 'http_500', isTestEvent: false, deliveryFailed: true })).toBe('failure');
  });
  test('vestiarion counts test events and unsafe URLs; standard counts neither', () => {
    expect(healthEffect({ policy: p('vestiarion'), error: 'http_500', isTestEvent: true, deliveryFailed: true })).toBe('failure');
    expect(healthEffect({ policy: p('vestiarion'), error: 'unsafe_url:loopback', isTestEvent: false, deliveryFailed: false })).toBe('failure');
    expect(healthEffect({ policy: p('standard'), error: 'http_500', isTestEvent: true, deliveryFailed: false })).toBe('none');
    expect(healthEffect({ policy: p('standard'), error: 'unsafe_url:loopback', isTestEvent: false, deliveryFailed: true })).toBe('none');
  });
});

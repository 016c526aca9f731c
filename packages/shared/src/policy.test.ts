import { PRESET_NAMES, isPresetName, policySchema, resolvePolicy } from './policy.js';
import type { Policy, PolicyResolution } from './policy.js';
import { PRESETS, listPresets } from './presets.js';

function ok(result: PolicyResolution) {
  if (!result.ok) throw new Error(`expected ok, got ${JSON.stringify(result.issues)}`);
  return result;
}
function issues(result: PolicyResolution) {
  if (result.ok) throw new Error('expected issues');
  return result.issues;
}

describe('presets', () => {
  it('has one entry per name, each a valid policy', () => {
    expect(Object.keys(PRESETS)).toEqual([...PRESET_NAMES]);
    for (const name of PRESET_NAMES) {
      const parsed = policySchema.safeParse(PRESETS[name].policy);
      expect(parsed.error?.issues ?? []).toEqual([]);
      expect(PRESETS[name].summary.length).toBeGreaterThan(20);
    }
  });

  it('maps each seed to its preset', () => {
    expect(Object.fromEntries(PRESET_NAMES.map((n) => [n, PRESETS[n].seed]))).toEqual({
      standard: null,
      custral: '000',
      'jitter-45h': '001',
      tourical: '002',
      kestrel: '003',
      vestiarion: '004',
    });
  });

  it('encodes the headline rules of docs/architecture.md\'s table', () => {
    const p = (name: keyof typeof PRESETS) => PRESETS[name].policy;
    expect(PRESET_NAMES.map((n) => p(n).maxAttempts)).toEqual([8, 8, 8, 6, 6, 7]);
    expect(p('custral').breaker).toBeNull();
    expect(p('custral').onEndpointInactive).toBe('fail');
    expect(p('custral').retention).toEqual({ lastPerEndpoint: 100 });
    expect(p('jitter-45h').schedule).toEqual({
      kind: 'random-up-to',
      floorMs: 30_000,
      capsMs: [60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 43_200_000, 86_400_000],
    });
    expect(p('jitter-45h').breaker).toMatchObject({ threshold: 20, minStreakMs: 72 * 3_600_000, pendingOnTrip: 'cancel' });
    expect(p('tourical').redirects).toEqual({ follow: true, maxHops: 3 });
    expect(p('tourical').maxPayloadBytes).toBe(1_048_576);
    expect(p('tourical').breaker).toMatchObject({ of: '4xx', threshold: 24, minStreakMs: 86_400_000, action: 'pause' });
    expect(p('kestrel').schedule).toEqual({ kind: 'exponential-full-jitter', baseMs: 2000, capMs: 32_000 });
    expect(p('kestrel').timeout).toEqual({ ms: 10_000, measures: 'response-headers' });
    expect(p('kestrel').breaker).toMatchObject({ counts: 'deliveries', threshold: 20 });
    expect(p('vestiarion').breaker).toMatchObject({ pendingOnTrip: 'fail', reenable: 'recreate', countTestEvents: true });
    expect(p('vestiarion').retryTestEvents).toBe(false);
    expect(p('vestiarion').maxResponseBytesRead).toBe(1024);
    expect(p('standard').jitterRatio).toBe(0.2);
    expect(p('standard').retryAfter).toBe('honour');
  });

  it('is frozen all the way down', () => {
    const policy = PRESETS.standard.policy as Policy & { schedule: { kind: 'fixed'; waitsMs: number[] } };
    expect(() => {
      policy.maxAttempts = 1;
    }).toThrow(TypeError);
    expect(() => policy.schedule.waitsMs.push(1)).toThrow(TypeError);
  });

  it('lists presets with names for the API', () => {
    const listing = listPresets();
    expect(listing.map((p) => p.name)).toEqual([...PRESET_NAMES]);
    expect(listing[3]).toMatchObject({ name: 'tourical', seed: '002', summary: PRESETS.tourical.summary });
    expect(JSON.parse(JSON.stringify(listing))[0].policy).toEqual(PRESETS.standard.policy);
  });

  it('recognises preset names', () => {
    expect(isPresetName('kestrel')).toBe(true);
    expect(isPresetName('Kestrel')).toBe(false);
    expect(isPresetName(3)).toBe(false);
  });
});

describe('resolvePolicy', () => {
  it('gives standard when no policy is given', () => {
    const result = ok(resolvePolicy(undefined));
    expect(result.policy).toEqual(PRESETS.standard.policy);
    expect(result.presetName).toBe('standard');
  });

  it.each(PRESET_NAMES)('resolves the name %s to a fresh copy of that preset', (name) => {
    const result = ok(resolvePolicy(name));
    expect(result.policy).toEqual(PRESETS[name].policy);
    expect(result.policy).not.toBe(PRESETS[name].policy);
    expect(result.presetName).toBe(name);
    expect(result.basePresetName).toBe(name);
    result.policy.maxAttempts = 2; // a copy may be changed
    expect(PRESETS[name].policy.maxAttempts).not.toBe(2);
  });

  it('refuses an unknown name at path policy', () => {
    const found = issues(resolvePolicy('stripe'));
    expect(found).toHaveLength(1);
    expect(found[0]?.path).toBe('policy');
    expect(found[0]?.message).toContain('standard, custral, jitter-45h, tourical, kestrel, vestiarion');
    expect(issues(resolvePolicy({ preset: 'nope', maxAttempts: 3 }))[0]?.path).toBe('policy.preset');
  });

  it('refuses input that is neither a name nor an object', () => {
    for (const input of [null, 5, true, ['standard']]) {
      expect(issues(resolvePolicy(input))[0]?.path).toBe('policy');
    }
  });

  it('merges overrides onto a named preset', () => {
    const result = ok(resolvePolicy({ preset: 'tourical', maxAttempts: 3, breaker: { threshold: 5 }, timeout: { ms: 500 } }));
    expect(result.policy.maxAttempts).toBe(3);
    expect(result.policy.breaker).toEqual({ ...PRESETS.tourical.policy.breaker, threshold: 5 });
    expect(result.policy.timeout).toEqual({ ms: 500, measures: 'whole-response' });
    expect(result.policy.redirects).toEqual({ follow: true, maxHops: 3 });
    expect(result.presetName).toBeNull();
    expect(result.basePresetName).toBe('tourical');
    // Naming a preset and repeating its own values is still that preset.
    expect(ok(resolvePolicy({ preset: 'kestrel', maxAttempts: 6 })).presetName).toBe('kestrel');
  });

  it('reports an unnamed policy equal to a preset as that preset', () => {
    for (const input of [{}, { maxAttempts: PRESETS.standard.policy.maxAttempts }, { ...PRESETS.standard.policy }]) {
      const result = ok(resolvePolicy(input));
      expect(result.policy).toEqual(PRESETS.standard.policy);
      expect(result.presetName).toBe('standard');
      expect(result.basePresetName).toBe('standard');
    }
    expect(ok(resolvePolicy({ preset: 'standard' })).presetName).toBe('standard');
    // A full copy of another preset, unnamed, is that preset.
    const kestrel = ok(resolvePolicy(JSON.parse(JSON.stringify(PRESETS.kestrel.policy))));
    expect(kestrel.presetName).toBe('kestrel');
    expect(kestrel.basePresetName).toBe('standard');
  });

  it('merges a partial custom policy onto standard', () => {
    const result = ok(resolvePolicy({ maxAttempts: 3, schedule: { kind: 'fixed', waitsMs: [10, 20] }, jitterRatio: 0 }));
    expect(result.policy).toEqual({ ...PRESETS.standard.policy, maxAttempts: 3, schedule: { kind: 'fixed', waitsMs: [10, 20] }, jitterRatio: 0 });
    expect(result.presetName).toBeNull();
    expect(result.basePresetName).toBe('standard');
  });

  it('replaces, not merges, a schedule, redirect rule or retention of another shape', () => {
    const result = ok(
      resolvePolicy({
        preset: 'custral',
        schedule: { kind: 'exponential-full-jitter', baseMs: 5, capMs: 50 },
        redirects: { follow: true, maxHops: 2 },
        retention: { days: 7 },
      }),
    );
    expect(result.policy.schedule).toEqual({ kind: 'exponential-full-jitter', baseMs: 5, capMs: 50 });
    expect(result.policy.retention).toEqual({ days: 7 });
    expect(ok(resolvePolicy({ preset: 'tourical', redirects: { follow: false } })).policy.redirects).toEqual({ follow: false });
    expect(ok(resolvePolicy({ preset: 'custral', breaker: PRESETS.standard.policy.breaker })).policy.breaker).toEqual(
      PRESETS.standard.policy.breaker,
    );
    expect(ok(resolvePolicy({ breaker: null })).policy.breaker).toBeNull();
  });

  it.each([
    [{ maxAttempts: 0 }, 'policy.maxAttempts', 'maxAttempts must be an integer from 1 to 100'],
    [{ maxAttempts: 101 }, 'policy.maxAttempts', 'maxAttempts must be an integer from 1 to 100'],
    [{ maxAttempts: 2.5 }, 'policy.maxAttempts', 'maxAttempts must be an integer from 1 to 100'],
    [{ maxAttempts: '3' }, 'policy.maxAttempts', 'maxAttempts must be an integer from 1 to 100'],
    [{ jitterRatio: 0.6 }, 'policy.jitterRatio', 'jitterRatio must be a number from 0 to 0.5'],
    [{ timeout: { ms: 0 } }, 'policy.timeout.ms', 'timeout.ms must be an integer from 1 to 120000'],
    [{ timeout: { measures: 'body' } }, 'policy.timeout.measures', 'timeout.measures must be one of whole-response, response-headers'],
    [{ redirects: { follow: true, maxHops: 11 } }, 'policy.redirects.maxHops', 'redirects.maxHops must be an integer from 1 to 10'],
    [{ redirects: { follow: 'yes' } }, 'policy.redirects.follow', 'redirects must be {follow: false} or {follow: true, maxHops}'],
    [{ schedule: { kind: 'fixed', waitsMs: [1, 2, 3, 4, 5, 6, -1] } }, 'policy.schedule.waitsMs[6]', 'each schedule.waitsMs entry must be an integer from 0 to 2592000000'],
    [{ schedule: { kind: 'linear' } }, 'policy.schedule.kind', 'schedule.kind must be one of fixed, random-up-to, exponential-full-jitter'],
    [{ schedule: { kind: 'fixed', waitsMs: [1, 2] } }, 'policy.schedule.waitsMs', 'schedule.waitsMs must have at least 7 entries (maxAttempts - 1), got 2'],
    [{ maxAttempts: 4, schedule: { kind: 'random-up-to', floorMs: 1, capsMs: [5] } }, 'policy.schedule.capsMs', 'schedule.capsMs must have at least 3 entries (maxAttempts - 1), got 1'],
    [{ maxPayloadBytes: 0 }, 'policy.maxPayloadBytes', 'maxPayloadBytes must be null or an integer from 1 to 67108864'],
    [{ maxResponseBytesRead: 2_000_000 }, 'policy.maxResponseBytesRead', 'maxResponseBytesRead must be an integer from 0 to 1048576'],
    [{ unsafeUrl: 'allow' }, 'policy.unsafeUrl', 'unsafeUrl must be one of fail-permanently, retry'],
    [{ breaker: { threshold: 0 } }, 'policy.breaker.threshold', 'breaker.threshold must be an integer from 1 to 10000'],
    [{ breaker: 'off' }, 'policy.breaker', 'breaker must be null or an object'],
    [{ retention: { days: 0 } }, 'policy.retention.days', 'retention.days must be an integer from 1 to 3650'],
    [{ concurrency: { perOrg: 0 } }, 'policy.concurrency.perOrg', 'concurrency.perOrg must be an integer from 1 to 10000'],
    [{ retryTestEvents: 'no' }, 'policy.retryTestEvents', 'retryTestEvents must be true or false'],
    [{ schedule: { kind: 'exponential-full-jitter', baseMs: 0, capMs: 1000 } }, 'policy.schedule.baseMs', 'schedule.baseMs must be an integer from 1 to 2592000000'],
    [{ schedule: { kind: 'exponential-full-jitter', baseMs: 10, capMs: 0 } }, 'policy.schedule.capMs', 'schedule.capMs must be an integer from 1 to 2592000000'],
    [{ schedule: { kind: 'exponential-full-jitter', baseMs: 2000, capMs: 1000 } }, 'policy.schedule.capMs', 'schedule.capMs must be an integer from schedule.baseMs (2000) to 2592000000, got 1000'],
  ])('refuses %j with an issue at %s', (input, path, message) => {
    expect(issues(resolvePolicy(input))).toContainEqual({ path, message });
  });

  it('accepts the range limits, millisecond waits included', () => {
    const result = ok(
      resolvePolicy({
        maxAttempts: 1,
        schedule: { kind: 'fixed', waitsMs: [] },
        jitterRatio: 0.5,
        timeout: { ms: 120_000 },
        maxPayloadBytes: 1,
        maxResponseBytesRead: 0,
        retention: { lastPerEndpoint: 100_000 },
      }),
    );
    expect(result.policy.maxAttempts).toBe(1);
    expect(ok(resolvePolicy({ maxAttempts: 3, schedule: { kind: 'fixed', waitsMs: [10, 10, 2_592_000_000] } })).policy.maxAttempts).toBe(3);
    // Exponential: base 1, and a cap equal to the base (a constant ceiling), are allowed.
    expect(ok(resolvePolicy({ schedule: { kind: 'exponential-full-jitter', baseMs: 1, capMs: 1 } })).policy.schedule).toEqual({ kind: 'exponential-full-jitter', baseMs: 1, capMs: 1 });
  });

  it('refuses unknown keys, at any depth, naming each one and what its object takes', () => {
    expect(issues(resolvePolicy({ maxAtempts: 3 }))).toEqual([
      { path: 'policy.maxAtempts', message: expect.stringMatching(/^unknown field "maxAtempts"; policy takes preset, maxAttempts, schedule, .*, pacing$/) },
    ]);
    expect(issues(resolvePolicy({ preset: 'standard', timeout: { ms: 10, unit: 's' } }))).toEqual([
      { path: 'policy.timeout.unit', message: 'unknown field "unit"; timeout takes ms, measures' },
    ]);
    expect(issues(resolvePolicy({ schedule: { kind: 'fixed', waitsMs: [1, 2, 3, 4, 5, 6, 7], floorMs: 1 } }))).toEqual([
      {
        path: 'policy.schedule.floorMs',
        message: 'unknown field "floorMs"; schedule takes {kind: "fixed", waitsMs}, {kind: "random-up-to", capsMs, floorMs} or {kind: "exponential-full-jitter", baseMs, capMs}',
      },
    ]);
  });

  // A misspelt key usually leaves the key it meant missing too: the typo is the first issue, not "maxHops must be…".
  it.each([
    [{ redirects: { max: 3 } }, 'policy.redirects.max', 'unknown field "max"; redirects takes {follow: false} or {follow: true, maxHops}'],
    [{ redirects: { follow: true, max: 3 } }, 'policy.redirects.max', 'unknown field "max"; redirects takes {follow: false} or {follow: true, maxHops}'],
    [{ schedule: { kind: 'exponential-full-jitter', base: 1, capMs: 5 } }, 'policy.schedule.base', expect.stringMatching(/^unknown field "base"; schedule takes .*\{kind: "exponential-full-jitter", baseMs, capMs\}$/)],
    [{ retention: { day: 3 } }, 'policy.retention.day', 'unknown field "day"; retention takes {days} or {lastPerEndpoint}'],
    [{ rateLimit: { persecond: 3 } }, 'policy.rateLimit.persecond', 'unknown field "persecond"; rateLimit takes perSecond, burst'],
    [{ breaker: { treshold: 3 } }, 'policy.breaker.treshold', expect.stringMatching(/^unknown field "treshold"; breaker takes counts, of, threshold, /)],
    [{ concurrency: { perEndpont: 3 } }, 'policy.concurrency.perEndpont', 'unknown field "perEndpont"; concurrency takes perEndpoint, perOrg'],
    [{ redelivery: { allow: true } }, 'policy.redelivery.allow', 'unknown field "allow"; redelivery takes allowed, whilePending'],
  ])('names the unknown key of %j first, with the keys its object takes', (input, path, message) => {
    expect(issues(resolvePolicy(input))[0]).toEqual({ path, message });
  });

  it('a retention with the keys of both shapes is neither shape, not an unknown key', () => {
    expect(issues(resolvePolicy({ retention: { days: 3, lastPerEndpoint: 3 } }))).toEqual([{ path: 'policy.retention', message: 'retention must be {days} or {lastPerEndpoint}' }]);
  });

  it('reports every problem at once', () => {
    expect(issues(resolvePolicy({ maxAttempts: 0, jitterRatio: -1, typo: 1 }))).toHaveLength(3);
  });
});

test('a "__proto__" key in a policy is an unknown field, not a prototype', () => {
  const r = resolvePolicy(JSON.parse('{"__proto__":{"maxAttempts":0}}'));
  expect(r.ok).toBe(false);
  if (!r.ok) expect(r.issues.map((i) => i.path)).toContain('policy.__proto__');
});

test('a perEndpoint above perOrg is accepted with a warning: the org\'s limit caps it', () => {
  const r = resolvePolicy({ concurrency: { perEndpoint: 30, perOrg: 20 } });
  expect(r.ok && r.warnings).toEqual(['concurrency.perEndpoint: 30 is more than concurrency.perOrg (20): the org\'s limit caps this endpoint at 20 attempts at once']);
  const fine = resolvePolicy({ concurrency: { perEndpoint: 4, perOrg: 20 } });
  expect(fine.ok && fine.warnings).toEqual([]);
});

import { effectiveLimits, fullPace, gcraStep, nextPace, paceCeiling, paceSignalOf, PACE_MIN_PER_SECOND, type Pace } from './pace.js';

const policy = { concurrency: { perEndpoint: 8, perOrg: 20 }, rateLimit: { perSecond: 20, burst: 0 }, pacing: 'adaptive' as const };
const NOW = 1_800_000_000_000;

describe('paceSignalOf', () => {
  test('429, 503 and timeouts ask to slow down; 2xx is ok; anything else is neutral', () => {
    expect(paceSignalOf({ error: 'http_429' })).toBe('slow-down');
    expect(paceSignalOf({ error: 'http_503' })).toBe('slow-down');
    expect(paceSignalOf({ error: 'timeout' })).toBe('slow-down');
    expect(paceSignalOf({ error: null })).toBe('ok');
    expect(paceSignalOf({ error: 'http_500' })).toBe('neutral');
    expect(paceSignalOf({ error: 'connection_failed:ECONNREFUSED' })).toBe('neutral');
  });
});

describe('nextPace', () => {
  const open = { ...policy, concurrency: { perEndpoint: 4, perOrg: 20 }, rateLimit: null };

  test('does nothing without adaptive pacing, on a neutral signal, or on success at full pace', () => {
    expect(nextPace(null, { signal: 'slow-down' }, NOW, { ...policy, pacing: 'none' })).toBeUndefined();
    expect(nextPace(null, { signal: 'neutral' }, NOW, policy)).toBeUndefined();
    expect(nextPace(null, { signal: 'ok' }, NOW, policy)).toBeUndefined();
  });

  test.each([
    // [what, pace before, signal, startedAt offset from NOW, retryAfterMs, expected (partial) or undefined]
    ['a first slow-down halves rate and concurrency and records the cut', null, 'slow-down', -5, undefined, { perSecond: 10, concurrency: 4, pausedUntil: null, cutAt: NOW, goodPerSecond: 15 }],
    ['a Retry-After pauses the endpoint until then', null, 'slow-down', -5, 1000, { perSecond: 10, pausedUntil: NOW + 1000 }],
    ['an answer to an attempt in flight at the cut does not cut again', { perSecond: 10, concurrency: 4, pausedUntil: null, cutAt: NOW - 5, changedAt: NOW - 5, goodPerSecond: 15 }, 'slow-down', -20, undefined, undefined],
    ['… nor one sent within the window after the cut (the receiver still counts the old ones)', { perSecond: 10, concurrency: 4, pausedUntil: null, cutAt: NOW - 500, changedAt: NOW - 500, goodPerSecond: 15 }, 'slow-down', -10, undefined, undefined],
    ['… but it extends a Retry-After pause', { perSecond: 10, concurrency: 4, pausedUntil: NOW + 100, cutAt: NOW - 5, changedAt: NOW - 5, goodPerSecond: 15 }, 'slow-down', -20, 1000, { perSecond: 10, pausedUntil: NOW + 1000, cutAt: NOW - 5 }],
    ['an attempt sent a window after the cut cuts again, keeping the good rate (no success between)', { perSecond: 10, concurrency: 4, pausedUntil: null, cutAt: NOW - 1500, changedAt: NOW - 1500, goodPerSecond: 15 }, 'slow-down', -200, undefined, { perSecond: 5, concurrency: 2, cutAt: NOW, goodPerSecond: 15 }],
    ['a cut after successes remembers 3/4 of the rate it cut from as good', { perSecond: 16, concurrency: 8, pausedUntil: null, cutAt: NOW - 9000, changedAt: NOW - 100, goodPerSecond: 15 }, 'slow-down', -10, undefined, { perSecond: 8, cutAt: NOW, goodPerSecond: 12 }],
    ['without a rate bound a first cut starts from 10/s per slot, and the good rate is unknown', null, 'slow-down', -5, undefined, { perSecond: 20, concurrency: 2, goodPerSecond: null }, open],
    ['a success of an attempt started before the cut changes nothing', { perSecond: 10, concurrency: 4, pausedUntil: null, cutAt: NOW - 5, changedAt: NOW - 5, goodPerSecond: 15 }, 'ok', -20, undefined, undefined],
    ['below the good rate a success doubles the rate per second since it last changed', { perSecond: 4, concurrency: 4, pausedUntil: null, cutAt: NOW - 2000, changedAt: NOW - 500, goodPerSecond: 15 }, 'ok', -5, undefined, { perSecond: 4 * Math.SQRT2, changedAt: NOW }],
    ['… up to the good rate, not past it', { perSecond: 12, concurrency: 8, pausedUntil: null, cutAt: NOW - 2000, changedAt: NOW - 1000, goodPerSecond: 15 }, 'ok', -5, undefined, { perSecond: 15 }],
    ['at or above the good rate it grows by 10 % of it per second (at least 1/s)', { perSecond: 15, concurrency: 8, pausedUntil: null, cutAt: NOW - 2000, changedAt: NOW - 500, goodPerSecond: 15 }, 'ok', -5, undefined, { perSecond: 15.75 }],
    ['growth counts at most one second, however long since the last change', { perSecond: 4, concurrency: 8, pausedUntil: null, cutAt: NOW - 90_000, changedAt: NOW - 60_000, goodPerSecond: 15 }, 'ok', -5, undefined, { perSecond: 8 }],
    ['a success after the pause ended clears it', { perSecond: 10, concurrency: 4, pausedUntil: NOW - 1, cutAt: NOW - 2000, changedAt: NOW - 2000, goodPerSecond: 15 }, 'ok', -5, undefined, { pausedUntil: null }],
  ] as const)('%s', (_what, before, signal, startedOffset, retryAfterMs, expected, pol: Parameters<typeof nextPace>[3] = policy) => {
    const next = nextPace(before as Pace | null, { signal, startedAt: NOW + startedOffset, retryAfterMs }, NOW, pol);
    if (expected === undefined) expect(next).toBeUndefined();
    else expect(next).toMatchObject(expected);
  });

  test('cuts stop at the floor: at least PACE_MIN_PER_SECOND and one slot', () => {
    let pace: Pace | null = null;
    for (let i = 0; i < 20; i++) pace = nextPace(pace, { signal: 'slow-down', startedAt: NOW + i * 10_000 - 1 }, NOW + i * 10_000, policy) ?? pace;
    expect(pace).toMatchObject({ perSecond: PACE_MIN_PER_SECOND, concurrency: 1, pausedUntil: null });
  });

  test('a burst of answers to requests in flight at the first 429 cuts once', () => {
    let pace: Pace | null = null;
    // Eight 429s within 50 ms, all of attempts sent before the first came back.
    for (let i = 0; i < 8; i++) pace = nextPace(pace, { signal: 'slow-down', startedAt: NOW - 20 }, NOW + i * 5, open) ?? pace;
    expect(pace).toMatchObject({ perSecond: 20, concurrency: 2, cutAt: NOW });
  });

  /** Successes every 1/rate s from `pace` for `seconds`: the rate at the end (null = bound lifted) and the successes it took. */
  function recover(pace: Pace, seconds: number, pol: Parameters<typeof nextPace>[3]): { pace: Pace | null; steps: number } {
    let current: Pace | null = pace;
    let t = NOW;
    let steps = 0;
    while (current !== null && t < NOW + seconds * 1000) {
      t += 1000 / Math.min(current.perSecond ?? 1000, 1000);
      const next = nextPace(current, { signal: 'ok', startedAt: t - 1 }, t, pol);
      if (next !== undefined) current = next;
      steps++;
    }
    return { pace: current, steps };
  }

  test('recovery returns to the good rate within seconds: from 0.5/s to 40/s in under 8 s', () => {
    const collapsed: Pace = { perSecond: 0.5, concurrency: 1, pausedUntil: null, cutAt: NOW - 1, changedAt: NOW - 1, goodPerSecond: 40 };
    // Doubling per second: 0.5 → 40 takes log2(80) ≈ 6.3 s; the rest of the 8 s probes beyond, slowly.
    const after8s = recover(collapsed, 8, open).pace!.perSecond!;
    expect(after8s).toBeGreaterThanOrEqual(40);
    expect(after8s).toBeLessThan(48);
    // Beyond it only by 10 % of it per second: 5 s from 40/s is about 40 + 4 × 5 = 60/s.
    const beyond = recover({ ...collapsed, perSecond: 40, changedAt: NOW }, 5, open).pace!.perSecond!;
    expect(beyond).toBeGreaterThan(55);
    expect(beyond).toBeLessThan(61);
  });

  test('without a policy rate and no known good rate, the pace climbs past 40/s to the ceiling, and only there is the bound lifted', () => {
    const cut = nextPace(null, { signal: 'slow-down', startedAt: NOW - 5 }, NOW, open)!;
    const after6s = recover(cut, 3, open).pace!;
    expect(after6s.perSecond).toBeGreaterThan(100);
    expect(after6s.perSecond).toBeLessThan(paceCeiling(open));
    // Climbing step by step: never a jump of more than ×2 in one success.
    let current: Pace | null = cut;
    let t = NOW;
    while (current !== null && current.perSecond !== null) {
      t += 1000 / current.perSecond;
      const step = nextPace(current, { signal: 'ok', startedAt: t - 1 }, t, open);
      const next: Pace | null = step === undefined ? current : step;
      if (next?.perSecond != null) expect(next.perSecond).toBeLessThanOrEqual(current.perSecond * 2);
      else expect(current.perSecond * 2).toBeGreaterThanOrEqual(paceCeiling(open));
      current = next;
    }
    expect(paceCeiling(open)).toBe(400);
    expect(fullPace(open)).toEqual({ perSecond: null, concurrency: 4, pausedUntil: null });
  });

  test('with a policy rate, recovery stops there and the pace is dropped', () => {
    const { pace, steps } = recover({ perSecond: 5, concurrency: 4, pausedUntil: null, cutAt: NOW - 1, changedAt: NOW - 1, goodPerSecond: 15 }, 30, policy);
    expect(pace).toBeNull();
    expect(steps).toBeGreaterThan(10);
  });

  test('a stored pace from before cutAt and changedAt still rises, by one success\'s worth', () => {
    expect(nextPace({ perSecond: 10, concurrency: 8, pausedUntil: null }, { signal: 'ok' }, NOW, policy)!.perSecond).toBeCloseTo(10 * 2 ** 0.1, 6);
  });
});

describe('effectiveLimits', () => {
  test('the policy limits, narrowed by the pace under adaptive pacing', () => {
    expect(effectiveLimits(policy, null, NOW)).toEqual({ perEndpoint: 8, rate: { perSecond: 20, burst: 0 }, pausedUntil: null });
    expect(effectiveLimits(policy, { perSecond: 5, concurrency: 2.7, pausedUntil: NOW + 5 }, NOW)).toEqual({ perEndpoint: 2, rate: { perSecond: 5, burst: 0 }, pausedUntil: NOW + 5 });
    expect(effectiveLimits({ ...policy, pacing: 'none' }, { perSecond: 5, concurrency: 2, pausedUntil: null }, NOW).perEndpoint).toBe(8);
  });
});

describe('gcraStep (the rate limit of the claim step)', () => {
  /** How many of `attempts` requests, tried every `everyMs`, are allowed in each 1-s window. */
  function maxPerSecond(rate: { perSecond: number; burst: number }, everyMs: number, durationMs: number): number {
    let tat = 0;
    const allowed: number[] = [];
    for (let t = 0; t < durationMs; t += everyMs) {
      const step = gcraStep(tat, t, rate);
      if (step.allowed) {
        tat = step.tatMs;
        allowed.push(t);
      }
    }
    let max = 0;
    for (const start of allowed) max = Math.max(max, allowed.filter((t) => t >= start && t < start + 1000).length);
    return max;
  }

  test('no 1-second window holds more than perSecond + burst requests', () => {
    expect(maxPerSecond({ perSecond: 20, burst: 0 }, 1, 5000)).toBe(20);
    expect(maxPerSecond({ perSecond: 20, burst: 5 }, 1, 5000)).toBeLessThanOrEqual(25);
    expect(maxPerSecond({ perSecond: 0.5, burst: 0 }, 10, 10_000)).toBe(1);
  });

  test('a refused request is told when it conforms', () => {
    const first = gcraStep(0, 1000, { perSecond: 10, burst: 0 });
    expect(first).toEqual({ allowed: true, tatMs: 1100 });
    expect(gcraStep(1100, 1000, { perSecond: 10, burst: 0 })).toEqual({ allowed: false, retryAtMs: 1100 });
    expect(gcraStep(1100, 1000, { perSecond: 10, burst: 1 })).toEqual({ allowed: true, tatMs: 1200 });
  });
});

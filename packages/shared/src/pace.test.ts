import { effectiveLimits, fullPace, gcraStep, nextPace, paceSignalOf, PACE_MIN_PER_SECOND, type Pace } from './pace.js';

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

describe('nextPace (AIMD)', () => {
  test('does nothing without adaptive pacing, on a neutral signal, or on success at full pace', () => {
    expect(nextPace(null, { signal: 'slow-down' }, NOW, { ...policy, pacing: 'none' })).toBeUndefined();
    expect(nextPace(null, { signal: 'neutral' }, NOW, policy)).toBeUndefined();
    expect(nextPace(null, { signal: 'ok' }, NOW, policy)).toBeUndefined();
  });

  test('a slow-down halves rate and concurrency; a Retry-After pauses the endpoint until then', () => {
    expect(nextPace(null, { signal: 'slow-down' }, NOW, policy)).toEqual({ perSecond: 10, concurrency: 4, pausedUntil: null });
    expect(nextPace(null, { signal: 'slow-down', retryAfterMs: 1000 }, NOW, policy)).toEqual({ perSecond: 10, concurrency: 4, pausedUntil: NOW + 1000 });
  });

  test('cuts stop at the floor: at least PACE_MIN_PER_SECOND and one slot', () => {
    let pace: Pace | null = null;
    for (let i = 0; i < 20; i++) pace = nextPace(pace, { signal: 'slow-down' }, NOW + i * 10_000, policy) ?? pace;
    expect(pace).toEqual({ perSecond: PACE_MIN_PER_SECOND, concurrency: 1, pausedUntil: null });
  });

  test('answers to requests sent before a pause do not cut again while it lasts', () => {
    const paused = nextPace(null, { signal: 'slow-down', retryAfterMs: 1000 }, NOW, policy)!;
    expect(nextPace(paused, { signal: 'slow-down', retryAfterMs: 1000 }, NOW + 10, policy)).toEqual({ ...paused, pausedUntil: NOW + 1010 });
    expect(nextPace(paused, { signal: 'slow-down' }, NOW + 10, policy)).toEqual(paused);
  });

  test('successes raise rate and concurrency step by step, back to the policy limits, then the pace is dropped', () => {
    let pace: Pace | null = { perSecond: 10, concurrency: 4, pausedUntil: null };
    let steps = 0;
    const rates: number[] = [];
    while (pace !== null && steps < 1000) {
      pace = nextPace(pace, { signal: 'ok' }, NOW + steps, policy)!;
      if (pace) rates.push(pace.perSecond!);
      steps++;
    }
    expect(pace).toBeNull();
    // Additive: from 10/s to 20/s takes about (20² − 10²) / 2 = 150 successes, not a few.
    expect(steps).toBeGreaterThan(100);
    expect(rates.every((r, i) => i === 0 || r >= rates[i - 1]!)).toBe(true);
    expect(Math.max(...rates)).toBeLessThanOrEqual(20);
  });

  test('without a policy rate, a first cut starts from an assumed 10/s per slot and the bound lifts when back there', () => {
    const open = { ...policy, rateLimit: null };
    const cut = nextPace(null, { signal: 'slow-down' }, NOW, open)!;
    expect(cut).toEqual({ perSecond: 40, concurrency: 4, pausedUntil: null });
    const nearlyBack = { perSecond: 79.99, concurrency: 8, pausedUntil: null };
    expect(nextPace(nearlyBack, { signal: 'ok' }, NOW, open)).toBeNull();
    expect(fullPace(open)).toEqual({ perSecond: null, concurrency: 8, pausedUntil: null });
  });

  test('a success after the pause ended clears it', () => {
    const pace = { perSecond: 10, concurrency: 4, pausedUntil: NOW - 1 };
    expect(nextPace(pace, { signal: 'ok' }, NOW, policy)!.pausedUntil).toBeNull();
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

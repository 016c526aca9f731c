import type { Policy } from './policy.js';
import { PRESETS } from './presets.js';
import { parseRetryAfterMs, policyTimeline, retryDelayMs, waitBoundsMs } from './retry-schedule.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const half = () => 0.5;

/** The waits each preset's source rules give, read off their tables (or docs/architecture.md where the rules give none). */
const SEED_WAITS: Record<'custral' | 'tourical' | 'vestiarion', number[]> = {
  // custral's wait column.
  custral: [5 * S, 30 * S, 2 * M, 10 * M, 1 * H, 5 * H, 18 * H],
  // tourical: t=0, +1m, +6m, +36m, +2h36m, +14h36m, as gaps.
  tourical: [1 * M, 6 * M - 1 * M, 36 * M - 6 * M, (2 * H + 36 * M) - 36 * M, (14 * H + 36 * M) - (2 * H + 36 * M)],
  // vestiarion has no table; docs/architecture.md's assumed one.
  vestiarion: [1 * M, 5 * M, 30 * M, 2 * H, 6 * H, 12 * H],
};

const cumulative = (waits: number[]) => waits.reduce<number[]>((acc, w) => [...acc, (acc.at(-1) ?? 0) + w], [0]);

function delays(policy: Policy, random: () => number): number[] {
  const out: number[] = [];
  for (let n = 1; n < policy.maxAttempts; n++) out.push(retryDelayMs({ policy, failedAttemptNumber: n, random }) as number);
  return out;
}

describe('fixed schedules reproduce the seed tables', () => {
  it.each(Object.entries(SEED_WAITS))('%s', (name, waits) => {
    const policy = PRESETS[name as keyof typeof SEED_WAITS].policy;
    expect(policy.maxAttempts).toBe(waits.length + 1);
    expect(delays(policy, half)).toEqual(waits);
    // The presets have no jitter, so any random value gives the table.
    expect(delays(policy, () => 0)).toEqual(waits);
    expect(delays(policy, () => 0.999)).toEqual(waits);
  });

  it("custral's elapsed-time column comes out", () => {
    const starts = cumulative(delays(PRESETS.custral.policy, half));
    // The seed rounds to whole minutes past the first hour: 1h13m is 1h12m35s, and so on.
    const seedColumn = [0, 5 * S, 35 * S, 2 * M + 35 * S, 12 * M + 35 * S, 1 * H + 13 * M, 6 * H + 13 * M, 24 * H + 13 * M];
    expect(starts).toHaveLength(seedColumn.length);
    starts.forEach((ms, i) => expect(Math.abs(ms - (seedColumn[i] as number))).toBeLessThanOrEqual(30 * S));
    expect(starts).toEqual(cumulative(SEED_WAITS.custral));
    expect(starts[5]).toBe((5 + 30 + 120 + 600 + 3600) * S);
  });

  it("tourical's cascade t+1m, 6m, 36m, 2h36m, 14h36m comes out exactly", () => {
    expect(cumulative(delays(PRESETS.tourical.policy, half))).toEqual([0, 1 * M, 6 * M, 36 * M, 2 * H + 36 * M, 14 * H + 36 * M]);
  });
});

describe('standard: fixed waits with ±20% jitter', () => {
  const policy = PRESETS.standard.policy;
  const waits = [5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 10 * H];

  it('is the table at random 0.5 and the edges at 0 and almost 1', () => {
    expect(delays(policy, half)).toEqual(waits);
    expect(delays(policy, () => 0)).toEqual(waits.map((w) => Math.round(w * 0.8)));
    delays(policy, () => 0.999999).forEach((d, i) => expect(d).toBeCloseTo((waits[i] as number) * 1.2, -2));
  });

  it('stays within ±20% over 10,000 draws and reaches near both ends', () => {
    for (let n = 1; n < policy.maxAttempts; n++) {
      const w = waits[n - 1] as number;
      let lo = Infinity;
      let hi = -Infinity;
      for (let i = 0; i < 10_000; i++) {
        const d = retryDelayMs({ policy, failedAttemptNumber: n }) as number;
        lo = Math.min(lo, d);
        hi = Math.max(hi, d);
      }
      expect(lo).toBeGreaterThanOrEqual(Math.round(w * 0.8));
      expect(hi).toBeLessThanOrEqual(Math.round(w * 1.2));
      expect(lo).toBeLessThan(w * 0.81);
      expect(hi).toBeGreaterThan(w * 1.19);
    }
  });
});

describe('random schedules', () => {
  function drawBounds(policy: Policy, n: number) {
    let lo = Infinity;
    let hi = -Infinity;
    let allWhole = true;
    for (let i = 0; i < 10_000; i++) {
      const d = retryDelayMs({ policy, failedAttemptNumber: n }) as number;
      allWhole &&= Number.isInteger(d);
      lo = Math.min(lo, d);
      hi = Math.max(hi, d);
    }
    expect(allWhole).toBe(true);
    return { lo, hi };
  }

  it('jitter-45h: between 30 s and each cap', () => {
    const policy = PRESETS['jitter-45h'].policy;
    const caps = [1 * M, 5 * M, 30 * M, 2 * H, 6 * H, 12 * H, 24 * H];
    caps.forEach((cap, i) => {
      const { lo, hi } = drawBounds(policy, i + 1);
      expect(lo).toBeGreaterThanOrEqual(30 * S);
      expect(hi).toBeLessThanOrEqual(cap);
      expect(lo - 30 * S).toBeLessThan((cap - 30 * S) * 0.01);
      expect(cap - hi).toBeLessThan((cap - 30 * S) * 0.01);
    });
    // jitter-45h's total: under about 45 h.
    expect(policyTimeline(policy).at(-1)?.latestMs).toBeLessThanOrEqual(45 * H);
  });

  it('kestrel: full jitter up to 2, 4, 8, 16, 32 s', () => {
    const policy = PRESETS.kestrel.policy;
    [2, 4, 8, 16, 32].forEach((capS, i) => {
      const { lo, hi } = drawBounds(policy, i + 1);
      expect(lo).toBeGreaterThanOrEqual(0);
      expect(hi).toBeLessThanOrEqual(capS * S);
      expect(lo).toBeLessThan(capS * S * 0.01);
      expect(hi).toBeGreaterThan(capS * S * 0.99);
    });
    expect(retryDelayMs({ policy, failedAttemptNumber: 5, random: () => 0 })).toBe(0);
    expect(retryDelayMs({ policy, failedAttemptNumber: 5, random: () => 1 })).toBe(32 * S);
  });

  it('caps the exponential at capMs', () => {
    const policy: Policy = { ...PRESETS.kestrel.policy, maxAttempts: 20 };
    expect(waitBoundsMs(policy, 19)).toEqual({ minMs: 0, maxMs: 32 * S });
  });
});

describe('attempt budget', () => {
  it.each(Object.keys(PRESETS))('%s: null once maxAttempts attempts have failed', (name) => {
    const policy = PRESETS[name as keyof typeof PRESETS].policy;
    expect(retryDelayMs({ policy, failedAttemptNumber: policy.maxAttempts - 1, random: half })).not.toBeNull();
    expect(retryDelayMs({ policy, failedAttemptNumber: policy.maxAttempts, random: half })).toBeNull();
    expect(retryDelayMs({ policy, failedAttemptNumber: policy.maxAttempts + 5, random: half })).toBeNull();
  });

  it('refuses attempt numbers below 1 or fractional', () => {
    const policy = PRESETS.standard.policy;
    expect(() => retryDelayMs({ policy, failedAttemptNumber: 0 })).toThrow(RangeError);
    expect(() => retryDelayMs({ policy, failedAttemptNumber: 1.5 })).toThrow(RangeError);
  });

  it('allows millisecond waits for fast tests', () => {
    const policy: Policy = { ...PRESETS.standard.policy, maxAttempts: 3, jitterRatio: 0, schedule: { kind: 'fixed', waitsMs: [10, 20] } };
    expect(delays(policy, Math.random)).toEqual([10, 20]);
  });
});

describe('Retry-After', () => {
  const honour = PRESETS.standard.policy; // first wait 5 s
  const at = (retryAfterMs: number, policy = honour) => retryDelayMs({ policy, failedAttemptNumber: 1, random: half, retryAfterMs });

  it('is clamped to [wait, 2 × wait] when the policy honours it', () => {
    expect(at(1 * S)).toBe(5 * S);
    expect(at(7 * S)).toBe(7 * S);
    expect(at(10 * S)).toBe(10 * S);
    expect(at(1 * H)).toBe(10 * S);
    expect(retryDelayMs({ policy: honour, failedAttemptNumber: 1, random: half })).toBe(5 * S);
  });

  it('is ignored by presets that ignore it', () => {
    expect(at(1 * H, PRESETS.custral.policy)).toBe(5 * S);
    expect(at(1 * H, PRESETS.vestiarion.policy)).toBe(1 * M);
  });

  const now = Date.UTC(2015, 9, 21, 7, 27, 30);
  it.each([
    ['delta seconds', '120', 120 * S],
    ['delta seconds with spaces', ' 5 ', 5 * S],
    ['zero', '0', 0],
    ['IMF-fixdate', 'Wed, 21 Oct 2015 07:28:00 GMT', 30 * S],
    ['RFC 850 date', 'Wednesday, 21-Oct-15 07:28:00 GMT', 30 * S],
    ['asctime date', 'Wed Oct 21 07:28:00 2015', 30 * S],
    ['asctime with a one-digit day', 'Sun Nov  1 07:28:00 2015', Date.UTC(2015, 10, 1, 7, 28) - now],
    ['a date in the past', 'Tue, 20 Oct 2015 07:28:00 GMT', 0],
  ])('parses %s', (_label, header, expected) => {
    expect(parseRetryAfterMs(header, now)).toBe(expected);
  });

  it.each([
    ['absent', undefined],
    ['empty', ''],
    ['negative', '-5'],
    ['fractional', '1.5'],
    ['a word', 'soon'],
    ['a date without GMT', 'Wed, 21 Oct 2015 07:28:00'],
    ['an impossible date', 'Sat, 31 Feb 2015 07:28:00 GMT'],
    ['an impossible time', 'Wed, 21 Oct 2015 25:28:00 GMT'],
    ['an ISO date', '2015-10-21T07:28:00Z'],
    ['an enormous number', '9'.repeat(400)],
  ])('returns undefined for %s', (_label, header) => {
    expect(parseRetryAfterMs(header, now)).toBeUndefined();
  });
});

describe('policyTimeline', () => {
  it.each(Object.entries(PRESETS))('%s: one row per attempt, first at 0, never going back', (_name, { policy }) => {
    const rows = policyTimeline(policy);
    expect(rows).toHaveLength(policy.maxAttempts);
    expect(rows[0]).toEqual({ attempt: 1, earliestMs: 0, latestMs: 0 });
    rows.forEach((row, i) => {
      expect(row.attempt).toBe(i + 1);
      expect(row.earliestMs).toBeLessThanOrEqual(row.latestMs);
      if (i > 0) {
        expect(row.earliestMs).toBeGreaterThanOrEqual((rows[i - 1] as typeof row).earliestMs);
        expect(row.latestMs).toBeGreaterThanOrEqual((rows[i - 1] as typeof row).latestMs);
      }
    });
  });

  it.each(Object.entries(SEED_WAITS))('%s: earliest = latest = the seed table, summed', (name, waits) => {
    const rows = policyTimeline(PRESETS[name as keyof typeof SEED_WAITS].policy);
    const starts = cumulative(waits);
    expect(rows.map((r) => r.earliestMs)).toEqual(starts);
    expect(rows.map((r) => r.latestMs)).toEqual(starts);
  });

  it('standard: ±20% around the summed table', () => {
    const starts = cumulative([5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 10 * H]);
    const rows = policyTimeline(PRESETS.standard.policy);
    expect(rows.map((r) => r.earliestMs)).toEqual(starts.map((t) => Math.round(t * 0.8)));
    expect(rows.map((r) => r.latestMs)).toEqual(starts.map((t) => Math.round(t * 1.2)));
  });

  it('kestrel: from 0 up to 2, 6, 14, 30, 62 s', () => {
    const rows = policyTimeline(PRESETS.kestrel.policy);
    expect(rows.map((r) => r.earliestMs)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(rows.map((r) => r.latestMs)).toEqual(cumulative([2 * S, 4 * S, 8 * S, 16 * S, 32 * S]));
  });

  it('jitter-45h: 30 s floor per wait, caps summed', () => {
    const rows = policyTimeline(PRESETS['jitter-45h'].policy);
    expect(rows.map((r) => r.earliestMs)).toEqual(cumulative(Array(7).fill(30 * S)));
    expect(rows.map((r) => r.latestMs)).toEqual(cumulative([1 * M, 5 * M, 30 * M, 2 * H, 6 * H, 12 * H, 24 * H]));
  });
});

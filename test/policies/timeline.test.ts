import { startPostern, type TestPostern } from '../support/postern.js';

/**
 * The presets' public timelines against the rules they reproduce. Every expected value is computed
 * here from those rules' wait tables written out as data, never from Postern's own schedule code.
 */

const S = 1000;
const M = 60 * S;
const H = 60 * M;

/** custral: the wait after each failure, and its "roughly this long after the first attempt" column. */
const CUSTRAL_WAITS = [5 * S, 30 * S, 2 * M, 10 * M, 1 * H, 5 * H, 18 * H];
const CUSTRAL_ROUGHLY = [0, 5 * S, 35 * S, 2 * M + 35 * S, 12 * M + 35 * S, 1 * H + 13 * M, 6 * H + 13 * M, 24 * H + 13 * M];
/** tourical: the cascade and the times it says an endpoint down since t=0 sees. */
const TOURICAL_WAITS = [1 * M, 5 * M, 30 * M, 2 * H, 12 * H];
const TOURICAL_SEEN_AT = [0, 1 * M, 6 * M, 36 * M, 2 * H + 36 * M, 14 * H + 36 * M];
/** kestrel: nominal delays are upper bounds (full jitter), base 2 s doubling to a 32 s cap. */
const KESTREL_NOMINAL = [2 * S, 4 * S, 8 * S, 16 * S, 32 * S];
/** jitter-45h: never less than 30 s; caps from docs/architecture.md (its source rules give no table). */
const JITTER45_FLOOR = 30 * S;
const JITTER45_CAPS = [1 * M, 5 * M, 30 * M, 2 * H, 6 * H, 12 * H, 24 * H];
/** vestiarion omits its table; docs/architecture.md assumes these. */
const VESTIARION_WAITS = [1 * M, 5 * M, 30 * M, 2 * H, 6 * H, 12 * H];
/** docs/architecture.md: standard waits, ±20 % jitter. */
const STANDARD_WAITS = [5 * S, 5 * M, 30 * M, 2 * H, 5 * H, 10 * H, 10 * H];

/** Running sums starting at 0: the start of each attempt relative to the first. */
function cumulative(waits: readonly number[]): number[] {
  const out = [0];
  for (const w of waits) out.push((out[out.length - 1] as number) + w);
  return out;
}

interface Row {
  attempt: number;
  earliestMs: number;
  latestMs: number;
}

let postern: TestPostern;

beforeAll(async () => {
  postern = await startPostern({ sender: false });
});
afterAll(async () => {
  await postern.close();
});

async function timeline(name: string): Promise<Row[]> {
  const r = await postern.api('GET', `/v1/policies/${name}/timeline`);
  expect(r.status).toBe(200);
  expect(r.body.name).toBe(name);
  return r.body.attempts as Row[];
}

test('GET /v1/policies lists the six presets with their seed numbers and attempt budgets', async () => {
  const r = await postern.api('GET', '/v1/policies');
  expect(r.status).toBe(200);
  const listed = (r.body.data as { name: string; seed: string | null; policy: { maxAttempts: number } }[]).map((p) => ({
    name: p.name,
    seed: p.seed,
    maxAttempts: p.policy.maxAttempts,
  }));
  expect(listed).toEqual([
    { name: 'standard', seed: null, maxAttempts: 8 },
    { name: 'custral', seed: '000', maxAttempts: 8 },
    { name: 'jitter-45h', seed: '001', maxAttempts: 8 },
    { name: 'tourical', seed: '002', maxAttempts: 6 },
    { name: 'kestrel', seed: '003', maxAttempts: 6 },
    { name: 'vestiarion', seed: '004', maxAttempts: 7 },
  ]);
});

test('custral: exact cumulative waits, each within a minute-rounding of the seed column', async () => {
  const rows = await timeline('custral');
  const exact = cumulative(CUSTRAL_WAITS);
  expect(rows.map((r) => r.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  expect(rows.map((r) => r.earliestMs)).toEqual(exact);
  expect(rows.map((r) => r.latestMs)).toEqual(exact);
  // The seed rounds 1 h 12 m 35 s to "1 hour 13 minutes" and so on: never by more than 30 s.
  rows.forEach((row, i) => expect(Math.abs(row.earliestMs - (CUSTRAL_ROUGHLY[i] as number))).toBeLessThanOrEqual(30 * S));
  expect(rows[5]?.earliestMs).toBe(1 * H + 12 * M + 35 * S);
  expect(rows[7]?.earliestMs).toBe(24 * H + 12 * M + 35 * S);
});

test('tourical: t=0, +1m, +6m, +36m, +2h36m, +14h36m exactly', async () => {
  const rows = await timeline('tourical');
  expect(cumulative(TOURICAL_WAITS)).toEqual(TOURICAL_SEEN_AT);
  expect(rows).toEqual(TOURICAL_SEEN_AT.map((t, i) => ({ attempt: i + 1, earliestMs: t, latestMs: t })));
});

test('kestrel: full jitter, so every retry may come at once; the latest adds up the nominal delays', async () => {
  const rows = await timeline('kestrel');
  expect(rows.map((r) => r.earliestMs)).toEqual([0, 0, 0, 0, 0, 0]);
  expect(rows.map((r) => r.latestMs)).toEqual(cumulative(KESTREL_NOMINAL));
  expect(rows.map((r) => r.latestMs)).toEqual([0, 2, 6, 14, 30, 62].map((s) => s * S));
});

test('jitter-45h: earliest in 30 s steps, latest the sum of the caps, about 45 h in all', async () => {
  const rows = await timeline('jitter-45h');
  expect(rows).toHaveLength(8);
  expect(rows.map((r) => r.earliestMs)).toEqual(cumulative(JITTER45_CAPS.map(() => JITTER45_FLOOR)));
  expect(rows.map((r) => r.latestMs)).toEqual(cumulative(JITTER45_CAPS));
  const totalMs = rows[7]?.latestMs ?? 0;
  expect(totalMs).toBeGreaterThan(44 * H);
  expect(totalMs).toBeLessThan(46 * H);
});

test('vestiarion: 7 attempts on the assumed fixed table', async () => {
  const rows = await timeline('vestiarion');
  const exact = cumulative(VESTIARION_WAITS);
  expect(rows).toEqual(exact.map((t, i) => ({ attempt: i + 1, earliestMs: t, latestMs: t })));
});

test('standard: ±20 % around the fixed waits', async () => {
  const rows = await timeline('standard');
  expect(rows.map((r) => r.earliestMs)).toEqual(cumulative(STANDARD_WAITS.map((w) => w * 0.8)));
  expect(rows.map((r) => r.latestMs)).toEqual(cumulative(STANDARD_WAITS.map((w) => w * 1.2)));
});

test('an unknown policy name is a JSON 404', async () => {
  const r = await postern.api('GET', '/v1/policies/nope/timeline');
  expect(r.status).toBe(404);
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  expect(r.body).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
});

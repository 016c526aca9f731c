import type { StatsSeries } from '@postern/store';
import { fastPolicy, startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * The overview's counters and the live feed's expiry are written by the sender about once a
 * second, not inside each finish: finished attempts show in `StatsRepository.read` shortly after
 * (per endpoint and per org, with their error codes), a live feed always has an expiry, and a
 * sender's close writes what it still holds.
 */

let postern: TestPostern;
let receiver: TestReceiver;

beforeAll(async () => {
  postern = await startPostern();
  receiver = await startReceiver((req) => (req.path === '/fail' ? 500 : 200));
});
afterAll(async () => {
  await postern?.close();
  await receiver?.close();
});

const base = () => receiver.url.replace(/\/hook$/, '');

/** What the overview shows of a series: attempts succeeded and failed, and failures by error code. */
const shown = (s: StatsSeries) => ({
  succeeded: s.buckets.reduce((n, b) => n + b.succeeded, 0),
  failed: s.buckets.reduce((n, b) => n + b.failed, 0),
  errors: s.errors,
});

async function post(target: TestPostern, apiKey: string, type: string, times: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < times; i++) {
    const r = await target.api('POST', '/v1/events', { key: apiKey, body: { type, data: { i } } });
    expect(r.status).toBe(202);
    ids.push(...(r.body.deliveries as { id: string }[]).map((d) => d.id));
  }
  return ids;
}

async function waitFinished(target: TestPostern, orgId: string, ids: string[]): Promise<void> {
  await waitUntil(`${ids.length} deliveries finished`, async () => (await target.store.deliveries.getMany(orgId, ids)).every((d) => d.status === 'succeeded' || d.status === 'failed'), 15_000, 50);
}

test('finished attempts show in the counters within about a second: per endpoint, per org, with error codes', async () => {
  const a = await postern.createOrg('counted-a');
  const b = await postern.createOrg('counted-b');
  const ok = await postern.createEndpoint(a.apiKey, { url: `${base()}/ok`, eventTypes: ['c.ok'], policy: fastPolicy(1) });
  const failing = await postern.createEndpoint(a.apiKey, { url: `${base()}/fail`, eventTypes: ['c.fail'], policy: fastPolicy(2) });
  await postern.createEndpoint(b.apiKey, { url: `${base()}/ok`, eventTypes: ['c.ok'], policy: fastPolicy(1) });
  await waitFinished(postern, a.id, [...(await post(postern, a.apiKey, 'c.ok', 3)), ...(await post(postern, a.apiKey, 'c.fail', 1))]);
  await waitFinished(postern, b.id, await post(postern, b.apiKey, 'c.ok', 2));

  const read = async (orgId: string, scope: 'endpoint' | 'org', id: string, window: 'hour' | 'day' = 'hour') => shown(await postern.store.stats.read(orgId, scope, id, window, Date.now()));
  const expected = {
    okEndpoint: { succeeded: 3, failed: 0, errors: [] },
    failingEndpoint: { succeeded: 0, failed: 2, errors: [{ code: 'http_500', count: 2 }] },
    orgA: { succeeded: 3, failed: 2, errors: [{ code: 'http_500', count: 2 }] },
    orgB: { succeeded: 2, failed: 0, errors: [] },
  };
  const now = async () => ({
    okEndpoint: await read(a.id, 'endpoint', ok.id),
    failingEndpoint: await read(a.id, 'endpoint', failing.id),
    orgA: await read(a.id, 'org', a.id),
    orgB: await read(b.id, 'org', b.id),
  });
  await waitUntil('the counters to show every finished attempt', async () => JSON.stringify(await now()) === JSON.stringify(expected), 5_000, 50).catch(async (err: Error) => {
    throw new Error(`${err.message}: ${JSON.stringify(await now())}`);
  });
  // The day window reads the same hashes by hour.
  expect(await read(a.id, 'org', a.id, 'day')).toEqual(expected.orgA);
  // Each counters hash keeps its time to live (a day and two hours); the attempts may have counted
  // in the hour before this one, moments ago.
  const hours = [Date.now(), Date.now() - 30_000].map((ms) => ms - (ms % 3_600_000));
  const ttls = await Promise.all(hours.map((h) => postern.redis.pttl(postern.store.keys.statsHour(a.id, 'org', a.id, h))));
  expect(Math.max(...ttls)).toBeGreaterThan(25 * 3_600_000);
}, 30_000);

test('the live feed always has an expiry: set by the finish that creates it, renewed by the sender after later ones', async () => {
  const org = await postern.createOrg('feed-expiry');
  await postern.createEndpoint(org.apiKey, { url: `${base()}/ok`, eventTypes: ['f.ok'], policy: fastPolicy(1) });
  const feed = postern.store.keys.orgLiveFeed(org.id);
  await waitFinished(postern, org.id, await post(postern, org.apiKey, 'f.ok', 1));
  const first = await postern.redis.pttl(feed);
  expect(first).toBeGreaterThan(3_590_000);
  expect(first).toBeLessThanOrEqual(3_600_000);

  // An entry added to a feed that has lost its expiry: only the sender's next flush can give it back.
  await postern.redis.persist(feed);
  await waitFinished(postern, org.id, await post(postern, org.apiKey, 'f.ok', 1));
  expect(await postern.redis.xlen(feed)).toBe(2);
  const renewed = await waitUntil('the feed to get its expiry back', async () => {
    const ttl = await postern.redis.pttl(feed);
    return ttl > 0 ? ttl : undefined;
  }, 5_000, 50);
  expect(renewed).toBeGreaterThan(3_590_000);
}, 30_000);

test('closing the sender writes the counts it still holds', async () => {
  // A flush interval far longer than the test: only the close can write these counts.
  const slow = await startPostern({ statsFlushIntervalMs: 600_000 });
  try {
    const org = await slow.createOrg('closing');
    const endpoint = await slow.createEndpoint(org.apiKey, { url: `${base()}/ok`, eventTypes: ['s.ok'], policy: fastPolicy(1) });
    await waitFinished(slow, org.id, await post(slow, org.apiKey, 's.ok', 2));
    const read = async () => shown(await slow.store.stats.read(org.id, 'endpoint', endpoint.id, 'hour', Date.now()));
    expect(await read()).toEqual({ succeeded: 0, failed: 0, errors: [] });
    await slow.stopSender();
    expect(await read()).toEqual({ succeeded: 2, failed: 0, errors: [] });
  } finally {
    await slow.close();
  }
}, 30_000);

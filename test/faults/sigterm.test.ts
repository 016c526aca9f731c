import { startPostern, fastPolicy, TEST_REDIS_URL, type TestPostern } from '../support/postern.js';
import { countingReceiver, type CountingReceiver } from '../support/counting-receiver.js';
import { waitUntil } from '../support/wait-until.js';
import { killAllApps, spawnSender, waitForSenders } from './support/app-process.js';
import { postEvents } from './support/load.js';

/**
 * Issue 5, SIGTERM: the sender stops taking work, lets in-flight attempts finish within
 * SHUTDOWN_GRACE_MS, gives its concurrency slots back, writes the overview's counters it still
 * holds and exits 0; nothing spent or lost. Attempts
 * that outlast the grace period are abandoned: the process still exits in time (code 1), frees
 * their slots, and the next sender re-runs them under the same attempt number.
 */

const CONCURRENCY = 8;
const SENDER_ENV = { REDIS_URL: TEST_REDIS_URL, SENDER_CONCURRENCY: String(CONCURRENCY), JOB_LOCK_DURATION_MS: '2000', STALLED_CHECK_INTERVAL_MS: '500' };

let postern: TestPostern;
let counting: CountingReceiver;

beforeAll(async () => {
  postern = await startPostern({ sender: false });
  counting = await countingReceiver(300);
});
afterAll(async () => {
  await killAllApps();
  await counting?.receiver.close();
  await postern?.close();
});

async function setUp(paths: string[]): Promise<{ apiKey: string; orgId: string; endpointIds: string[] }> {
  const { apiKey, id: orgId } = await postern.createOrg();
  const base = counting.receiver.url.replace(/\/hook$/, '');
  const endpointIds: string[] = [];
  for (const path of paths) endpointIds.push((await postern.createEndpoint(apiKey, { url: `${base}/${path}`, policy: fastPolicy(3, 20) })).id);
  return { apiKey, orgId, endpointIds };
}

async function slotsHeld(orgId: string, endpointIds: string[]): Promise<number> {
  const now = Date.now();
  const perEndpoint = await Promise.all(endpointIds.map((id) => postern.store.leases.inFlight(orgId, id, now)));
  const org = await postern.redis.zcount(postern.store.keys.orgLeases(orgId), `(${now}`, '+inf');
  return perEndpoint.reduce((a, b) => a + b, 0) + org;
}

test('SIGTERM: in-flight attempts finish, no new work is taken, slots are released, exit 0', async () => {
  const { apiKey, orgId, endpointIds } = await setUp(['a0', 'a1']);
  const sender = spawnSender({ ...SENDER_ENV, REDIS_PREFIX: postern.prefix, SHUTDOWN_GRACE_MS: '5000' });
  await waitForSenders(postern.queue, 1, [sender]);
  const deliveryIds = (await postEvents(postern.api, apiKey, 40)).flatMap((e) => e.deliveryIds);
  expect(deliveryIds).toHaveLength(80);

  await waitUntil('attempts in flight after some answered', () => counting.answered() >= 8 && counting.inFlight().length >= 4, 10_000, 5);
  const openAtTerm = counting.inFlight().map((r) => String(r.headers['webhook-delivery-id']));
  const requestsAtTerm = counting.receiver.requests.length;
  const termAt = Date.now();
  sender.signal('SIGTERM');
  const exit = await sender.exit;
  const tookMs = Date.now() - termAt;

  expect(exit).toEqual({ code: 0, signal: null });
  expect(tookMs).toBeLessThan(5000);
  // Stopped taking work: at most the attempts already started when the signal came.
  expect(counting.receiver.requests.length - requestsAtTerm).toBeLessThanOrEqual(CONCURRENCY);
  // The in-flight attempts finished and were recorded.
  const finishedOnes = await postern.store.deliveries.getMany(orgId, openAtTerm);
  expect(finishedOnes.map((d) => [d.status, d.attempts])).toEqual(openAtTerm.map(() => ['succeeded', 1]));
  expect(await slotsHeld(orgId, endpointIds)).toBe(0);
  // Nothing in flight, nothing spent on what was not sent.
  const all = await postern.store.deliveries.getMany(orgId, deliveryIds);
  expect(all.filter((d) => d.status === 'in_flight')).toEqual([]);
  const rest = all.filter((d) => d.status !== 'succeeded');
  expect(rest.length).toBeGreaterThan(0);
  expect(rest.every((d) => d.status === 'pending' && d.attempts === 0)).toBe(true);
  // The overview's counters it still held were written before it exited (it writes them about once
  // a second otherwise): every attempt it finished is counted, the last ones included.
  const counted = await postern.store.stats.read(orgId, 'org', orgId, 'hour', Date.now());
  expect(counted.buckets.reduce((n, b) => n + b.succeeded + b.failed, 0)).toBe(all.length - rest.length);

  const next = spawnSender({ ...SENDER_ENV, REDIS_PREFIX: postern.prefix });
  await waitUntil('every delivery succeeded', async () => (await postern.store.deliveries.getMany(orgId, deliveryIds)).every((d) => d.status === 'succeeded'), 20_000, 100).catch((err: Error) => {
    throw new Error(`${err.message}\n${next.output()}`);
  });
  const perDelivery = counting.perDelivery();
  expect(deliveryIds.map((id) => perDelivery.get(id))).toEqual(deliveryIds.map(() => 1));
  expect((await postern.store.deliveries.getMany(orgId, deliveryIds)).every((d) => d.attempts === 1)).toBe(true);
  await next.kill();
}, 60_000);

test('SIGTERM with attempts longer than SHUTDOWN_GRACE_MS: exits within the bound, frees the slots, the attempts run again with the same number', async () => {
  const { apiKey, orgId, endpointIds } = await setUp(['b0']);
  counting.setHoldMs(4000);
  const sender = spawnSender({ ...SENDER_ENV, REDIS_PREFIX: postern.prefix, SHUTDOWN_GRACE_MS: '1000' });
  await waitForSenders(postern.queue, 1, [sender]);
  const deliveryIds = (await postEvents(postern.api, apiKey, 4)).flatMap((e) => e.deliveryIds);
  await waitUntil('4 attempts in flight', () => counting.inFlight().filter((r) => r.path === '/b0').length === 4, 10_000, 5);

  const termAt = Date.now();
  sender.signal('SIGTERM');
  const exit = await sender.exit;
  expect(Date.now() - termAt).toBeLessThan(1000 + 2000);
  expect(exit.code).toBe(1);
  expect(await slotsHeld(orgId, endpointIds)).toBe(0);
  const abandoned = await postern.store.deliveries.getMany(orgId, deliveryIds);
  expect(abandoned.map((d) => [d.status, d.attempts])).toEqual(deliveryIds.map(() => ['in_flight', 1]));

  counting.setHoldMs(10);
  const next = spawnSender({ ...SENDER_ENV, REDIS_PREFIX: postern.prefix });
  await waitUntil('the abandoned attempts re-run and succeed', async () => (await postern.store.deliveries.getMany(orgId, deliveryIds)).every((d) => d.status === 'succeeded'), 20_000, 100).catch((err: Error) => {
    throw new Error(`${err.message}\n${next.output()}`);
  });
  const done = await postern.store.deliveries.getMany(orgId, deliveryIds);
  expect(done.every((d) => d.attempts === 1)).toBe(true);
  const requests = counting.receiver.requests.filter((r) => r.path === '/b0');
  expect(requests).toHaveLength(8);
  expect(requests.every((r) => r.headers['webhook-attempt'] === '1')).toBe(true);
}, 60_000);

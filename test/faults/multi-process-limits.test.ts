import { startPostern, fastPolicy, TEST_REDIS_URL, type TestPostern } from '../support/postern.js';
import { countingReceiver, type CountingReceiver } from '../support/counting-receiver.js';
import { waitUntil } from '../support/wait-until.js';
import { killAllApps, spawnSender, waitForSenders, type AppProcess } from './support/app-process.js';
import { postEvents } from './support/load.js';

/**
 * Issue 5: the per-endpoint (4) and per-org (20) limits hold across every sender process, counted
 * at the receiver: 3 sender processes, 2,000 deliveries over 10 endpoints of one org.
 */

const ENDPOINTS = 10;
const EVENTS = 200;
/** Each sender alone may run 10 attempts at once: an org peak above 10 proves several sent together. */
const PER_SENDER = 10;

let postern: TestPostern;
let counting: CountingReceiver;
const senders: AppProcess[] = [];

beforeAll(async () => {
  postern = await startPostern({ sender: false });
  counting = await countingReceiver(() => 5 + Math.random() * 5);
});
afterAll(async () => {
  await killAllApps();
  await counting?.receiver.close();
  await postern?.close();
});

test('3 sender processes: at most 4 in flight per endpoint and 20 per org, every delivery succeeds, no attempt spent on waiting', async () => {
  const { apiKey, id: orgId } = await postern.createOrg();
  const base = counting.receiver.url.replace(/\/hook$/, '');
  for (let i = 0; i < ENDPOINTS; i++) {
    await postern.createEndpoint(apiKey, { url: `${base}/ep${i}`, policy: fastPolicy(3, 20, { concurrency: { perEndpoint: 4, perOrg: 20 } }) });
  }
  for (let i = 0; i < 3; i++) {
    senders.push(spawnSender({ REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: postern.prefix, SENDER_CONCURRENCY: String(PER_SENDER) }));
  }
  await waitForSenders(postern.queue, 3, senders);

  const events = await postEvents(postern.api, apiKey, EVENTS, 10);
  const deliveryIds = events.flatMap((e) => e.deliveryIds);
  expect(deliveryIds).toHaveLength(2000);

  await waitUntil('every delivery succeeded', async () => {
    const ds = await postern.store.deliveries.getMany(orgId, deliveryIds);
    return ds.every((d) => d.status === 'succeeded');
  }, 60_000, 200).catch((err: Error) => {
    throw new Error(`${err.message}\n${senders.map((s) => s.output()).join('\n')}`);
  });

  const peaks = [...counting.peak.values()];
  expect(peaks).toHaveLength(ENDPOINTS);
  expect(Math.max(...peaks)).toBeLessThanOrEqual(4);
  expect(counting.orgPeak()).toBeLessThanOrEqual(20);
  // The limits were exercised, by several processes at once.
  expect(Math.max(...peaks)).toBe(4);
  expect(counting.orgPeak()).toBeGreaterThan(PER_SENDER);
  // Waiting for a slot spent nothing: one attempt each, one request each.
  // A second attempt is legitimate only after a real failure of the first (on a loaded 2-core
  // machine a request can time out); every attempt spent must have been a request sent.
  const ds = await postern.store.deliveries.getMany(orgId, deliveryIds);
  const retried = ds.filter((d) => d.attempts !== 1);
  const retriedErrors = await Promise.all(retried.map(async (d) => (await postern.store.deliveries.getAttempts(orgId, d.id)).map((a) => a.error)));
  expect(retriedErrors.flat().filter((e) => e !== null && !/^(timeout|connection_failed)/.test(e))).toEqual([]);
  expect(retried.length).toBeLessThanOrEqual(20);
  const attemptsSpent = ds.reduce((n, d) => n + d.attempts, 0);
  expect(counting.receiver.requests.length).toBeGreaterThanOrEqual(2000);
  expect(counting.receiver.requests.length).toBeLessThanOrEqual(attemptsSpent);
  expect(senders.every((s) => !s.exited)).toBe(true);
}, 90_000);

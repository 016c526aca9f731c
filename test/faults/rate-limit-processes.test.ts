import { startPostern, fastPolicy, TEST_REDIS_URL, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';
import { killAllApps, spawnSender, waitForSenders, type AppProcess } from './support/app-process.js';
import { postEvents } from './support/load.js';

/**
 * Issue 13: `rateLimit: {perSecond: 20}` bounds requests to an endpoint across every sender
 * process: two sender processes, 120 events; no 1-second window holds more than 20 + burst
 * attempt starts, and waiting for the rate spends no attempt.
 */

const EVENTS = 120;
const RATE = { perSecond: 20, burst: 0 };

let postern: TestPostern;
let receiver: TestReceiver;
const senders: AppProcess[] = [];

beforeAll(async () => {
  postern = await startPostern({ sender: false });
  receiver = await startReceiver();
});
afterAll(async () => {
  await killAllApps();
  await receiver?.close();
  await postern?.close();
});

/** The most of `times` (ms) that fall in any half-open window [t, t + 1000). */
function maxInOneSecond(times: readonly number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let max = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! >= 1000) start++;
    max = Math.max(max, end - start + 1);
  }
  return max;
}

test('2 sender processes, rateLimit 20/s: no 1-second window over 20 + burst, every delivery succeeds with one attempt', async () => {
  const { apiKey, id: orgId } = await postern.createOrg();
  const ep = await postern.createEndpoint(apiKey, { url: receiver.url, policy: fastPolicy(3, 20, { rateLimit: { perSecond: RATE.perSecond }, concurrency: { perEndpoint: 10, perOrg: 20 } }) });
  expect(ep.policy.rateLimit).toEqual(RATE);
  for (let i = 0; i < 2; i++) senders.push(spawnSender({ REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: postern.prefix, SENDER_CONCURRENCY: '20' }));
  await waitForSenders(postern.queue, 2, senders);

  const events = await postEvents(postern.api, apiKey, EVENTS, 10);
  const deliveryIds = events.flatMap((e) => e.deliveryIds);
  await waitUntil('every delivery succeeded', async () => (await postern.store.deliveries.getMany(orgId, deliveryIds)).every((d) => d.status === 'succeeded'), 60_000, 200).catch((err: Error) => {
    throw new Error(`${err.message}\n${senders.map((s) => s.output()).join('\n')}`);
  });

  // Attempt starts as the claim recorded them (the senders' clock, the one the limit runs on).
  const starts = (await Promise.all(deliveryIds.map((id) => postern.store.deliveries.getAttempts(orgId, id)))).flat().map((a) => a.startedAt);
  const maxStarts = maxInOneSecond(starts);
  const maxArrivals = maxInOneSecond(receiver.requests.map((r) => r.at));
  const spanS = (Math.max(...starts) - Math.min(...starts)) / 1000;
  console.log(`rateLimit 20/s over 2 senders: max ${maxStarts} attempt starts and ${maxArrivals} arrivals in any 1-s window; ${starts.length} attempts over ${spanS.toFixed(1)} s`);
  expect(maxStarts).toBeLessThanOrEqual(RATE.perSecond + RATE.burst);
  // At the receiver, the few ms between claim and request (two busy processes on a shared machine)
  // can move a request across a window's edge: reported, gated loosely (README, "Rate limits").
  expect(maxArrivals).toBeLessThanOrEqual(Math.ceil((RATE.perSecond + RATE.burst) * 1.25));
  // The limit was reached, not trivially met: 120 requests at 20/s take about 6 s.
  expect(maxStarts).toBeGreaterThanOrEqual(RATE.perSecond - 2);
  expect(spanS).toBeGreaterThan((EVENTS - 1) / RATE.perSecond - 0.5);
  // Waiting for the rate spends nothing: one attempt and one request each.
  const ds = await postern.store.deliveries.getMany(orgId, deliveryIds);
  expect(ds.every((d) => d.attempts === 1)).toBe(true);
  expect(receiver.requests).toHaveLength(EVENTS);
  expect(senders.every((s) => !s.exited)).toBe(true);
}, 90_000);

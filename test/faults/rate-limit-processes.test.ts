import { startPostern, fastPolicy, TEST_REDIS_URL, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';
import { killAllApps, spawnSender, waitForSenders, type AppProcess } from './support/app-process.js';
import { postEvents } from './support/load.js';
import { watchReceiverStalls } from '../../scripts/soak/receivers.js';
import { RATE_SEND_LAG_MS } from '@postern/shared';

/**
 * `rateLimit: {perSecond: 20}` bounds requests to an endpoint across every sender process: two
 * sender processes, 120 events; no 1-second window holds more than 20 + burst attempt starts, nor
 * more than that (and one for the receiver's own delays) arrivals at the receiver, and waiting for
 * the rate spends no attempt. A request sent long after its turn (here: a pre-attempt check that
 * holds the first 800 ms of questions) takes a new turn first, so late requests do not bunch up.
 *
 * The arrivals of the first test are judged only in windows where every request reached the
 * receiver within RATE_SEND_LAG_MS of its attempt's start: the bound at the receiver rests on
 * requests leaving that soon after their turns, which a machine busy enough to hold a sender
 * process or this one (the receiver's) for longer cannot keep, and no code of ours can make it.
 * Attempt starts, the limiter's own decisions, are judged everywhere.
 */

const EVENTS = 120;
const RATE = { perSecond: 20, burst: 0 };

/** What the receiver's own event loop and the loopback hop may shift one arrival by, in requests per window. */
const RECEIVER_SLACK = 1;

let postern: TestPostern;
let receiver: TestReceiver;
let check: TestReceiver;
const senders: AppProcess[] = [];

beforeAll(async () => {
  postern = await startPostern({ sender: false });
  receiver = await startReceiver();
  // A pre-attempt check that holds every question of its first 800 ms and then says send to all
  // of them at once: those requests leave together, long after their turns.
  let firstAskedAt = 0;
  check = await startReceiver(async (_req, _n, res): Promise<'handled'> => {
    firstAskedAt ||= Date.now();
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, firstAskedAt + 800 - Date.now())));
    res.setHeader('content-type', 'application/json');
    res.end('{"action":"send"}');
    return 'handled';
  }, '/check');
});
afterAll(async () => {
  await killAllApps();
  await receiver?.close();
  await check?.close();
  await postern?.close();
});

/**
 * The most of `times` (ms) that fall in any half-open window [t, t + 1000), leaving out windows
 * that overlap one of `stalls` ([from, to] ms): while the receiver's own event loop (this test
 * process's) is held up, requests that reached it on time are read together afterwards and look
 * bunched (the soak's checker leaves those windows out the same way).
 */
function maxInOneSecond(times: readonly number[], stalls: readonly [number, number][] = []): number {
  const sorted = [...times].sort((a, b) => a - b);
  let max = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! >= 1000) start++;
    const from = sorted[start]!;
    if (stalls.some(([a, b]) => a < sorted[end]! && b >= from)) continue;
    max = Math.max(max, end - start + 1);
  }
  return max;
}

/**
 * Arrival times as [t, t] stalls for every request that reached the receiver more than
 * RATE_SEND_LAG_MS after its attempt started (matched by `webhook-delivery-id`), so that
 * {@link maxInOneSecond} leaves out the windows that hold one.
 */
function lateArrivals(requests: readonly { at: number; headers: Record<string, unknown> }[], startedAt: ReadonlyMap<string, number>): [number, number][] {
  return requests.filter((r) => r.at - (startedAt.get(String(r.headers['webhook-delivery-id'])) ?? -Infinity) > RATE_SEND_LAG_MS).map((r) => [r.at, r.at]);
}

test('2 sender processes, rateLimit 20/s: no 1-second window over 20 + burst, every delivery succeeds with one attempt', async () => {
  const { apiKey, id: orgId } = await postern.createOrg();
  const ep = await postern.createEndpoint(apiKey, { url: receiver.url, policy: fastPolicy(3, 20, { rateLimit: { perSecond: RATE.perSecond }, concurrency: { perEndpoint: 10, perOrg: 20 } }) });
  expect(ep.policy.rateLimit).toEqual(RATE);
  for (let i = 0; i < 2; i++) senders.push(spawnSender({ REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: postern.prefix, SENDER_CONCURRENCY: '20' }));
  await waitForSenders(postern.queue, 2, senders);

  const stalls: [number, number][] = [];
  const stopWatching = watchReceiverStalls(stalls);
  const events = await postEvents(postern.api, apiKey, EVENTS, 10);
  const deliveryIds = events.flatMap((e) => e.deliveryIds);
  await waitUntil('every delivery succeeded', async () => (await postern.store.deliveries.getMany(orgId, deliveryIds)).every((d) => d.status === 'succeeded'), 60_000, 200).catch((err: Error) => {
    throw new Error(`${err.message}\n${senders.map((s) => s.output()).join('\n')}`);
  });

  // Attempt starts as the claim recorded them (the senders' clock, the one the limit runs on).
  const attempts = await Promise.all(deliveryIds.map((id) => postern.store.deliveries.getAttempts(orgId, id)));
  const starts = attempts.flat().map((a) => a.startedAt);
  const maxStarts = maxInOneSecond(starts);
  stopWatching();
  const late = lateArrivals(receiver.requests, new Map(deliveryIds.map((id, i) => [id, attempts[i]![0]!.startedAt])));
  const maxArrivals = maxInOneSecond(receiver.requests.map((r) => r.at), [...stalls, ...late]);
  const spanS = (Math.max(...starts) - Math.min(...starts)) / 1000;
  console.log(`rateLimit 20/s over 2 senders: max ${maxStarts} attempt starts and ${maxArrivals} arrivals in any 1-s window (${stalls.length} receiver stalls and ${late.length} requests more than ${RATE_SEND_LAG_MS} ms after their starts left out); ${starts.length} attempts over ${spanS.toFixed(1)} s`);
  expect(maxStarts).toBeLessThanOrEqual(RATE.perSecond + RATE.burst);
  // At the receiver too, where requests left within RATE_SEND_LAG_MS of their turns (docs: "Rate limits").
  expect(maxArrivals).toBeLessThanOrEqual(RATE.perSecond + RATE.burst + RECEIVER_SLACK);
  // The limit was reached, not trivially met: 120 requests at 20/s take about 6 s.
  expect(maxStarts).toBeGreaterThanOrEqual(RATE.perSecond - 2);
  expect(spanS).toBeGreaterThan((EVENTS - 1) / RATE.perSecond - 0.5);
  // Waiting for the rate spends nothing: one attempt and one request each.
  const ds = await postern.store.deliveries.getMany(orgId, deliveryIds);
  expect(ds.every((d) => d.attempts === 1)).toBe(true);
  expect(receiver.requests).toHaveLength(EVENTS);
  expect(senders.every((s) => !s.exited)).toBe(true);
}, 90_000);

test('2 sender processes, rateLimit 20/s + burst 5, a check that releases 800 ms of sends at once: still no 1-second window over 25 at the receiver', async () => {
  const { apiKey, id: orgId } = await postern.createOrg();
  expect((await postern.api('PATCH', '/v1/org', { key: apiKey, body: { preAttemptCheckUrl: check.url } })).status).toBe(200);
  const rate = { perSecond: 20, burst: 5 };
  const path = '/hook?late';
  await postern.createEndpoint(apiKey, { url: `${receiver.url}?late`, policy: fastPolicy(3, 20, { rateLimit: rate, preAttemptCheck: 'every', concurrency: { perEndpoint: 20, perOrg: 40 } }) });
  await waitForSenders(postern.queue, 2, senders);
  const stalls: [number, number][] = [];
  const stopWatching = watchReceiverStalls(stalls);
  const events = await postEvents(postern.api, apiKey, EVENTS, 10);
  const deliveryIds = events.flatMap((e) => e.deliveryIds);
  await waitUntil('every delivery succeeded', async () => (await postern.store.deliveries.getMany(orgId, deliveryIds)).every((d) => d.status === 'succeeded'), 60_000, 200);
  stopWatching();
  const arrivals = receiver.requests.filter((r) => r.path === path).map((r) => r.at);
  const maxArrivals = maxInOneSecond(arrivals, stalls);
  console.log(`rateLimit 20/s + 5, 800 ms of sends released at once: max ${maxArrivals} arrivals in any 1-s window`);
  expect(arrivals).toHaveLength(EVENTS);
  expect(maxArrivals).toBeLessThanOrEqual(rate.perSecond + rate.burst + RECEIVER_SLACK);
}, 90_000);

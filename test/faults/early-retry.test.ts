import { startPostern, TEST_REDIS_URL, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';
import { killAllApps, spawnSender, waitForSenders, type AppProcess } from './support/app-process.js';
import { postEvents } from './support/load.js';

/**
 * A retry waits its scheduled time, whoever runs its job. A wake-up meant for a delivery while it
 * was parked (waiting for a concurrency slot) can reach its job after that delivery was attempted
 * and rescheduled; it must not start the next attempt early. With two senders that happened to a
 * few deliveries in a hundred: attempt 2 started milliseconds after attempt 1 instead of 60 s later.
 */

/** A minute between attempts: nothing in these tests may see a second attempt. */
const WAIT_POLICY = { schedule: { kind: 'fixed', waitsMs: [60_000, 60_000] }, maxAttempts: 3, jitterRatio: 0, timeout: { ms: 5000 } };

let postern: TestPostern;
let receiver: TestReceiver;
const senders: AppProcess[] = [];

beforeAll(async () => {
  postern = await startPostern();
  // 500 to every first attempt, 200 to anything after it.
  receiver = await startReceiver((req) => (req.headers['webhook-attempt'] === '1' ? 500 : 200));
});
afterAll(async () => {
  await killAllApps();
  await receiver?.close();
  await postern?.close();
});

const attemptsAt = (path: string, deliveryId: string) =>
  receiver.requests.filter((r) => r.path === path && r.headers['webhook-delivery-id'] === deliveryId).map((r) => Number(r.headers['webhook-attempt']));

test('a wake-up that reaches a rescheduled delivery\'s job does not start its next attempt early', async () => {
  const { apiKey, id: orgId } = await postern.createOrg();
  const endpoint = await postern.createEndpoint(apiKey, { url: `${receiver.url}?stale-wake`, policy: WAIT_POLICY });
  const [event] = await postEvents(postern.api, apiKey, 1);
  const deliveryId = event!.deliveryIds[0]!;
  const job = await waitUntil('attempt 1 failed and the retry is scheduled', async () => {
    const d = await postern.store.deliveries.get(orgId, deliveryId);
    if (d?.status !== 'pending' || d.attempts !== 1 || d.nextAttemptAt === null) return false;
    const j = await postern.queue.getJob(deliveryId);
    return j && (await j.getState()) === 'delayed' ? { job: j, nextAttemptAt: d.nextAttemptAt } : false;
  });
  expect(job.nextAttemptAt).toBeGreaterThan(Date.now() + 50_000);

  // What a release's wake-up does: promote the delivery's delayed job.
  await job.job.promote();
  const after = await waitUntil('the job waits again, or attempt 2 ran', async () => {
    if (attemptsAt('/hook?stale-wake', deliveryId).length > 1) return { early: true, delay: 0 };
    const j = await postern.queue.getJob(deliveryId);
    if (!j || (await j.getState()) !== 'delayed') return false;
    // The delayed set's score is the time the job runs at, times 4096 (BullMQ).
    const score = await postern.redis.zscore(postern.queue.keys.delayed!, deliveryId);
    return score === null ? false : { early: false, delay: Math.floor(Number(score) / 4096) };
  });
  expect(after.early).toBe(false);
  expect(after.delay).toBeGreaterThanOrEqual(job.nextAttemptAt);
  const d = await postern.store.deliveries.get(orgId, deliveryId);
  expect(d).toMatchObject({ status: 'pending', attempts: 1, nextAttemptAt: job.nextAttemptAt });
  expect(attemptsAt('/hook?stale-wake', deliveryId)).toEqual([1]);
  expect(endpoint.id).toBeDefined();
});

test('send-now still brings a waiting retry forward: the attempt runs now', async () => {
  const { apiKey, id: orgId } = await postern.createOrg();
  await postern.createEndpoint(apiKey, { url: `${receiver.url}?send-now`, policy: WAIT_POLICY });
  const [event] = await postEvents(postern.api, apiKey, 1);
  const deliveryId = event!.deliveryIds[0]!;
  await waitUntil('the retry is scheduled', async () => {
    const j = await postern.queue.getJob(deliveryId);
    return j !== undefined && (await j.getState()) === 'delayed' && (await postern.store.deliveries.get(orgId, deliveryId))?.attempts === 1;
  });
  const r = await postern.api('POST', `/v1/deliveries/${deliveryId}/send-now`, { key: apiKey });
  expect(r.status).toBe(202);
  await waitUntil('attempt 2 succeeded', async () => (await postern.store.deliveries.get(orgId, deliveryId))?.status === 'succeeded');
  expect(attemptsAt('/hook?send-now', deliveryId)).toEqual([1, 2]);
});

test('a waiting retry whose endpoint was deleted is cancelled at once; send-now then is 409 and sends nothing', async () => {
  const { apiKey, id: orgId } = await postern.createOrg();
  const endpoint = await postern.createEndpoint(apiKey, { url: `${receiver.url}?send-now-deleted`, policy: WAIT_POLICY });
  const [event] = await postEvents(postern.api, apiKey, 1);
  const deliveryId = event!.deliveryIds[0]!;
  await waitUntil('the retry is scheduled', async () => (await postern.store.deliveries.get(orgId, deliveryId))?.attempts === 1);
  expect((await postern.api('DELETE', `/v1/endpoints/${endpoint.id}`, { key: apiKey })).status).toBe(204);
  // Still pending for the moment its woken job takes to run: send-now says the endpoint is gone.
  const early = await postern.api('POST', `/v1/deliveries/${deliveryId}/send-now`, { key: apiKey });
  expect(early.status).toBe(409);
  expect(['endpoint_inactive', 'delivery_finished']).toContain(early.body.error.code);
  const ended = await waitUntil('the delivery cancelled', async () => {
    const d = await postern.store.deliveries.get(orgId, deliveryId);
    return d?.status === 'cancelled' ? d : undefined;
  });
  expect(ended.cancelReason).toBe('endpoint_deleted');
  const r = await postern.api('POST', `/v1/deliveries/${deliveryId}/send-now`, { key: apiKey });
  expect(r).toMatchObject({ status: 409, body: { error: { code: 'delivery_finished' } } });
  expect(attemptsAt('/hook?send-now-deleted', deliveryId)).toEqual([1]);
});

test('two sender processes, 4 slots, 8 events at once to each of 6 endpoints: every retry waits its minute', async () => {
  await postern.stopSender();
  const { apiKey, id: orgId } = await postern.createOrg();
  const paths: string[] = [];
  for (let i = 0; i < 6; i++) {
    paths.push(`/hook?ep${i}`);
    await postern.createEndpoint(apiKey, { url: `${receiver.url}?ep${i}`, policy: { ...WAIT_POLICY, concurrency: { perEndpoint: 4, perOrg: 100 } } });
  }
  for (let i = 0; i < 2; i++) senders.push(spawnSender({ REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: postern.prefix, SENDER_CONCURRENCY: '16' }));
  await waitForSenders(postern.queue, 2, senders);

  const events = await postEvents(postern.api, apiKey, 8, 8);
  const deliveryIds = events.flatMap((e) => e.deliveryIds);
  expect(deliveryIds).toHaveLength(48);
  // Every first attempt is done and every job waits out its minute (an early attempt 2 would have
  // succeeded by then: the receiver answers 200 to it).
  await waitUntil('every delivery attempted once and waiting', async () => {
    const ds = await postern.store.deliveries.getMany(orgId, deliveryIds);
    if (!ds.every((d) => d.attempts >= 1 && d.status !== 'in_flight')) return false;
    const states = await Promise.all(deliveryIds.map(async (id) => (await postern.queue.getJob(id))?.getState()));
    return ds.every((d, i) => d.status !== 'pending' || states[i] === 'delayed');
  }, 30_000, 100);
  const early = (await postern.store.deliveries.getMany(orgId, deliveryIds)).filter((d) => d.status !== 'pending' || d.attempts !== 1).map((d) => `${d.id}: ${d.status} after ${d.attempts}`);
  expect(early).toEqual([]);
  const seen = paths.flatMap((p) => receiver.requests.filter((r) => r.path === p).map((r) => r.headers['webhook-attempt']));
  expect(seen).toHaveLength(48);
  expect(new Set(seen)).toEqual(new Set(['1']));
}, 60_000);

import { Redis } from 'ioredis';
import type { Queue } from 'bullmq';
import { createDeliveryQueue, createKeySchema, createStore } from '@postern/store';
import { apiClient, type ApiClient } from '../support/api-client.js';
import { fastPolicy, TEST_ADMIN_TOKEN } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';
import { killAllApps, spawnIngest, spawnSender, waitForSenders, type AppProcess, type IngestProcess } from './support/app-process.js';
import { duplicateRequests, startProducer } from './support/load.js';
import { startPrivateRedis, type PrivateRedis } from './support/private-redis.js';

/**
 * Issue 5: Redis unreachable for a few seconds (a test-owned redis-server, stopped and started
 * again). Ingest answers 503 with a clear error, fast, and never 202 for an event it did not
 * store; the sender reconnects by itself; afterwards every event that got a 202 is delivered.
 */

const PREFIX = 'outage';
let redis: PrivateRedis;
let ingest: IngestProcess;
let sender: AppProcess;
let receiver: TestReceiver;
let conn: Redis;
let queue: Queue;
let api: ApiClient;

beforeAll(async () => {
  redis = await startPrivateRedis({ appendfsync: 'everysec' });
  const env = { REDIS_URL: redis.url, REDIS_PREFIX: PREFIX };
  [ingest, receiver] = await Promise.all([spawnIngest(env), startReceiver()]);
  // What an outage cuts off comes back by itself, after a delay: a job whose fetch lost its answer
  // stays locked until its lock expires, and a wake-up lost with a release's answer is covered by
  // the park safety delay. Seconds here; 30 s and 1–2 min by default.
  sender = spawnSender({ ...env, JOB_LOCK_DURATION_MS: '4000', STALLED_CHECK_INTERVAL_MS: '1000', PARK_SAFETY_DELAY_MS: '2000' });
  conn = new Redis(redis.url, { maxRetriesPerRequest: null });
  conn.on('error', () => undefined); // refused while Redis is down, on purpose
  queue = createDeliveryQueue(conn, createKeySchema(PREFIX).queuePrefix(0));
  queue.on('error', () => undefined);
  await waitForSenders(queue, 1, [sender]);
  api = apiClient(ingest.baseUrl);
}, 60_000);
afterAll(async () => {
  await killAllApps();
  await receiver?.close();
  await queue?.close();
  conn?.disconnect();
  await redis?.close();
});

test('Redis down for a few seconds: 503 fast and clear, no 202 lost, the sender reconnects by itself', async () => {
  const org = await api('POST', '/v1/orgs', { key: TEST_ADMIN_TOKEN, body: { name: 'outage' } });
  expect(org.status).toBe(201);
  const key = org.body.apiKey as string;
  const orgId = org.body.id as string;
  expect((await api('POST', '/v1/endpoints', { key, body: { url: receiver.url, policy: fastPolicy(5, 200) } })).status).toBe(201);

  const producer = startProducer(api, key, 2);
  try {
    await waitUntil('20 events accepted', () => producer.accepted().length >= 20, 20_000);
    await redis.stop();
    const stoppedAt = Date.now();
    const downAt = producer.answers.length;
    await waitUntil('5 events refused', () => producer.answers.slice(downAt).filter((a) => a.status === 503).length >= 5, 10_000);
    const readyStartedAt = Date.now();
    const ready = await api('GET', '/readyz');
    expect(Date.now() - readyStartedAt).toBeLessThan(3000);
    expect(ready.status).toBe(503);
    expect(ready.body.failing).toContain('redis');
    // Down for 3 s in all, then back with its data.
    await new Promise((r) => setTimeout(r, Math.max(0, stoppedAt + 3000 - Date.now())));
    await redis.start();
    const upAt = producer.answers.length;
    await waitUntil('20 events accepted after the restart', () => producer.answers.slice(upAt).filter((a) => a.status === 202).length >= 20, 30_000);
  } finally {
    await producer.stop();
  }

  const refused = producer.answers.filter((a) => a.status !== 202);
  expect(refused.length).toBeGreaterThanOrEqual(5);
  // Every refusal is a clear, quick 503: never a 500, a hang or a dropped connection.
  const unclear = refused.filter((a) => a.status !== 503).map((a) => [a.status, a.body]);
  if (unclear.length > 0) throw new Error(`answers other than 202 and 503: ${JSON.stringify(unclear)}\n${ingest.output()}`);
  for (const a of refused) {
    expect(a.body.error.code).toBe('service_unavailable');
    expect(a.body.error.message).toMatch(/unavailable/);
    expect(a.headers?.get('retry-after')).toBeTruthy();
  }
  const slowestRefusalMs = Math.max(...refused.map((a) => a.ms));
  expect(slowestRefusalMs).toBeLessThan(2500);

  // Every 202 is delivered, by the same sender process: it reconnected by itself.
  const accepted = producer.accepted();
  await waitUntil('every accepted event delivered', () => {
    const seen = new Set(receiver.requests.map((r) => r.headers['webhook-id']));
    return accepted.every((id) => seen.has(id));
  }, 30_000, 100).catch(async (err: Error) => {
    const seen = new Set(receiver.requests.map((r) => r.headers['webhook-id']));
    const store = createStore({ redis: conn, prefix: PREFIX });
    const missing = await Promise.all(
      accepted.filter((id) => !seen.has(id)).map(async (eventId) => {
        const event = await store.events.get(orgId, eventId);
        const deliveries = await store.deliveries.getMany(orgId, event?.deliveryIds ?? []);
        const states = await Promise.all(deliveries.map(async (d) => (await queue.getJob(d.id))?.getState() ?? 'no job'));
        return { eventId, deliveries: deliveries.map((d, i) => ({ id: d.id, status: d.status, attempts: d.attempts, job: states[i] })) };
      }),
    );
    throw new Error(`${err.message}\nnot delivered: ${JSON.stringify(missing)}\n${sender.output()}`);
  });
  console.info(`redis-outage: ${accepted.length} events got 202 and were all delivered (${duplicateRequests(receiver)} duplicate requests); ${refused.length} got 503, the slowest in ${slowestRefusalMs} ms`);
  expect(sender.exited).toBe(false);
  expect((await api('GET', '/readyz')).status).toBe(200);
}, 90_000);

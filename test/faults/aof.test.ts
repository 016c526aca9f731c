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
 * Issue 5 and README's Redis settings: with `appendonly yes` and `appendfsync always`, `kill -9`
 * of Redis mid-load and a restart from its AOF lose no event that got a 202: each is still stored
 * and is delivered.
 */

const PREFIX = 'aof';
let redis: PrivateRedis;
let ingest: IngestProcess;
let sender: AppProcess;
let receiver: TestReceiver;
let conn: Redis;
let queue: Queue;
let api: ApiClient;

beforeAll(async () => {
  redis = await startPrivateRedis({ appendfsync: 'always' });
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

test('kill -9 of Redis under load: every event that got 202 survives the restart and is delivered', async () => {
  expect(await conn.config('GET', 'appendfsync')).toEqual(['appendfsync', 'always']);
  expect(await conn.config('GET', 'appendonly')).toEqual(['appendonly', 'yes']);
  const org = await api('POST', '/v1/orgs', { key: TEST_ADMIN_TOKEN, body: { name: 'aof' } });
  const key = org.body.apiKey as string;
  const orgId = org.body.id as string;
  expect((await api('POST', '/v1/endpoints', { key, body: { url: receiver.url, policy: fastPolicy(5, 200) } })).status).toBe(201);

  const producer = startProducer(api, key, 4);
  let acceptedBeforeKill = 0;
  try {
    await waitUntil('100 events accepted', () => producer.accepted().length >= 100, 30_000);
    await redis.kill9();
    acceptedBeforeKill = producer.accepted().length;
    const downAt = producer.answers.length;
    await waitUntil('events refused while Redis is gone', () => producer.answers.slice(downAt).filter((a) => a.status === 503).length >= 5, 10_000);
    await redis.start();
    const upAt = producer.answers.length;
    await waitUntil('20 events accepted after the restart', () => producer.answers.slice(upAt).filter((a) => a.status === 202).length >= 20, 30_000);
  } finally {
    await producer.stop();
  }
  const unclear = producer.answers.filter((a) => a.status !== 202 && a.status !== 503).map((a) => [a.status, a.body]);
  if (unclear.length > 0) throw new Error(`answers other than 202 and 503: ${JSON.stringify(unclear)}\n${ingest.output()}`);

  const accepted = producer.accepted();
  const store = createStore({ redis: conn, prefix: PREFIX });
  const stored = await Promise.all(accepted.map((id) => store.events.get(orgId, id)));
  expect(accepted.filter((_, i) => stored[i] === null)).toEqual([]);
  await waitUntil('every accepted event delivered', () => {
    const seen = new Set(receiver.requests.map((r) => r.headers['webhook-id']));
    return accepted.every((id) => seen.has(id));
  }, 30_000, 100).catch((err: Error) => {
    throw new Error(`${err.message}\n${sender.output()}`);
  });
  console.info(`aof: ${acceptedBeforeKill} events got 202 before kill -9, ${accepted.length} in all; all stored and delivered (${duplicateRequests(receiver)} duplicate requests)`);
}, 90_000);

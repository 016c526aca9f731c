import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { createIdFactory } from '@postern/shared';
import { createDeliveryQueues, createRedisConnection, createStore } from '@postern/store';
import { createApp } from '@postern/ingest';
import { createSenderHttp } from '@postern/sender';
import type { Redis } from 'ioredis';
import type { Queue } from 'bullmq';
import { deleteByPrefix, startPostern, TEST_ADMIN_TOKEN, TEST_REDIS_URL, type TestPostern } from '../support/postern.js';
import { spawnApp, type SpawnedApp } from '../support/spawn-app.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Issue 6 health: `/healthz` (process alive) and `/readyz` (Redis reachable, worker running) on
 * both apps; 503 names the failing check. The last tests run the real `main.ts` of each app.
 */

let postern: TestPostern;
let closedPort: number;
const servers: Server[] = [];
const deadRedis: Redis[] = [];
const queues: Queue[] = [];
const spawned: SpawnedApp[] = [];

beforeAll(async () => {
  postern = await startPostern();
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
});

afterAll(async () => {
  for (const app of spawned) await app.stop();
  for (const s of servers) await new Promise((resolve) => s.close(resolve));
  for (const q of queues) await q.close().catch(() => undefined);
  for (const r of deadRedis) r.disconnect();
  await postern.close();
});

async function listen(server: Server): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A Redis client for a port where nothing listens. */
function unreachableRedis(role: 'api' | 'worker'): Redis {
  // disconnectTimeout: ioredis otherwise keeps a 2 s timer after disconnect() for a socket long closed.
  const redis = createRedisConnection(`redis://127.0.0.1:${closedPort}`, role, { retryStrategy: () => 1000, disconnectTimeout: 10 });
  redis.on('error', () => undefined);
  deadRedis.push(redis);
  return redis;
}

async function get(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.json() };
}

describe('ingest', () => {
  test('/healthz answers while the process runs; /readyz when Redis answers', async () => {
    expect(await get(`${postern.baseUrl}/healthz`)).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await get(`${postern.baseUrl}/readyz`)).toEqual({ status: 200, body: { status: 'ok', checks: { redis: 'ok' } } });
  });

  test('/readyz is 503 naming redis when Redis is unreachable; /healthz stays 200', async () => {
    const redis = unreachableRedis('api');
    const store = createStore({ redis, prefix: 'test:unreachable' });
    const deliveryQueues = createDeliveryQueues(redis, store.keys);
    deliveryQueues.onError(() => undefined);
    queues.push(...deliveryQueues.partitions);
    const app = createApp({
      redis,
      store,
      queues: deliveryQueues,
      clock: { now: () => Date.now() },
      ids: createIdFactory(),
      logger: pino({ level: 'silent' }),
      config: { adminToken: TEST_ADMIN_TOKEN, maxBodyBytes: 1024 * 1024, allowList: [], secretRotationGraceMs: 1000 },
    });
    const base = await listen(createServer(app));
    expect(await get(`${base}/readyz`)).toEqual({ status: 503, body: { status: 'unavailable', failing: ['redis'], checks: { redis: 'failing' } } });
    expect(await get(`${base}/healthz`)).toEqual({ status: 200, body: { status: 'ok' } });
  });
});

describe('sender', () => {
  test('/healthz and /readyz answer 200 while the worker runs and Redis answers', async () => {
    const base = await listen(createSenderHttp({ registry: postern.senderRegistry, redis: postern.redis, worker: postern.sender!.worker }));
    await postern.sender!.worker.waitUntilReady();
    await waitUntil('the worker to run', () => postern.sender!.worker.isRunning());
    expect(await get(`${base}/healthz`)).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await get(`${base}/readyz`)).toEqual({ status: 200, body: { status: 'ok', checks: { redis: 'ok', worker: 'ok' } } });
    expect((await get(`${base}/nope`)).status).toBe(404);
    expect((await fetch(`${base}/readyz`, { method: 'POST' })).status).toBe(405);
  });

  test('/readyz is 503 naming the worker once it stopped', async () => {
    const worker = postern.sender!.worker;
    const base = await listen(createSenderHttp({ registry: postern.senderRegistry, redis: postern.redis, worker }));
    await postern.stopSender();
    try {
      expect(await get(`${base}/readyz`)).toEqual({ status: 503, body: { status: 'unavailable', failing: ['worker'], checks: { redis: 'ok', worker: 'failing' } } });
      expect((await get(`${base}/healthz`)).status).toBe(200);
    } finally {
      await postern.startSender();
    }
  });

  test('/readyz is 503 naming redis when Redis is unreachable, within its deadline', async () => {
    const base = await listen(createSenderHttp({ registry: postern.senderRegistry, redis: unreachableRedis('worker'), worker: { isRunning: () => true }, readyTimeoutMs: 300 }));
    const started = Date.now();
    expect(await get(`${base}/readyz`)).toEqual({ status: 503, body: { status: 'unavailable', failing: ['redis'], checks: { redis: 'failing', worker: 'ok' } } });
    expect(Date.now() - started).toBeLessThan(2000);
  });
});

describe('main.ts', () => {
  const prefixes: string[] = [];
  const env = () => {
    const prefix = `test:${randomBytes(6).toString('hex')}`;
    prefixes.push(prefix);
    return { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix, LOG_LEVEL: 'info', HOST: '127.0.0.1', SENDER_HOST: '127.0.0.1' };
  };

  afterAll(async () => {
    for (const app of spawned) await app.stop();
    for (const prefix of prefixes) await deleteByPrefix(postern.redis, prefix);
  });

  test('the sender process serves /healthz, /readyz and /metrics on SENDER_PORT and stops cleanly', async () => {
    const sender = spawnApp('sender', { ...env(), SENDER_PORT: '0', RECONCILE_INTERVAL_MS: '0', JANITOR_INTERVAL_MS: '0' });
    spawned.push(sender);
    const port = await sender.port();
    const base = `http://127.0.0.1:${port}`;
    expect((await get(`${base}/healthz`)).status).toBe(200);
    await waitUntil('the sender to be ready', async () => (await get(`${base}/readyz`)).status === 200, 15_000);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain('postern_queue_jobs{state="waiting"} 0');
    expect(metrics).toContain('postern_attempts_in_flight 0');
    expect(metrics).toMatch(/^process_resident_memory_bytes [1-9]/m);
    expect(metrics).toMatch(/^process_cpu_user_seconds_total [0-9.]+$/m);
    expect(await sender.stop()).toBe(0);
  });

  test('the ingest process serves /healthz, /readyz, /metrics and /openapi.json on PORT', async () => {
    const ingest = spawnApp('ingest', { ...env(), PORT: '0', ADMIN_TOKEN: TEST_ADMIN_TOKEN });
    spawned.push(ingest);
    const base = `http://127.0.0.1:${await ingest.port()}`;
    expect(await get(`${base}/healthz`)).toEqual({ status: 200, body: { status: 'ok' } });
    await waitUntil('ingest to be ready', async () => (await get(`${base}/readyz`)).status === 200, 15_000);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain('postern_http_requests_total{method="GET",route="/readyz",status="200"}');
    // main.ts adds the default process metrics to the app's registry.
    expect(metrics).toMatch(/^process_resident_memory_bytes [1-9]/m);
    expect(metrics).toMatch(/^nodejs_heap_size_used_bytes [1-9]/m);
    expect((await get(`${base}/openapi.json`)).body.openapi).toBe('3.1.0');
    expect(await ingest.stop()).toBe(0);
  });
});

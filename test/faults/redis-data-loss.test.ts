import { Redis } from 'ioredis';
import { TEST_ADMIN_TOKEN } from '../support/postern.js';
import { spawnApp, type SpawnedApp } from '../support/spawn-app.js';
import { waitUntil } from '../support/wait-until.js';
import { startPrivateRedis, type PrivateRedis } from './support/private-redis.js';

/**
 * Issue 11 items 5 and 6, against a test-owned redis-server:
 * - a Redis outage (server stopped, started again) leaves every line either app prints a single
 *   JSON object: no multi-line stack traces from ioredis, BullMQ or Node;
 * - a Redis that lost its data (FLUSHALL) while the apps run is noticed: `/readyz` is 503 naming
 *   `redis_data`, one error-level log line says what to do, `postern_redis_data_lost` is 1; a first
 *   start on an empty Redis is not an alarm, and a restarted process starts clean.
 */

const PREFIX = 'dataloss';
let redis: PrivateRedis;
let conn: Redis;
const apps: Record<'ingest' | 'sender', SpawnedApp | null> = { ingest: null, sender: null };
const printed: string[] = [];

function start(app: 'ingest' | 'sender'): SpawnedApp {
  const env = { REDIS_URL: redis.url, REDIS_PREFIX: PREFIX, ADMIN_TOKEN: TEST_ADMIN_TOKEN, LOG_LEVEL: 'info', HOST: '127.0.0.1', PORT: '0', SENDER_HOST: '127.0.0.1', SENDER_PORT: '0' };
  const spawned = spawnApp(app, env);
  apps[app] = spawned;
  return spawned;
}

async function readyz(port: number): Promise<{ status: number; body: any }> {
  const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(5000) });
  return { status: res.status, body: await res.json() };
}

/** Every line both apps printed so far, stdout and stderr. */
const allLines = () => [...printed, ...Object.values(apps).flatMap((a) => (a ? [...a.stdout, ...a.stderr] : []))].filter((l) => l.trim() !== '');
const notJson = () => allLines().filter((line) => {
  try {
    return typeof JSON.parse(line) !== 'object';
  } catch {
    return true;
  }
});

let ingestPort: number;
let senderPort: number;

beforeAll(async () => {
  redis = await startPrivateRedis({ appendfsync: 'everysec' });
  conn = new Redis(redis.url, { maxRetriesPerRequest: null, lazyConnect: true });
  conn.on('error', () => undefined);
  [ingestPort, senderPort] = await Promise.all([start('ingest').port(), start('sender').port()]);
}, 60_000);

afterAll(async () => {
  for (const app of Object.values(apps)) await app?.stop();
  conn?.disconnect();
  await redis?.close();
});

test('a first start on an empty Redis is ready, with the redis_data check passing', async () => {
  for (const port of [ingestPort, senderPort]) {
    const ready = await waitUntil(`/readyz on ${port}`, async () => {
      const r = await readyz(port);
      return r.status === 200 && r.body.checks.redis_data === 'ok' ? r : undefined;
    }, 20_000, 100);
    expect(ready.body.status).toBe('ok');
  }
});

test('a Redis outage: every line either app prints is one JSON object', async () => {
  await redis.stop();
  await waitUntil('the sender to report redis failing', async () => (await readyz(senderPort)).body.failing?.includes('redis'), 15_000, 100);
  await waitUntil('ingest to report redis failing', async () => (await readyz(ingestPort)).body.failing?.includes('redis'), 15_000, 100);
  // Long enough for several reconnect attempts (every 200 ms to 2 s) and BullMQ's blocking fetch to fail.
  await waitUntil('both apps to log the outage', () => allLines().filter((l) => /ECONNREFUSED|connection/i.test(l)).length >= 4, 15_000, 100);
  await redis.start();
  for (const port of [ingestPort, senderPort]) await waitUntil(`/readyz on ${port} after the outage`, async () => (await readyz(port)).status === 200, 30_000, 100);
  expect(notJson()).toEqual([]);
}, 60_000);

test('FLUSHALL while the apps run: /readyz 503 naming redis_data, one error line saying what to do, the gauge at 1', async () => {
  await conn.connect().catch(() => undefined);
  await conn.flushall();
  for (const port of [ingestPort, senderPort]) {
    const ready = await waitUntil(`/readyz on ${port} to fail redis_data`, async () => {
      const r = await readyz(port);
      return r.status === 503 ? r : undefined;
    }, 20_000, 100);
    expect(ready.body.failing).toEqual(['redis_data']);
    expect(ready.body.checks).toMatchObject({ redis: 'ok', redis_data: 'failing' });
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/^postern_redis_data_lost 1$/m);
  }
  for (const app of [apps.ingest!, apps.sender!]) {
    const alarms = app.stdout.map((l) => JSON.parse(l) as Record<string, any>).filter((e) => e.check === 'redis_data');
    expect(alarms).toHaveLength(1);
    expect(alarms[0]!.level).toBe(50);
    expect(alarms[0]!.msg).toMatch(/lost Postern's data.*restore.*restart every Postern process/i);
  }
  expect(notJson()).toEqual([]);
}, 60_000);

test('a process restarted after the loss starts clean; the ones still running keep the alarm', async () => {
  const oldSender = apps.sender!;
  printed.push(...oldSender.stdout, ...oldSender.stderr);
  expect(await oldSender.stop()).toBe(0);
  senderPort = await start('sender').port();
  await waitUntil('the restarted sender to be ready', async () => (await readyz(senderPort)).status === 200, 20_000, 100);
  expect((await readyz(senderPort)).body.checks.redis_data).toBe('ok');
  expect(await (await fetch(`http://127.0.0.1:${senderPort}/metrics`)).text()).toMatch(/^postern_redis_data_lost 0$/m);
  // Ingest saw the old marker: the new one the sender wrote is not the one it knew.
  expect((await readyz(ingestPort)).body.failing).toEqual(['redis_data']);
}, 60_000);

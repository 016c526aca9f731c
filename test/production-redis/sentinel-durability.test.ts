import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { killAllApps, spawnIngest, spawnIngestOnly, spawnSender, type AppProcess, type IngestProcess } from '../faults/support/app-process.js';
import { TEST_ADMIN_TOKEN } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';
import { freePort, removeDir, startRedisServer, type TestRedisServer } from './support.js';

/**
 * A replicated Redis as production runs it (docs/production-redis.md): one primary, one replica
 * and a Sentinel watching them. Ingest and a sender reach the primary through the Sentinel; a
 * `SENTINEL FAILOVER` while events arrive loses no accepted event and restarts no process. And
 * `ACCEPT_DURABILITY=replica`: a 202 only once a replica has the event; without one, 503
 * `not_durable`, and the retry with the same idempotency key answers the same event.
 */

const NAME = 'postern-test';
let dir: string;
let primary: TestRedisServer;
let replica: TestRedisServer;
let sentinel: TestRedisServer;
let receiver: TestReceiver;
const ports = { primary: 0, replica: 0, sentinel: 0 };

const plain = ['--save', '', '--appendonly', 'no', '--bind', '127.0.0.1', '--maxmemory-policy', 'noeviction'];

async function startReplica(): Promise<TestRedisServer> {
  return startRedisServer(['--port', String(ports.replica), '--replicaof', '127.0.0.1', String(ports.primary), ...plain], { host: '127.0.0.1', port: ports.replica });
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'postern-sentinel-'));
  ports.primary = await freePort();
  ports.replica = await freePort();
  ports.sentinel = await freePort();
  primary = await startRedisServer(['--port', String(ports.primary), ...plain], { host: '127.0.0.1', port: ports.primary });
  replica = await startReplica();
  const conf = path.join(dir, 'sentinel.conf');
  await writeFile(conf, [`port ${ports.sentinel}`, 'bind 127.0.0.1', `dir ${dir}`, `sentinel monitor ${NAME} 127.0.0.1 ${ports.primary} 1`, `sentinel down-after-milliseconds ${NAME} 2000`, `sentinel failover-timeout ${NAME} 10000`, ''].join('\n'));
  sentinel = await startRedisServer([], { host: '127.0.0.1', port: ports.sentinel }, { sentinel: true, configFile: conf });
  await waitUntil('the replica is in sync and the Sentinel sees it', async () => {
    const s = new Redis({ port: ports.sentinel, lazyConnect: true });
    try {
      await s.connect();
      const replicas = (await s.call('SENTINEL', 'REPLICAS', NAME)) as string[][];
      return replicas.some((r) => r.includes('flags') && r[r.indexOf('flags') + 1] === 'slave');
    } finally {
      s.disconnect();
    }
  }, 30_000, 200);
  receiver = await startReceiver(() => 200);
}, 90_000);
afterAll(async () => {
  await killAllApps();
  await receiver?.close();
  for (const s of [sentinel, replica, primary]) await s?.kill();
  await removeDir(dir);
});

/** The address the Sentinel names as the primary now. */
async function primaryPort(): Promise<number> {
  const s = new Redis({ port: ports.sentinel });
  try {
    const [, port] = (await s.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', NAME)) as [string, string];
    return Number(port);
  } finally {
    s.disconnect();
  }
}

async function api(ingest: IngestProcess, method: string, p: string, key: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }> {
  const r = await fetch(`${ingest.baseUrl}${p}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  return { status: r.status, body: await r.json().catch(() => null), headers: r.headers };
}

describe('through the Sentinel', () => {
  const prefix = `snt${randomBytes(4).toString('hex')}`;
  let ingest: IngestProcess;
  let sender: AppProcess;

  beforeAll(async () => {
    const env = { LOG_LEVEL: 'info', REDIS_SENTINELS: `127.0.0.1:${ports.sentinel}`, REDIS_SENTINEL_NAME: NAME, REDIS_PREFIX: prefix, ACCEPT_DURABILITY: 'replica', ACCEPT_WAIT_MS: '500' };
    ingest = await spawnIngest(env, 30_000);
    sender = spawnSender(env);
    await waitUntil('the sender is connected', () => sender.output().includes('sender started') || (sender.exited ? Promise.reject(new Error(sender.output())) : false), 30_000, 100);
  }, 60_000);

  test('a SENTINEL FAILOVER while events arrive: every accepted event is delivered, no process restarts', async () => {
    const org = await api(ingest, 'POST', '/v1/orgs', TEST_ADMIN_TOKEN, { name: 'sentinel' });
    expect(org.status).toBe(201);
    const key = org.body.apiKey as string;
    expect((await api(ingest, 'POST', '/v1/endpoints', key, { url: `${receiver.url}/sentinel` })).status).toBe(201);
    const before = await primaryPort();

    // About 100 events a second; each retried with its idempotency key until it is accepted.
    const accepted = new Set<string>();
    const answers: Record<string, number> = {};
    let failedOverAt = 0;
    const producer = async (n: number) => {
      const idempotencyKey = `ev-${n}`;
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
        const r = await api(ingest, 'POST', '/v1/events', key, { type: 'sentinel.test', data: { n }, idempotencyKey }).catch(() => ({ status: 0, body: null, headers: new Headers() }));
        answers[r.status] = (answers[r.status] ?? 0) + 1;
        if (r.status === 202) {
          accepted.add(r.body.id as string);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      throw new Error(`event ${n} was never accepted`);
    };
    const sends: Promise<void>[] = [];
    for (let n = 0; n < 800; n++) {
      sends.push(producer(n));
      if (n === 250) {
        failedOverAt = Date.now();
        const s = new Redis({ port: ports.sentinel });
        expect(await s.call('SENTINEL', 'FAILOVER', NAME)).toBe('OK');
        s.disconnect();
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await Promise.all(sends);
    await waitUntil('the Sentinel names the other server as primary', async () => (await primaryPort()) !== before, 30_000, 200);
    expect(failedOverAt).toBeGreaterThan(0);
    expect(accepted.size).toBe(800);

    const arrived = () => new Set(receiver.requests.filter((r) => r.path.endsWith('/sentinel')).map((r) => r.headers['webhook-id'] as string));
    let lastLook: unknown = null;
    let diag = '';
    const startedWaiting = Date.now();
    const look = setInterval(() => {
      const got = arrived();
      const id = [...accepted].find((e) => !got.has(e));
      if (id) void api(ingest, 'GET', `/v1/events/${id}`, key).then((r) => (lastLook = r.body?.deliveries ?? r.body), () => undefined);
    }, 5000);
    await waitUntil('every accepted event reached the receiver', () => {
      const got = arrived();
      const missing = [...accepted].filter((id) => !got.has(id));
      if (missing.length > 0 && Date.now() - startedWaiting > 100_000 && !diag) {
        diag = 'pending';
        void (async () => {
          const out: string[] = [];
          for (const port of [ports.primary, ports.replica]) {
            const c = new Redis({ port });
            const role = ((await c.call('ROLE')) as string[])[0];
            const found = await Promise.all(missing.slice(0, 5).map(async (id) => (await c.keys(`${prefix}:*${id}*`)).length));
            const dkeys = await c.keys(`${prefix}:*:delivery:*`);
            out.push(`${port} ${role} eventKeys=${found} deliveries=${dkeys.length} waiting=${await c.llen(`{${prefix}:q0}:deliveries:wait`)} active=${await c.llen(`{${prefix}:q0}:deliveries:active`)} delayed=${await c.zcard(`{${prefix}:q0}:deliveries:delayed`)}`);
            c.disconnect();
          }
          diag = out.join(' | ');
        })();
      }
      if (missing.length > 0) throw new Error(`${diag} `+`${missing.length} of ${accepted.size} not arrived: ${JSON.stringify(lastLook)} (answers ${JSON.stringify(answers)}), e.g. ${missing.slice(0, 3).join(', ')}\n${sender.output()}\n${ingest.output()}`);
      return true;
    }, 120_000, 250).finally(() => clearInterval(look));
    expect(ingest.exited).toBe(false);
    expect(sender.exited).toBe(false);
    // The failover was seen: some requests were refused while the new primary had no replica yet.
    expect(Object.keys(answers)).toContain('202');
  }, 240_000);
});

describe('ACCEPT_DURABILITY', () => {
  test('replica: no replica in time is 503 not_durable with Retry-After; the retry with the same key answers the same event once one is back', async () => {
    const port = await primaryPort();
    const prefix = `dur${randomBytes(4).toString('hex')}`;
    const ingest = await spawnIngest({ REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_PREFIX: prefix, ACCEPT_DURABILITY: 'replica', ACCEPT_WAIT_MS: '300' }, 30_000);
    const org = await api(ingest, 'POST', '/v1/orgs', TEST_ADMIN_TOKEN, { name: 'durability' });
    const key = org.body.apiKey as string;
    await api(ingest, 'POST', '/v1/endpoints', key, { url: `${receiver.url}/durability` });
    const first = await api(ingest, 'POST', '/v1/events', key, { type: 'durable.test', data: { n: 1 }, idempotencyKey: 'k-1' });
    expect(first.status).toBe(202);

    // Whichever server is the replica now stops acknowledging: stopped (SIGSTOP), it confirms nothing.
    const stopped = port === ports.primary ? replica : primary;
    stopped.child.kill('SIGSTOP');
    try {
      const refused = await api(ingest, 'POST', '/v1/events', key, { type: 'durable.test', data: { n: 2 }, idempotencyKey: 'k-2' });
      expect(refused.status).toBe(503);
      expect(refused.body.error.code).toBe('not_durable');
      expect(refused.headers.get('retry-after')).toBe('1');
    } finally {
      stopped.child.kill('SIGCONT');
    }
    const retried = await waitUntil('the retry is accepted', async () => {
      const again = await api(ingest, 'POST', '/v1/events', key, { type: 'durable.test', data: { n: 2 }, idempotencyKey: 'k-2' });
      return again.status === 202 ? again : false;
    }, 20_000, 200);
    expect(retried.headers.get('idempotent-replayed')).toBe('true');
    const listed = await api(ingest, 'GET', '/v1/events?limit=10', key);
    expect(listed.body.data.filter((e: { type: string }) => e.type === 'durable.test')).toHaveLength(2);
    await ingest.kill();
  }, 60_000);

  test('local-fsync on a Redis without WAITAOF stops ingest at start with one line', async () => {
    const s = new Redis({ port: await primaryPort() });
    const version = /redis_version:(\S+)/.exec(await s.info('server'))?.[1] ?? '0';
    s.disconnect();
    const [major = 0, minor = 0] = version.split('.').map(Number);
    if (major > 7 || (major === 7 && minor >= 2)) return; // WAITAOF exists here: nothing to refuse.
    const app = await spawnIngestOnly({ REDIS_URL: `redis://127.0.0.1:${await primaryPort()}`, REDIS_PREFIX: 'fsync-test', ACCEPT_DURABILITY: 'local-fsync' });
    const exit = await app.exit;
    expect(exit.code).toBe(1);
    expect(app.output()).toContain(`ACCEPT_DURABILITY: local-fsync needs WAITAOF (Redis 7.2 or later); this Redis is ${version}`);
  }, 30_000);
});

import type { Socket } from 'node:net';
import type { Cluster, Redis } from 'ioredis';
import { connectRedis, createRedisConnection } from '@postern/store';
import { describeOnCluster } from '../cluster/cluster-support.js';
import { TEST_REDIS_URL, testRedisTarget } from '../support/postern.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Counts the socket's own writes (each one system call): `_write` for a lone chunk, `_writev` for
 * what a cork gathered.
 */
function countWrites(socket: Socket): { writes: () => number } {
  let writes = 0;
  const s = socket as unknown as { _write: (...a: unknown[]) => void; _writev: (...a: unknown[]) => void };
  const write = s._write;
  const writev = s._writev;
  s._write = function (this: unknown, ...a: unknown[]) {
    writes++;
    return write.apply(this, a);
  };
  s._writev = function (this: unknown, ...a: unknown[]) {
    writes++;
    return writev.apply(this, a);
  };
  return { writes: () => writes };
}

async function ready(redis: Redis): Promise<void> {
  if (redis.status !== 'ready') await new Promise<void>((resolve, reject) => redis.once('ready', resolve).once('error', reject));
}

describe('Redis connections send the commands of one event-loop turn in one write while replies are awaited', () => {
  let redis: Redis;
  const key = `test:coalesce:${process.pid}:${Date.now()}`;

  beforeAll(async () => {
    redis = createRedisConnection(TEST_REDIS_URL, 'worker');
    await ready(redis);
  });
  afterAll(async () => {
    await redis.del(key, `${key}:list`);
    redis.disconnect();
  });

  test('20 commands written in one turn: the first at once, the 19 behind it in one write, each answered in order', async () => {
    const counter = countWrites(redis.stream as Socket);
    const pending = Array.from({ length: 20 }, (_, i) => redis.rpush(`${key}:list`, String(i)));
    // The first found the connection idle and went out before the turn ended; the others wait for its end.
    expect(counter.writes()).toBe(1);
    const replies = await Promise.all(pending);
    expect(counter.writes()).toBe(2);
    expect(replies).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(await redis.lrange(`${key}:list`, 0, -1)).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));
  });

  test('a command on an idle connection goes out at once, before its turn ends', async () => {
    const counter = countWrites(redis.stream as Socket);
    for (let i = 0; i < 5; i++) {
      const before = counter.writes();
      const set = redis.set(key, String(i));
      expect(counter.writes()).toBe(before + 1);
      await set;
      expect(await redis.get(key)).toBe(String(i));
    }
    // One write per command: none had a reply awaited ahead of it.
    expect(counter.writes()).toBe(10);
  });

  test('after a reconnect the new socket coalesces too', async () => {
    const before = redis.stream;
    const admin = createRedisConnection(TEST_REDIS_URL, 'api');
    try {
      await ready(admin);
      const id = await redis.client('ID');
      await admin.client('KILL', 'ID', String(id));
      await waitUntil('the connection to come back on a new socket', () => redis.status === 'ready' && redis.stream !== before);
    } finally {
      admin.disconnect();
    }
    const counter = countWrites(redis.stream as Socket);
    const replies = await Promise.all(Array.from({ length: 10 }, () => redis.ping()));
    expect(replies).toEqual(Array.from({ length: 10 }, () => 'PONG'));
    expect(counter.writes()).toBe(2);
  });
});

describeOnCluster('Redis Cluster node connections coalesce their writes', () => {
  let cluster: Cluster;
  afterAll(() => cluster?.disconnect());

  test('commands of one turn to one node: the first at once, the rest in one write', async () => {
    cluster = connectRedis(testRedisTarget(true), 'worker') as Cluster;
    const key = `{coalesce-${process.pid}}:n`;
    await cluster.set(key, '0');
    // Whichever master owns the key's slot gets the commands: count the writes of every one.
    const counters = cluster.nodes('master').filter((n) => n.stream).map((n) => countWrites(n.stream as Socket));
    const replies = await Promise.all(Array.from({ length: 10 }, () => cluster.incr(key)));
    expect(replies).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    expect(counters.reduce((sum, c) => sum + c.writes(), 0)).toBe(2);
    await cluster.del(key);
  });
});

import { Cluster, Redis, type RedisOptions } from 'ioredis';

/** A standalone Redis or a Redis Cluster client: every repository works with either. */
export type RedisClient = Redis | Cluster;

/** Where Redis is: a standalone server (`REDIS_URL`) or the seed nodes of a cluster (`REDIS_CLUSTER_NODES`). */
export type RedisTarget = { url: string } | { clusterNodes: readonly { host: string; port: number }[] };

/**
 * Parses `REDIS_CLUSTER_NODES` (`host:port,host:port,…`, at least one). Throws on an entry that is
 * not `host:port` with a port 1..65535.
 */
export function parseClusterNodes(value: string): { host: string; port: number }[] {
  const nodes = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((entry) => {
      const m = /^(.+):(\d{1,5})$/.exec(entry);
      const port = m ? Number(m[2]) : NaN;
      if (!m || port < 1 || port > 65535) throw new Error(`REDIS_CLUSTER_NODES: "${entry}" is not host:port`);
      return { host: m[1]!, port };
    });
  if (nodes.length === 0) throw new Error('REDIS_CLUSTER_NODES: no host:port given');
  return nodes;
}

function roleOptions(role: 'api' | 'worker'): RedisOptions {
  return role === 'api'
    ? { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000 }
    : { maxRetriesPerRequest: null, enableReadyCheck: true };
}

/**
 * Opens a Redis connection for one role.
 * - `api`: fails fast while Redis is unreachable (`enableOfflineQueue: false`, one retry per
 *   request), so ingest can answer 503 instead of hanging.
 * - `worker`: waits out outages (`maxRetriesPerRequest: null`), as BullMQ workers require.
 */
export function createRedisConnection(url: string, role: 'api' | 'worker', extra: RedisOptions = {}): Redis {
  return new Redis(url, { ...roleOptions(role), retryStrategy: (times) => Math.min(times * 200, 2000), ...extra });
}

/**
 * Opens a connection for one role (see {@link createRedisConnection}) to a standalone Redis or,
 * given cluster nodes, an ioredis `Cluster` with the same per-role options on every node
 * connection. A cluster client starts with its offline queue on (it must learn the slot map
 * before any command can go out); the `api` role still fails a request after one retry.
 */
export function connectRedis(target: RedisTarget, role: 'api' | 'worker'): RedisClient {
  if ('url' in target) return createRedisConnection(target.url, role);
  const { enableOfflineQueue: _offline, ...redisOptions } = roleOptions(role);
  return new Cluster([...target.clusterNodes], {
    redisOptions,
    clusterRetryStrategy: (times) => Math.min(times * 200, 2000),
    enableReadyCheck: true,
  });
}

/**
 * Whether Redis answers PING within `timeoutMs` (the `/readyz` check of both apps). A connection
 * that is not `ready` fails at once: a worker connection queues commands while disconnected, so
 * a PING then would wait out the outage instead of answering.
 */
export async function redisAnswers(redis: RedisClient, timeoutMs: number): Promise<boolean> {
  if (redis.status !== 'ready') return false;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  try {
    return await Promise.race([redis.ping().then(() => true, () => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Where the parsed settings say Redis is: the cluster named by `REDIS_CLUSTER_NODES` when set, else `REDIS_URL`. */
export function redisTargetOf(config: { REDIS_URL: string; REDIS_CLUSTER_NODES: string }): RedisTarget {
  return config.REDIS_CLUSTER_NODES ? { clusterNodes: parseClusterNodes(config.REDIS_CLUSTER_NODES) } : { url: config.REDIS_URL };
}

/**
 * Resolves true once the connection is `ready`, false at its first error (Redis unreachable) or
 * after `timeoutMs` (default 5000): for start-up steps worth waiting for only while Redis answers.
 */
export function redisReady(redis: RedisClient, timeoutMs = 5000): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ready: boolean) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('error', onError);
      resolve(ready);
    };
    const onReady = () => done(true);
    const onError = () => done(false);
    const timer = setTimeout(() => done(false), timeoutMs);
    timer.unref();
    redis.on('ready', onReady);
    redis.on('error', onError);
  });
}

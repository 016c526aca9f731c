import { readFileSync } from 'node:fs';
import { createSecureContext, type ConnectionOptions } from 'node:tls';
import { parseHostPorts, redisConnectionPlan, type RedisConnectionPlan, type RedisSettings } from '@postern/shared';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { coalesceWrites } from './write-coalescing.js';

/** A standalone Redis or a Redis Cluster client: every repository works with either. */
export type RedisClient = Redis | Cluster;

/** What every data connection to one target is opened with: its ACL user, password and TLS. */
export interface RedisNodeOptions {
  username?: string;
  /** Never logged. */
  password?: string;
  /** TLS options (CA, client certificate and key as PEM, server name); absent = plain TCP. */
  tls?: ConnectionOptions;
}

/**
 * Where Redis is: a standalone server (a URL, or host/port/db with options), the seed nodes of a
 * cluster, or the Sentinels watching a primary — each with its connections' options.
 */
export type RedisTarget =
  | { url: string; options?: RedisNodeOptions & { host?: string; port?: number; db?: number } }
  | { clusterNodes: readonly { host: string; port: number }[]; natMap?: Record<string, { host: string; port: number }>; options?: RedisNodeOptions }
  | { sentinels: readonly { host: string; port: number }[]; name: string; sentinelOptions?: RedisNodeOptions; options?: RedisNodeOptions };

/**
 * Parses `REDIS_CLUSTER_NODES` (`host:port,host:port,…`, at least one). Throws on an entry that is
 * not `host:port` with a port 1..65535.
 */
export function parseClusterNodes(value: string): { host: string; port: number }[] {
  return parseHostPorts(value, 'REDIS_CLUSTER_NODES');
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
  const redis = new Redis(url, { ...roleOptions(role), retryStrategy: (times) => Math.min(times * 200, 2000), ...extra });
  coalesceWrites(redis);
  return redis;
}

/**
 * Opens a connection for one role (see {@link createRedisConnection}) to a standalone Redis or,
 * given cluster nodes, an ioredis `Cluster` with the same per-role options on every node
 * connection. A cluster client starts with its offline queue on (it must learn the slot map
 * before any command can go out); the `api` role still fails a request after one retry.
 */
export function connectRedis(target: RedisTarget, role: 'api' | 'worker'): RedisClient {
  const client = openRedis(target, role);
  // Every connection Postern opens sends the commands of one event-loop turn in one write.
  coalesceWrites(client);
  return client;
}

function openRedis(target: RedisTarget, role: 'api' | 'worker'): RedisClient {
  const retryStrategy = (times: number) => Math.min(times * 200, 2000);
  if ('url' in target) {
    const { host, port, db, ...node } = target.options ?? {};
    if (host === undefined) return createRedisConnection(target.url, role, node);
    return new Redis({ host, port, db, ...roleOptions(role), retryStrategy, ...node });
  }
  if ('sentinels' in target) {
    const sentinel = target.sentinelOptions ?? {};
    return new Redis({
      sentinels: [...target.sentinels],
      name: target.name,
      role: 'master',
      ...(sentinel.username !== undefined ? { sentinelUsername: sentinel.username } : {}),
      ...(sentinel.password !== undefined ? { sentinelPassword: sentinel.password } : {}),
      ...(sentinel.tls ? { enableTLSForSentinelMode: true, sentinelTLS: sentinel.tls } : {}),
      ...roleOptions(role),
      retryStrategy,
      // After a failover the old primary, now a replica, answers writes with READONLY: reconnect,
      // and ask the Sentinels again where the primary is.
      reconnectOnError: (err) => /READONLY|MASTERDOWN/.test(err.message),
      sentinelRetryStrategy: retryStrategy,
      // Subscribes to the Sentinels' +switch-master: every connection, blocking ones included
      // (BullMQ's workers wait in BZPOPMIN), moves to the new primary at once instead of staying
      // on the demoted one.
      failoverDetector: true,
      ...(target.options ?? {}),
    });
  }
  const { enableOfflineQueue: _offline, ...redisOptions } = roleOptions(role);
  const node = target.options ?? {};
  const options: ClusterOptions = {
    redisOptions: { ...redisOptions, ...node },
    clusterRetryStrategy: retryStrategy,
    enableReadyCheck: true,
    ...(target.natMap && Object.keys(target.natMap).length > 0 ? { natMap: target.natMap } : {}),
    // Over TLS the certificates name the nodes' hosts: connect to the names, not resolved addresses.
    ...(node.tls ? { dnsLookup: (address: string, callback: (err: Error | null, address: string) => void) => callback(null, address) } : {}),
  };
  return new Cluster([...target.clusterNodes], options);
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

/**
 * Where the parsed settings say Redis is ({@link redisConnectionPlan}: Sentinels, a cluster or the
 * standalone `REDIS_URL`, with TLS and an ACL user), with the TLS files read (`readFile`, default
 * the file system).
 *
 * @throws Error `invalid configuration: …` on contradicting settings, or a TLS file that cannot be read.
 */
export function redisTargetOf(config: Pick<RedisSettings, 'REDIS_URL' | 'REDIS_CLUSTER_NODES'> & Partial<RedisSettings>, readFile: (path: string) => string = (path) => readFileSync(path, 'utf8')): RedisTarget {
  const plan = redisConnectionPlan({ REDIS_SENTINELS: '', REDIS_SENTINEL_NAME: 'mymaster', REDIS_CLUSTER_NAT_MAP: '', ...config });
  return redisTargetOfPlan(plan, readFile);
}

/** The connection target of a plan, TLS files read with `readFile`. */
export function redisTargetOfPlan(plan: RedisConnectionPlan, readFile: (path: string) => string = (path) => readFileSync(path, 'utf8')): RedisTarget {
  const read = (setting: string, path: string | undefined) => {
    if (path === undefined) return undefined;
    try {
      return readFile(path);
    } catch (err) {
      throw new Error(`invalid configuration: ${setting}: cannot read ${path}: ${(err as Error).message}`);
    }
  };
  const tls: ConnectionOptions | undefined = plan.tls
    ? {
        ...(plan.tls.caFile !== undefined ? { ca: read('REDIS_TLS_CA_FILE', plan.tls.caFile) } : {}),
        ...(plan.tls.certFile !== undefined ? { cert: read('REDIS_TLS_CERT_FILE', plan.tls.certFile), key: read('REDIS_TLS_KEY_FILE', plan.tls.keyFile) } : {}),
        ...(plan.tls.servername !== undefined ? { servername: plan.tls.servername } : {}),
      }
    : undefined;
  // Files that are not what they claim stop start-up here, naming the setting, rather than fail
  // every connection attempt afterwards.
  const usable = (setting: string, options: ConnectionOptions) => {
    try {
      createSecureContext(options);
    } catch (err) {
      throw new Error(`invalid configuration: ${setting}: not a usable PEM file (${(err as Error).message})`);
    }
  };
  if (tls?.ca) usable('REDIS_TLS_CA_FILE', { ca: tls.ca });
  if (tls?.cert) usable('REDIS_TLS_CERT_FILE / REDIS_TLS_KEY_FILE', { cert: tls.cert, key: tls.key });
  const options: RedisNodeOptions = { ...plan.auth, ...(tls ? { tls } : {}) };
  switch (plan.kind) {
    case 'standalone':
      return { url: plan.url, options: { ...options, host: plan.host, port: plan.port, db: plan.db } };
    case 'cluster':
      return { clusterNodes: plan.nodes, natMap: plan.natMap, options };
    case 'sentinel':
      // The Sentinels speak TLS when the data nodes do (one CA), with their own credentials.
      return { sentinels: plan.sentinels, name: plan.name, sentinelOptions: { ...plan.sentinelAuth, ...(tls ? { tls } : {}) }, options };
  }
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

import { createSandboxPool } from '@postern/sandbox';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { randomBytes } from 'node:crypto';
import { pino, type Logger } from 'pino';
import { Registry } from 'prom-client';
import { classifyAddress, createIdFactory, createSecretBox, type SecretKeyring } from '@postern/shared';
import { connectRedis, createDeliveryQueues, createStore, parseClusterNodes, type DeliveryQueues, type RedisClient, type RedisTarget, type Store } from '@postern/store';
import { createApp, createIngestServer, LiveHub, type LiveStreamSettings } from '@postern/ingest';
import { createGotTransport, createSender, createSenderMetrics, type LookupAll, type Sender } from '@postern/sender';
import type { Queue } from 'bullmq';
import type { Tracer } from '@postern/telemetry';
import { Postern, PosternApiError } from '@postern/client';
import { apiClient, setSpecCheck, type ApiClient } from './api-client.js';
import { openApiValidator } from './openapi-validator.js';
import { TEST_SECRETS_ENV } from './test-secrets.js';

/** Redis used by tests (`REDIS_URL`, default the local one). */
export const TEST_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
/**
 * Seed nodes of the tests' Redis Cluster (`TEST_REDIS_CLUSTER_NODES`, `host:port,…`, started by
 * `scripts/redis-cluster.sh` and `.ci/run`), or null when unset.
 */
export const TEST_REDIS_CLUSTER_NODES = process.env.TEST_REDIS_CLUSTER_NODES || null;

/** Where a test Postern's Redis is: the cluster when asked for (`cluster: true`), else `TEST_REDIS_URL`. */
export function testRedisTarget(cluster = false): RedisTarget {
  if (!cluster) return { url: TEST_REDIS_URL };
  if (!TEST_REDIS_CLUSTER_NODES) throw new Error('TEST_REDIS_CLUSTER_NODES is not set: start a cluster with scripts/redis-cluster.sh start');
  return { clusterNodes: parseClusterNodes(TEST_REDIS_CLUSTER_NODES) };
}

/** The admin token of test instances. */
export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789';

export { TEST_SECRETS_ENV };

/** The keyring of {@link TEST_SECRETS_ENV}. */
export function testSecretKeyring(): SecretKeyring {
  return { current: { id: TEST_SECRETS_ENV.SECRETS_KEY_ID, key: Buffer.from(TEST_SECRETS_ENV.SECRETS_KEY, 'base64') }, previous: [] };
}

/** Options of {@link startPostern}. */
export interface PosternOptions {
  /** Addresses the sender and ingest allow although private; default loopback. */
  allowList?: string[];
  /** Start the sender (default true). */
  sender?: boolean;
  senderConcurrency?: number;
  random?: () => number;
  lookupAll?: LookupAll;
  maxBodyBytes?: number;
  /** `MAX_ENDPOINTS_PER_ORG` (default ingest's, 1000). */
  maxEndpointsPerOrg?: number;
  /** `MAX_DELIVERIES_PER_REQUEST` (default ingest's, 10 000). */
  maxDeliveriesPerRequest?: number;
  reconcileIntervalMs?: number;
  reconcileGraceMs?: number;
  /** The sender's `wakeRequeueMinAgeMs` (default its own, 30 s). */
  wakeRequeueMinAgeMs?: number;
  /** The sender's `statsFlushIntervalMs`: how often it writes the overview's counters (default its own, 1 s). */
  statsFlushIntervalMs?: number;
  /** How long a rotated-out secret keeps signing, ms (default 60 000; production: 24 h). */
  secretRotationGraceMs?: number;
  /** Logger of both apps (default: silent, or `TEST_LOG_LEVEL`). */
  logger?: Logger;
  /** Bull Board read-only (default true, as in production). */
  bullBoardReadOnly?: boolean;
  /** Ingest's lookup cache TTL, ms (default: the app's, 10 s). */
  lookupCacheTtlMs?: number;
  /** Run against the test Redis Cluster (`TEST_REDIS_CLUSTER_NODES`) instead of `TEST_REDIS_URL`. */
  cluster?: boolean;
  /** Run against this Redis instead (a TLS server, an ACL user, a Sentinel group); overrides `cluster`. */
  redisTarget?: RedisTarget;
  /** Queue partitions (`QUEUE_PARTITIONS`), default 1. */
  queuePartitions?: number;
  /** Key prefix (`REDIS_PREFIX`); default a fresh `test:<12 hex>`. The memory bench passes one as long as `postern`. */
  prefix?: string;
  /** The sender's clock (default the real one), e.g. to finish deliveries "days ago". */
  senderClock?: { now(): number };
  /** The sender's `PRE_ATTEMPT_CHECK_TIMEOUT_MS` (default the app's, 3000). */
  checkTimeoutMs?: number;
  /** Ingest's clock (default the real one), e.g. to see a portal session expire. */
  ingestClock?: { now(): number };
  /** Origins that may frame the customer portal (`PORTAL_FRAME_ANCESTORS`); default none. */
  portalFrameAncestors?: string[];
  /** The sandboxes' `TRANSFORM_TIMEOUT_MS` (ingest's and the sender's); default 1000, generous on a busy test machine. */
  transformTimeoutMs?: number;
  /** The sender's `EGRESS_PROXY_URL` (default none). */
  egressProxyUrl?: string;
  /** The sender's `EGRESS_PROXY_BYPASS` entries (default none). */
  egressProxyBypass?: string[];
  /** Ingest's and the sender's OpenTelemetry tracers (`startTracing`); default none (tracing off). */
  tracers?: { ingest?: Tracer; sender?: Tracer };
  /** The keys both apps seal and open stored secrets with; default {@link testSecretKeyring}. */
  secretKeyring?: SecretKeyring;
  /** The live stream's heartbeat, credential re-check and per-key limit; default the app's. */
  liveStream?: LiveStreamSettings;
  /** Each org's live feed cap (`LIVE_FEED_MAX_ENTRIES`); default the store's, 1 000. */
  liveFeedMaxEntries?: number;
  /** What ingest's 202 waits for (`ACCEPT_DURABILITY`, `ACCEPT_REPLICAS`, `ACCEPT_WAIT_MS`); default `local`. */
  acceptDurability?: { mode: 'local' | 'replica' | 'local-fsync'; replicas: number; waitMs: number };
}

/** A whole Postern (ingest on port 0 + sender) on its own key prefix, for one test file. */
export interface TestPostern {
  baseUrl: string;
  prefix: string;
  store: Store;
  /** Partition 0's queue (the only one unless `queuePartitions` was given). */
  queue: Queue;
  /** Every partition's queue, as ingest uses them. */
  queues: DeliveryQueues;
  sender: Sender | null;
  redis: RedisClient;
  /** Ingest's live hub: one reader per org watched. */
  liveHub: LiveHub;
  /** Ingest's metrics registry (served at `/metrics`). */
  ingestRegistry: Registry;
  /** The sender's metrics registry: every sender this harness starts reports into it. */
  senderRegistry: Registry;
  /** Calls the API; `key` is an API key (or the admin token). Returns status, JSON body and headers. */
  api: ApiClient;
  /**
   * A `@postern/client` for this Postern acting with `key` (an API key; the admin token for orgs
   * and platform keys), or with a platform key for `orgId`. Retries off, so a test sees every
   * answer as it came.
   */
  client(key: string, orgId?: string): Postern;
  /** Creates an org and returns its API key. */
  createOrg(name?: string): Promise<{ id: string; apiKey: string }>;
  /** Creates an endpoint (201 expected) and returns the API's answer. */
  createEndpoint(key: string, body: Record<string, unknown>): Promise<any>;
  /** Stops the sender only (in-flight attempts finish). */
  stopSender(): Promise<void>;
  /** Starts a sender when none runs (after `sender: false` or {@link stopSender}); `concurrency` defaults to the option given at start. */
  startSender(opts?: { concurrency?: number }): Promise<void>;
  close(): Promise<void>;
}

/** A failed client call as the helpers report it: `<status> {"error":{code,message}}`, as the raw API answered. */
function describeFailure(err: unknown): string {
  if (err instanceof PosternApiError) return `${err.status} ${JSON.stringify({ error: { code: err.code, message: err.message } })}`;
  return String(err);
}

let specChecked = false;

/**
 * Every answer the tests' {@link ApiClient} gets from a documented route is checked against
 * `/openapi.json`: a status the document does not list for the route, or a body that does not
 * validate against its schema, fails the call that got it. Undocumented paths (a test probing an
 * unknown route) are left alone.
 */
function checkAnswersAgainstSpec(): void {
  if (specChecked) return;
  specChecked = true;
  const validator = openApiValidator();
  setSpecCheck((method, path, answer) => {
    const result = validator.check(method, path, answer.status, answer.body, answer.headers.get('content-type'));
    if (result.operation && result.problems.length > 0) throw new Error(`answer not as /openapi.json documents it: ${result.problems.join('; ')}`);
  });
}

/** Starts ingest (and, unless disabled, a sender) against real Redis with a fresh prefix. */
export async function startPostern(options: PosternOptions = {}): Promise<TestPostern> {
  checkAnswersAgainstSpec();
  const prefix = options.prefix ?? `test:${randomBytes(6).toString('hex')}`;
  const allowList = options.allowList ?? ['127.0.0.1', '::1'];
  const target = options.redisTarget ?? testRedisTarget(options.cluster);
  const apiRedis = connectRedis(target, 'api');
  // Ingest's queue has its own connection, as in main.ts.
  const queueRedis = connectRedis(target, 'api');
  const workerRedis = connectRedis(target, 'worker');
  for (const connection of [apiRedis, queueRedis]) {
    await connection.ping().catch(async () => {
      await new Promise((r) => connection.once('ready', r));
    });
  }
  const logger = options.logger ?? pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const ingestRegistry = new Registry();
  const keyring = options.secretKeyring ?? testSecretKeyring();
  // One box per app, as two processes would have: each its own cache of opened values.
  const liveFeed = options.liveFeedMaxEntries === undefined ? undefined : { maxEntries: options.liveFeedMaxEntries };
  const store = createStore({ redis: apiRedis, prefix, queuePartitions: options.queuePartitions, secretBox: createSecretBox(keyring), liveFeed });
  const liveHub = new LiveHub({ feed: store.liveFeed, redis: apiRedis, connect: () => connectRedis(target, 'worker'), logger });
  const queues = createDeliveryQueues(queueRedis, store.keys);
  const queue = queues.partitions[0]!;
  const ingestSandbox = createSandboxPool({ threads: 1, timeoutMs: options.transformTimeoutMs ?? 1000 });
  const app = createApp({
    redis: apiRedis,
    liveHub,
    sandbox: ingestSandbox,
    store,
    queues,
    clock: options.ingestClock ?? { now: () => Date.now() },
    ids: createIdFactory(),
    logger,
    registry: ingestRegistry,
    tracer: options.tracers?.ingest,
    config: {
      bullBoardReadOnly: options.bullBoardReadOnly ?? true,
      adminToken: TEST_ADMIN_TOKEN,
      maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
      maxEndpointsPerOrg: options.maxEndpointsPerOrg,
      maxDeliveriesPerRequest: options.maxDeliveriesPerRequest,
      allowList,
      secretRotationGraceMs: options.secretRotationGraceMs ?? 60_000,
      lookupCacheTtlMs: options.lookupCacheTtlMs,
      portalFrameAncestors: options.portalFrameAncestors,
      liveStream: options.liveStream,
      durability: options.acceptDurability,
    },
  });
  // The server main.ts runs the app on: Node's parser refusals and a missing Host get the API's error shape.
  const server: Server = createIngestServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  let sender: Sender | null = null;
  const workerStore = createStore({ redis: workerRedis, prefix, queuePartitions: options.queuePartitions, secretBox: createSecretBox(keyring), liveFeed });
  const workerQueues = createDeliveryQueues(workerRedis, store.keys);
  const classify = (address: string) => classifyAddress(address, allowList);
  const transport = createGotTransport({ allowList, classifyAddress: classify });
  const senderRegistry = new Registry();
  const senderMetrics = createSenderMetrics({ registry: senderRegistry, queues: workerQueues.partitions, longestOverdueMs: () => workerQueues.longestOverdueMs(workerRedis, Date.now()) });
  const makeSender = (concurrency: number): Sender =>
    createSender({
      redis: workerRedis,
      store: workerStore,
      queues: workerQueues,
      transport,
      clock: options.senderClock ?? { now: () => Date.now() },
      random: options.random ?? Math.random,
      logger,
      classifyAddress: classify,
      lookupAll: options.lookupAll,
      metrics: senderMetrics,
      tracer: options.tracers?.sender,
      config: {
        concurrency,
        reconcileIntervalMs: options.reconcileIntervalMs ?? 0,
        reconcileGraceMs: options.reconcileGraceMs ?? 300_000,
        ...(options.wakeRequeueMinAgeMs !== undefined ? { wakeRequeueMinAgeMs: options.wakeRequeueMinAgeMs } : {}),
        ...(options.statsFlushIntervalMs !== undefined ? { statsFlushIntervalMs: options.statsFlushIntervalMs } : {}),
        userAgent: 'Postern/test',
        checkTimeoutMs: options.checkTimeoutMs,
        transformTimeoutMs: options.transformTimeoutMs ?? 1000,
        allowList,
        egressProxyUrl: options.egressProxyUrl ?? null,
        egressProxyBypass: options.egressProxyBypass ?? [],
      },
    });
  if (options.sender !== false) sender = makeSender(options.senderConcurrency ?? 20);

  const api: TestPostern['api'] = apiClient(baseUrl);
  const client = (key: string, orgId?: string): Postern => {
    const credential = key === TEST_ADMIN_TOKEN ? { adminToken: key } : key.startsWith('ppk_') ? { platformKey: key, orgId } : { apiKey: key };
    return new Postern({ baseUrl, ...credential, maxRetries: 0 });
  };

  const stopSender = async () => {
    if (sender) {
      await sender.close();
      sender = null;
    }
  };

  const startSender = async (opts: { concurrency?: number } = {}) => {
    if (sender) throw new Error('startSender: a sender is already running');
    // Not awaiting readiness: a listener attached right after this resolves sees every job.
    sender = makeSender(opts.concurrency ?? options.senderConcurrency ?? 20);
  };

  return {
    baseUrl,
    prefix,
    store,
    queue,
    queues,
    get sender() {
      return sender;
    },
    redis: apiRedis,
    liveHub,
    ingestRegistry,
    senderRegistry,
    api,
    client,
    async createOrg(name = 'acme') {
      const org = await client(TEST_ADMIN_TOKEN).orgs.create({ name }).catch((err: unknown) => {
        throw new Error(`createOrg: ${describeFailure(err)}`, { cause: err });
      });
      return { id: org.id, apiKey: org.apiKey };
    },
    async createEndpoint(key, body) {
      return client(key).endpoints.create(body as never).catch((err: unknown) => {
        throw new Error(`createEndpoint: ${describeFailure(err)}`, { cause: err });
      });
    },
    stopSender,
    startSender,
    async close() {
      await stopSender();
      transport.close();
      await ingestSandbox.close();
      await liveHub.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections?.();
      for (const q of queues.partitions) await q.obliterate({ force: true }).catch(() => undefined);
      await queues.close();
      await workerQueues.close();
      await deleteByPrefix(apiRedis, prefix);
      await apiRedis.quit();
      await queueRedis.quit();
      await workerRedis.quit();
    },
  };
}

/**
 * Deletes every key under `prefix:` and the queue partitions' `{prefix:q<n>}` (SCAN, so it never
 * blocks Redis for long; on a cluster, on every master, one key per DEL).
 */
export async function deleteByPrefix(redis: RedisClient, prefix: string): Promise<void> {
  const nodes: RedisClient[] = 'nodes' in redis ? redis.nodes('master') : [redis];
  for (const node of nodes) {
    for (const match of [`${prefix}:*`, `{${prefix}:q*`]) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', match, 'COUNT', 1000);
        cursor = next;
        if (keys.length === 0) continue;
        if (node === redis) await redis.del(...keys);
        else await Promise.all(keys.map((k) => redis.del(k)));
      } while (cursor !== '0');
    }
  }
}

/** A fast fixed-wait policy for tests: `maxAttempts` attempts, `waitMs` between them, no jitter. */
export function fastPolicy(maxAttempts: number, waitMs = 20, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { maxAttempts, schedule: { kind: 'fixed', waitsMs: Array(Math.max(0, maxAttempts - 1)).fill(waitMs) }, jitterRatio: 0, ...extra };
}

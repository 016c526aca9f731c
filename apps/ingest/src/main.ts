import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { createIdFactory, describeRedisPlan, supportsWaitAof, createSecretBox, httpServerOptions, loggerOptions, logPlanOf, prettyLogOptions, logProcessOutput } from '@postern/shared';
import { connectRedis, createDeliveryQueues, createStore, DATA_CHECK_INTERVAL_MS, DATA_LOSS_MESSAGE, DataLossMonitor, redisTargetOfPlan, checkSecretsKeyAtStart } from '@postern/store';
import { startTracing, type Tracing } from '@postern/telemetry';
import { pino } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { createApp } from './app.js';
import { LiveHub } from './live-hub.js';
import { createIngestServer } from './ingest-server.js';
import { loadIngestConfig, type IngestConfig } from './config.js';

let config: IngestConfig;
try {
  config = loadIngestConfig(process.env);
} catch (err) {
  console.error(`postern-ingest: ${(err as Error).message}`);
  process.exit(1);
}

// Tracing is off (and its SDK never loaded) unless the standard OTEL_* variables ask for it.
let tracing: Tracing | null;
try {
  const version = (createRequire(import.meta.url)('../package.json') as { version: string }).version;
  tracing = await startTracing({ serviceName: 'postern-ingest', serviceVersion: version, env: process.env });
} catch (err) {
  console.error(`postern-ingest: ${(err as Error).message}`);
  process.exit(1);
}

// JSON in production; lines for people under `npm start` (NODE_ENV=development); LOG_FORMAT overrides.
const logPlan = logPlanOf(config);
// pino-pretty is loaded only for the readable format: production's JSON logs never need it.
const prettyStream = logPlan.format === 'pretty' ? (await import('pino-pretty')).default(prettyLogOptions(Boolean(process.stdout.isTTY) || Boolean(process.env.FORCE_COLOR))) : undefined;
const logger = pino(loggerOptions('postern-ingest', config.LOG_LEVEL), prettyStream);
// Every line on stdout one JSON object: what libraries print goes through the logger, and a crash
// is logged as one line before the exit.
logProcessOutput(logger);
// Standalone (REDIS_URL) or Redis Cluster (REDIS_CLUSTER_NODES): the same key layout either way.
// Standalone, Redis Cluster or Sentinel, with TLS and an ACL user (README, "Production Redis").
let redisTarget: ReturnType<typeof redisTargetOfPlan>;
try {
  redisTarget = redisTargetOfPlan(config.redisPlan);
} catch (err) {
  console.error(`postern-ingest: ${(err as Error).message}`);
  process.exit(1);
}
const redis = connectRedis(redisTarget, 'api');
redis.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis connection error'));
// Every stored secret is sealed with SECRETS_KEY (README, "Secrets at rest").
const secretBox = createSecretBox(config.secretKeyring);
const store = createStore({ redis, prefix: config.REDIS_PREFIX, queuePartitions: config.QUEUE_PARTITIONS, secretBox, liveFeed: { maxEntries: config.LIVE_FEED_MAX_ENTRIES } });
// The keys must open what is stored: a wrong SECRETS_KEY stops start-up with one line naming the key id.
await checkSecretsKeyAtStart({ redis, keys: store.keys, box: secretBox, appName: 'postern-ingest', logger });
// `local-fsync` needs WAITAOF (Redis ≥ 7.2): refused at start rather than on the first event.
if (config.ACCEPT_DURABILITY === 'local-fsync') {
  const info = await redis.info('server').catch(() => null);
  const version = info ? (/redis_version:(\S+)/.exec(info)?.[1] ?? '0') : null;
  if (version !== null && !supportsWaitAof(version)) {
    console.error(`postern-ingest: invalid configuration: ACCEPT_DURABILITY: local-fsync needs WAITAOF (Redis 7.2 or later); this Redis is ${version}`);
    process.exit(1);
  }
}
// Its own connection: every pipeline the store makes would otherwise copy BullMQ's scripts.
const queueRedis = connectRedis(redisTarget, 'api');
queueRedis.on('error', (err: Error) => logger.warn({ err: err.message }, 'queue redis connection error'));
const queues = createDeliveryQueues(queueRedis, store.keys);
queues.onError((err: Error) => logger.warn({ err: err.message }, 'queue error'));

// Default process metrics (CPU, memory, event-loop lag, GC) next to ingest's own, on one registry.
const registry = new Registry();
collectDefaultMetrics({ register: registry });

// Redis losing its data while ingest runs fails /readyz, logs at error level and sets a gauge.
const dataLossMonitor = new DataLossMonitor({
  redis,
  keys: store.keys,
  onLost: (loss) => logger.error({ check: 'redis_data', expectedInstance: loss.expected.id, foundInstance: loss.found?.id ?? null }, DATA_LOSS_MESSAGE),
});
void dataLossMonitor.check();
setInterval(() => void dataLossMonitor.check(), DATA_CHECK_INTERVAL_MS).unref();

// Live streams: one blocking connection per org being watched, on its own (it waits out outages).
const liveHub = new LiveHub({ feed: store.liveFeed, redis, connect: () => connectRedis(redisTarget, 'worker'), logger });

const app = createApp({
  redis,
  liveHub,
  dataLossMonitor,
  store,
  queues,
  clock: { now: () => Date.now() },
  ids: createIdFactory(),
  logger,
  registry,
  tracer: tracing?.tracer,
  config: {
    adminToken: config.ADMIN_TOKEN,
    bullBoardReadOnly: config.BULL_BOARD_READ_ONLY,
    maxBodyBytes: config.MAX_BODY_BYTES,
    maxEndpointsPerOrg: config.MAX_ENDPOINTS_PER_ORG,
    maxDeliveriesPerRequest: config.MAX_DELIVERIES_PER_REQUEST,
    allowList: config.allowList,
    secretRotationGraceMs: 24 * 60 * 60 * 1000,
    lookupCacheTtlMs: config.LOOKUP_CACHE_TTL_MS,
    lookupCacheMaxEntries: config.LOOKUP_CACHE_MAX_ENTRIES,
    publicUrl: config.PUBLIC_URL,
    portalFrameAncestors: config.PORTAL_FRAME_ANCESTORS,
    logLevels: { request: logPlan.requestLevel, event: logPlan.eventLevel },
    liveStream: { maxPerKey: config.LIVE_STREAM_MAX_PER_KEY, heartbeatMs: config.LIVE_STREAM_HEARTBEAT_MS },
    durability: { mode: config.ACCEPT_DURABILITY, replicas: config.ACCEPT_REPLICAS, waitMs: config.ACCEPT_WAIT_MS },
  },
});

// Not app.listen: express 5 calls its callback on a listen error too, which would log "listening".
// Header, request and keep-alive timeouts: a stalled client gets 408 and loses its connection.
const server = createIngestServer(app, httpServerOptions(config));
server.on('error', (err) => {
  // One plain line on stderr, as for a configuration error (console now writes JSON to stdout).
  process.stderr.write(`postern-ingest: cannot listen on ${config.HOST}:${config.PORT}: ${err.message}\n`);
  process.exit(1);
});
server.listen(config.PORT, config.HOST, () => {
  // What was actually bound: the port PORT=0 picked, the address HOST resolved to.
  const { address, port } = server.address() as AddressInfo;
  const shown = address.includes(':') ? `[${address}]` : address;
  const local = address === '0.0.0.0' || address === '::' ? ` (all interfaces; locally http://127.0.0.1:${port})` : '';
  logger.info({ port, address, host: config.HOST, prefix: config.REDIS_PREFIX, redis: describeRedisPlan(config.redisPlan), cluster: 'clusterNodes' in redisTarget, queuePartitions: config.QUEUE_PARTITIONS, tracing: tracing ? tracing.url : 'off' }, `ingest listening on http://${shown}:${port}${local}`);
});

function shutdown(signal: string): void {
  logger.info({ signal }, 'ingest stopping');
  // Live streams never end by themselves: end them, so the server can close.
  void liveHub.close();
  server.close(() => {
    void queues
      .close()
      .finally(() => Promise.allSettled([queueRedis.quit(), redis.quit(), tracing?.shutdown()]))
      .finally(() => process.exit(0));
  });
  setTimeout(() => process.exit(0), 10_000).unref();
}
process.on('SIGTERM', () => shutdown('SIGTERM'));
process.on('SIGINT', () => shutdown('SIGINT'));

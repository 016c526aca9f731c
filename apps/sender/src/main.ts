import { classifyAddress, describeRedisPlan, createSecretBox, httpServerOptions, loggerOptions, logPlanOf, prettyLogOptions, logProcessOutput } from '@postern/shared';
import { connectRedis, createDeliveryQueues, createStore, DATA_CHECK_INTERVAL_MS, DATA_LOSS_MESSAGE, DataLossMonitor, redisTargetOfPlan, checkSecretsKeyAtStart, markEndpointsForClaim } from '@postern/store';
import { pino } from 'pino';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { loadSenderConfig, proxyBypassList, type SenderConfig } from './config.js';
import { createDnsCache } from './dns-cache.js';
import { createGotTransport } from './http-transport.js';
import { createSender } from './sender.js';
import { createSenderHttp } from './sender-http.js';
import { createSenderMetrics } from './sender-metrics.js';
import { SENDER_USER_AGENT } from './user-agent.js';
import { startTracing, type Tracing } from '@postern/telemetry';

let config: SenderConfig;
try {
  config = loadSenderConfig(process.env);
} catch (err) {
  console.error(`postern-sender: ${(err as Error).message}`);
  process.exit(1);
}

// Tracing is off (and its SDK never loaded) unless the standard OTEL_* variables ask for it.
let tracing: Tracing | null;
try {
  tracing = await startTracing({ serviceName: 'postern-sender', serviceVersion: SENDER_USER_AGENT.replace(/^Postern\//, ''), env: process.env });
} catch (err) {
  console.error(`postern-sender: ${(err as Error).message}`);
  process.exit(1);
}

// JSON in production; lines for people under `npm start` (NODE_ENV=development); LOG_FORMAT overrides.
const logPlan = logPlanOf(config);
// pino-pretty is loaded only for the readable format: production's JSON logs never need it.
const prettyStream = logPlan.format === 'pretty' ? (await import('pino-pretty')).default(prettyLogOptions(Boolean(process.stdout.isTTY) || Boolean(process.env.FORCE_COLOR))) : undefined;
const logger = pino(loggerOptions('postern-sender', config.LOG_LEVEL), prettyStream);
// Every line on stdout one JSON object: what libraries print goes through the logger, and a crash
// is logged as one line before the exit.
logProcessOutput(logger);
// Standalone (REDIS_URL) or Redis Cluster (REDIS_CLUSTER_NODES): the same key layout either way.
// Standalone, Redis Cluster or Sentinel, with TLS and an ACL user (README, "Production Redis").
let redisTarget: ReturnType<typeof redisTargetOfPlan>;
try {
  redisTarget = redisTargetOfPlan(config.redisPlan);
} catch (err) {
  console.error(`postern-sender: ${(err as Error).message}`);
  process.exit(1);
}
const redis = connectRedis(redisTarget, 'worker');
redis.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis connection error'));
// Every stored secret is sealed with SECRETS_KEY (README, "Secrets at rest").
const secretBox = createSecretBox(config.secretKeyring);
const store = createStore({ redis, prefix: config.REDIS_PREFIX, queuePartitions: config.QUEUE_PARTITIONS, secretBox, liveFeed: { maxEntries: config.LIVE_FEED_MAX_ENTRIES } });
// The keys must open what is stored: a wrong SECRETS_KEY stops start-up with one line naming the key id.
await checkSecretsKeyAtStart({ redis, keys: store.keys, box: secretBox, appName: 'postern-sender', logger });
// Before any job is taken: the marks the claim reads on each endpoint (the org's gate, a non-empty
// line), for data an older Postern wrote without them.
const claimMarks = await markEndpointsForClaim(redis, store.keys);
logger.info(claimMarks, 'endpoints marked for the claim');
const queues = createDeliveryQueues(redis, store.keys);
// Without a listener BullMQ prints the error itself, as a multi-line stack trace.
queues.onError((err: Error) => logger.warn({ err: err.message }, 'queue error'));
const allowList = config.allowList;
const classify = (address: string) => classifyAddress(address, allowList);
// One DNS cache for the pre-send check and the sockets' own lookups: one answer serves both.
const dns = createDnsCache();
const transport = createGotTransport({ allowList, classifyAddress: classify, lookupAll: dns.lookupAll });
// The sender's metrics and the default process metrics (CPU, memory, event-loop lag, GC).
const registry = new Registry();
collectDefaultMetrics({ register: registry });
const metrics = createSenderMetrics({ registry, queues: queues.partitions, longestOverdueMs: () => queues.longestOverdueMs(redis, Date.now()) });
const sender = createSender({
  redis,
  store,
  queues,
  transport,
  clock: { now: () => Date.now() },
  random: Math.random,
  logger,
  classifyAddress: classify,
  lookupAll: dns.lookupAll,
  metrics,
  tracer: tracing?.tracer,
  config: {
    concurrency: config.SENDER_CONCURRENCY,
    reconcileIntervalMs: config.RECONCILE_INTERVAL_MS,
    reconcileGraceMs: config.RECONCILE_GRACE_MS,
    janitorIntervalMs: config.JANITOR_INTERVAL_MS,
    lockDurationMs: config.JOB_LOCK_DURATION_MS,
    stalledIntervalMs: config.STALLED_CHECK_INTERVAL_MS,
    parkSafetyDelayMs: config.PARK_SAFETY_DELAY_MS,
    heartbeatIntervalMs: config.HEARTBEAT_INTERVAL_MS,
    takeoverAfterMs: config.TAKEOVER_AFTER_MS,
    checkTimeoutMs: config.PRE_ATTEMPT_CHECK_TIMEOUT_MS,
    transformTimeoutMs: config.TRANSFORM_TIMEOUT_MS,
    transformThreads: config.TRANSFORM_THREADS,
    userAgent: SENDER_USER_AGENT,
    allowList,
    egressProxyUrl: config.EGRESS_PROXY_URL || null,
    egressProxyBypass: proxyBypassList(config.EGRESS_PROXY_BYPASS),
  },
});
logger.info({ concurrency: config.SENDER_CONCURRENCY, prefix: config.REDIS_PREFIX, allowList, redis: describeRedisPlan(config.redisPlan), cluster: 'clusterNodes' in redisTarget, queuePartitions: config.QUEUE_PARTITIONS, tracing: tracing ? tracing.url : 'off', egressProxy: config.EGRESS_PROXY_URL ? new URL(config.EGRESS_PROXY_URL).host : 'none' }, 'sender started');

// Redis losing its data while the sender runs fails /readyz, logs at error level and sets a gauge.
const dataLossMonitor = new DataLossMonitor({
  redis,
  keys: store.keys,
  onLost: (loss) => logger.error({ check: 'redis_data', expectedInstance: loss.expected.id, foundInstance: loss.found?.id ?? null }, DATA_LOSS_MESSAGE),
});
void dataLossMonitor.check();
const dataCheckTimer = setInterval(() => void dataLossMonitor.check(), DATA_CHECK_INTERVAL_MS);
dataCheckTimer.unref();

// /healthz, /readyz and /metrics for probes and Prometheus; a port that cannot be had stops start-up.
const http = createSenderHttp({ registry, redis, worker: sender, timeouts: httpServerOptions(config), dataLossMonitor });
http.listen(config.SENDER_PORT, config.SENDER_HOST, () => {
  const address = http.address();
  const port = typeof address === 'object' && address ? address.port : config.SENDER_PORT;
  logger.info({ port, host: config.SENDER_HOST }, `sender health and metrics on http://${config.SENDER_HOST === '0.0.0.0' ? '127.0.0.1' : config.SENDER_HOST}:${port}`);
});
http.on('error', (err) => {
  // One plain line on stderr, as for a configuration error (console now writes JSON to stdout).
  process.stderr.write(`postern-sender: cannot listen on ${config.SENDER_HOST}:${config.SENDER_PORT}: ${err.message}\n`);
  process.exit(1);
});

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'sender stopping: finishing in-flight attempts');
  http.close();
  // Whatever happens (Redis unreachable, say), the process is gone shortly after the grace period.
  setTimeout(() => process.exit(1), config.SHUTDOWN_GRACE_MS + 5000).unref();
  const { finished } = await sender.close({ graceMs: config.SHUTDOWN_GRACE_MS });
  // Attempts were abandoned (their jobs run again once their locks expire): say so in the exit code.
  if (!finished) process.exit(1);
  await queues.close();
  transport.close();
  await redis.quit().catch(() => undefined);
  await tracing?.shutdown().catch(() => undefined);
  logger.info('sender stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));

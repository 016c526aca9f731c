import { classifyAddress } from '@postern/shared';
import { createDeliveryQueue, createRedisConnection, createStore } from '@postern/store';
import { pino } from 'pino';
import { loadSenderConfig, type SenderConfig } from './config.js';
import { createGotTransport } from './http-transport.js';
import { createSender } from './sender.js';
import { SENDER_USER_AGENT } from './user-agent.js';

let config: SenderConfig;
try {
  config = loadSenderConfig(process.env);
} catch (err) {
  console.error(`postern-sender: ${(err as Error).message}`);
  process.exit(1);
}

const logger = pino({ name: 'postern-sender', level: config.LOG_LEVEL });
const redis = createRedisConnection(config.REDIS_URL, 'worker');
redis.on('error', (err: Error) => logger.warn({ err: err.message }, 'redis connection error'));
const store = createStore({ redis, prefix: config.REDIS_PREFIX });
const queue = createDeliveryQueue(redis, store.keys.queuePrefix);
const allowList = config.allowList;
const classify = (address: string) => classifyAddress(address, allowList);
const transport = createGotTransport({ allowList, classifyAddress: classify });
const sender = createSender({
  redis,
  store,
  queue,
  transport,
  clock: { now: () => Date.now() },
  random: Math.random,
  logger,
  classifyAddress: classify,
  config: {
    concurrency: config.SENDER_CONCURRENCY,
    reconcileIntervalMs: config.RECONCILE_INTERVAL_MS,
    reconcileGraceMs: config.RECONCILE_GRACE_MS,
    janitorIntervalMs: config.JANITOR_INTERVAL_MS,
    userAgent: SENDER_USER_AGENT,
  },
});
logger.info({ concurrency: config.SENDER_CONCURRENCY, prefix: config.REDIS_PREFIX, allowList }, 'sender started');

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'sender stopping: finishing in-flight attempts');
  const force = setTimeout(() => {
    logger.error('in-flight attempts did not finish in time; exiting (their jobs will run again)');
    process.exit(1);
  }, config.SHUTDOWN_GRACE_MS);
  force.unref();
  await sender.close();
  await queue.close();
  transport.close();
  await redis.quit().catch(() => undefined);
  logger.info('sender stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));

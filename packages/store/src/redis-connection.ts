import { Redis, type RedisOptions } from 'ioredis';

/**
 * Opens a Redis connection for one role.
 * - `api`: fails fast while Redis is unreachable (`enableOfflineQueue: false`, one retry per
 *   request), so ingest can answer 503 instead of hanging.
 * - `worker`: waits out outages (`maxRetriesPerRequest: null`), as BullMQ workers require.
 */
export function createRedisConnection(url: string, role: 'api' | 'worker', extra: RedisOptions = {}): Redis {
  const base: RedisOptions =
    role === 'api'
      ? { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: 2000 }
      : { maxRetriesPerRequest: null, enableReadyCheck: true };
  return new Redis(url, { ...base, retryStrategy: (times) => Math.min(times * 200, 2000), ...extra });
}

/**
 * Whether Redis answers PING within `timeoutMs` (the `/readyz` check of both apps). A connection
 * that is not `ready` fails at once: a worker connection queues commands while disconnected, so
 * a PING then would wait out the outage instead of answering.
 */
export async function redisAnswers(redis: Redis, timeoutMs: number): Promise<boolean> {
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

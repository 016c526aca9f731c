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

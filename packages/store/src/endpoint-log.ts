import type { RedisClient } from './redis-connection.js';
import type { KeySchema } from './keys.js';
import { assertExec } from './org-repository.js';
import { DELIVERY_STATUSES } from './records.js';

/**
 * Ids of an endpoint's delivery log, every status, in id (= creation) order: the union of its
 * per-status indexes. Compact records keep no separate index of every delivery (it cost one more
 * sorted-set member, about 130 B, per delivery); the status indexes are read in one transaction,
 * so a delivery changing status meanwhile is seen once. `max` and `min` are ZRANGEBYLEX bounds
 * (`+`, `-`, `(id`, `[id`); at most `limit` ids, newest first (`desc`) or oldest first (`asc`).
 */
export async function endpointLogIds(
  redis: RedisClient,
  keys: KeySchema,
  orgId: string,
  endpointId: string,
  q: { order: 'asc' | 'desc'; max: string; min: string; limit: number },
): Promise<string[]> {
  const multi = redis.multi();
  for (const s of DELIVERY_STATUSES) {
    const key = keys.endpointDeliveriesByStatus(orgId, endpointId, s);
    if (q.order === 'desc') multi.zrevrangebylex(key, q.max, q.min, 'LIMIT', 0, q.limit);
    else multi.zrangebylex(key, q.min, q.max, 'LIMIT', 0, q.limit);
  }
  const ids = [...new Set(assertExec(await multi.exec()).flatMap(([, list]) => list as string[]))].sort();
  if (q.order === 'desc') ids.reverse();
  return ids.slice(0, q.limit);
}

/** How many deliveries an endpoint's log holds, every status. */
export async function endpointLogSize(redis: RedisClient, keys: KeySchema, orgId: string, endpointId: string): Promise<number> {
  const multi = redis.multi();
  for (const s of DELIVERY_STATUSES) multi.zcard(keys.endpointDeliveriesByStatus(orgId, endpointId, s));
  return assertExec(await multi.exec()).reduce((sum, [, n]) => sum + Number(n), 0);
}

import type { RedisClient } from './redis-connection.js';
import type { KeySchema } from './keys.js';
import { assertExec } from './org-repository.js';
import { DELIVERY_STATUSES, type DeliveryStatus } from './records.js';

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

/**
 * Ids that may be an endpoint's deliveries of one status, in id (= creation) order, for a list of
 * that status: the caller keeps those whose stored status is `status`. A delivery stays in its
 * endpoint's `pending` index while an attempt is in flight (the claim does not move it), so:
 * - `pending`: the pending index (in-flight ones among them are left out by the caller);
 * - `in_flight`: the deliveries holding one of the endpoint's concurrency slots (its leases, at most
 *   its `perEndpoint` limit), and the `in_flight` index where releases before this one put them;
 * - any other status: its own index, every id of which has that status.
 * `max`, `min`, `order` and `limit` as {@link endpointLogIds}.
 */
export async function endpointStatusIds(
  redis: RedisClient,
  keys: KeySchema,
  orgId: string,
  endpointId: string,
  status: DeliveryStatus,
  q: { order: 'asc' | 'desc'; max: string; min: string; limit: number },
): Promise<string[]> {
  const index = keys.endpointDeliveriesByStatus(orgId, endpointId, status);
  const range = (key: string) =>
    q.order === 'desc' ? redis.zrevrangebylex(key, q.max, q.min, 'LIMIT', 0, q.limit) : redis.zrangebylex(key, q.min, q.max, 'LIMIT', 0, q.limit);
  if (status !== 'in_flight') return range(index);
  const [leased, indexed] = await Promise.all([redis.zrange(keys.endpointLeases(orgId, endpointId), 0, -1), range(index)]);
  const inBounds = (id: string) => withinLex(id, q.min, q.max);
  const ids = [...new Set([...leased.filter(inBounds), ...indexed])].sort();
  if (q.order === 'desc') ids.reverse();
  return ids.slice(0, q.limit);
}

/** Whether `id` lies within ZRANGEBYLEX bounds `min`..`max` (`-`, `+`, `[id` inclusive, `(id` exclusive). */
function withinLex(id: string, min: string, max: string): boolean {
  const above = min === '-' || (min.startsWith('(') ? id > min.slice(1) : id >= min.slice(1));
  const below = max === '+' || (max.startsWith('(') ? id < max.slice(1) : id <= max.slice(1));
  return above && below;
}

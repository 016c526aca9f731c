import { Cluster } from 'ioredis';
import type { KeySchema, RedisClient } from '@postern/store';

/**
 * One org's records by kind, counted with SCAN on every master that could hold them: delivery
 * hashes, attempts hashes (compact records keep one only for a delivery with a kept response) and
 * event hashes (an event's redeliveries index is not counted). Used by the retention tests and the
 * bench's retention-at-speed run.
 */
export async function countOrgRecords(redis: RedisClient, keys: KeySchema, orgId: string): Promise<{ deliveries: number; attempts: number; events: number }> {
  const org = keys.delivery(orgId, 'x').slice(0, -':delivery:x'.length);
  const nodes: RedisClient[] = redis instanceof Cluster ? redis.nodes('master') : [redis];
  const out = { deliveries: 0, attempts: 0, events: 0 };
  for (const node of nodes) {
    for (const match of [`${org}:delivery:*`, `${org}:event:*`]) {
      let cursor = '0';
      do {
        const [next, found] = await node.scan(cursor, 'MATCH', match, 'COUNT', 1000);
        cursor = next;
        for (const key of found) {
          if (key.endsWith(':attempts')) out.attempts += 1;
          else if (key.includes(':delivery:')) out.deliveries += 1;
          else if (!key.endsWith(':redeliveries')) out.events += 1;
        }
      } while (cursor !== '0');
    }
  }
  return out;
}

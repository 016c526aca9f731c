import { newId } from '@postern/shared';
import type { RedisClient } from './redis-connection.js';
import type { KeySchema } from './keys.js';
import { LuaScript } from './lua-script.js';
import { assertExec } from './org-repository.js';

const listUnfinishedScript = LuaScript.load('list-unfinished');

/** The statuses of an unfinished delivery; a held one is `pending` too (and in its endpoint's held index). */
export type UnfinishedStatus = 'pending' | 'in_flight';

const UNFINISHED_STATUSES: readonly UnfinishedStatus[] = ['pending', 'in_flight'];

/** One endpoint's index of unfinished deliveries in one status: a place in the reconciler's sweep. */
export interface UnfinishedIndex {
  endpointId: string;
  status: UnfinishedStatus;
}

/**
 * Where an org's unfinished deliveries are found, for the reconciler: no index of their own (it
 * cost two commands per delivery, one when written and one when finished), but the `pending` and
 * `in_flight` status indexes of each of the org's endpoints, live or deleted (a deleted endpoint
 * stays listed while its log has rows, so its queued deliveries are found and cancelled). Those
 * indexes are ordered by delivery id, which starts with its creation time.
 */
export class UnfinishedDeliveries {
  constructor(private readonly redis: RedisClient, private readonly keys: KeySchema) {}

  /**
   * A page of the org's endpoint ids, live and deleted ones (whose log is still kept) together,
   * in id order, after `cursor`; at most `limit` (≥ 1). One round trip.
   */
  async listEndpoints(orgId: string, opts: { limit: number; cursor?: string }): Promise<string[]> {
    const min = opts.cursor ? `(${opts.cursor}` : '-';
    const [live, deleted] = await Promise.all([
      this.redis.zrangebylex(this.keys.orgEndpoints(orgId), min, '+', 'LIMIT', 0, opts.limit),
      this.redis.zrangebylex(this.keys.deletedEndpoints(orgId), min, '+', 'LIMIT', 0, opts.limit),
    ]);
    // Each list is in order; of the two together, the first `limit` are the page (the rest are read again next).
    return [...new Set([...live, ...deleted])].sort().slice(0, opts.limit);
  }

  /**
   * The next deliveries created up to `createdUpToMs` (epoch ms, inclusive) from `indexes`, one
   * index after the other, each in id order, the first read after `afterId` (an id it returned
   * before; absent = from its start); at most `limit` (≥ 1). `indexesDone` says how many of
   * `indexes` were read up to the bound; when `ids` reach the limit, the index after those (where
   * the last id came from) may have more. One round trip; `indexes` must be of one org.
   */
  async list(orgId: string, indexes: readonly UnfinishedIndex[], q: { afterId?: string; createdUpToMs: number; limit: number }): Promise<{ ids: string[]; indexesDone: number }> {
    if (indexes.length === 0) return { ids: [], indexesDone: 0 };
    // The largest id of that instant (all-ones random part): every delivery created in it or before sorts at or below.
    const bound = `[${newId('dlv', Math.max(0, Math.floor(q.createdUpToMs)), (n) => Buffer.alloc(n, 0xff))}`;
    const keys = indexes.map((i) => this.keys.endpointDeliveriesByStatus(orgId, i.endpointId, i.status));
    const [done, ...ids] = (await listUnfinishedScript.run(this.redis, keys, [q.afterId ? `(${q.afterId}` : '-', bound, Math.max(1, q.limit)])) as [number, ...string[]];
    return { ids, indexesDone: Number(done) };
  }

  /**
   * How many unfinished deliveries the org has, at its live and deleted endpoints. Reads every
   * endpoint's two indexes (a page of endpoints per round trip): for tests, benchmarks and tools
   * waiting for an org's deliveries to finish, not for a request's path.
   */
  async count(orgId: string): Promise<number> {
    const PAGE = 100;
    let total = 0;
    let cursor: string | undefined;
    for (;;) {
      const endpointIds = await this.listEndpoints(orgId, { limit: PAGE, cursor });
      if (endpointIds.length > 0) {
        const pipeline = this.redis.pipeline();
        for (const id of endpointIds) for (const s of UNFINISHED_STATUSES) pipeline.zcard(this.keys.endpointDeliveriesByStatus(orgId, id, s));
        total += assertExec(await pipeline.exec()).reduce((sum, [, n]) => sum + Number(n), 0);
      }
      if (endpointIds.length < PAGE) return total;
      cursor = endpointIds[endpointIds.length - 1];
    }
  }

  /**
   * Deletes the org's own index of unfinished deliveries that earlier releases wrote
   * (`keys.legacyUnfinishedDeliveries`): nothing reads it any more, and every delivery in it is in
   * its endpoint's indexes too. The reconciler calls it once per org per sweep, so the index does
   * not outlive an upgrade; when it is gone already, that is one UNLINK of a missing key.
   */
  async dropLegacyIndex(orgId: string): Promise<void> {
    await this.redis.unlink(this.keys.legacyUnfinishedDeliveries(orgId));
  }
}

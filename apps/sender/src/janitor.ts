import type { Store } from '@postern/store';
import type { Logger } from 'pino';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * A deleted endpoint's policy is gone with it; its finished deliveries stay readable this long
 * after they finished (the `standard` log window), then go like any others.
 */
export const DELETED_ENDPOINT_RETENTION_DAYS = 30;

/** Removes finished deliveries past their endpoint's retention. */
export interface Janitor {
  /**
   * One bounded step of a sweep over every endpoint: at most `endpointBatch` endpoints and
   * `perEndpointLimit` deliveries examined for each. Returns how many deliveries were removed.
   */
  runOnce(opts?: { endpointBatch?: number; perEndpointLimit?: number }): Promise<{ endpoints: number; removed: number }>;
}

/**
 * Retention as the policy says (docs/architecture.md "log kept" row): `{days}` removes finished deliveries
 * that finished more than that long ago (jitter-45h: 30 days); `{lastPerEndpoint}` keeps only the
 * newest N finished ones (custral: 100). Attempts go with their delivery, and an event goes with
 * its last delivery. Queued and in-flight deliveries are never removed (jitter-45h).
 */
export function createJanitor(deps: { store: Store; clock: { now(): number }; logger: Logger }): Janitor {
  let cursor: string | undefined;
  let deletedCursor: string | undefined;
  return {
    async runOnce(opts = {}) {
      const endpointBatch = opts.endpointBatch ?? 100;
      const perEndpointLimit = opts.perEndpointLimit ?? 500;
      const ids = await deps.store.endpoints.listAllIds({ limit: endpointBatch, cursor });
      cursor = ids.length < endpointBatch ? undefined : ids[ids.length - 1];
      let removed = 0;
      const now = deps.clock.now();
      for (const id of ids) {
        const endpoint = await deps.store.endpoints.get(id);
        if (!endpoint) continue;
        const retention = endpoint.policy.retention;
        const victims = 'days' in retention
          ? await expiredByAge(deps.store, id, now - retention.days * DAY_MS, perEndpointLimit)
          : await beyondNewest(deps.store, id, retention.lastPerEndpoint, perEndpointLimit);
        for (const deliveryId of victims) if (await deps.store.deliveries.purge(deliveryId)) removed += 1;
      }
      const deletedIds = await deps.store.endpoints.listDeletedIds({ limit: endpointBatch, cursor: deletedCursor });
      deletedCursor = deletedIds.length < endpointBatch ? undefined : deletedIds[deletedIds.length - 1];
      for (const id of deletedIds) {
        const victims = await expiredByAge(deps.store, id, now - DELETED_ENDPOINT_RETENTION_DAYS * DAY_MS, perEndpointLimit);
        for (const deliveryId of victims) if (await deps.store.deliveries.purge(deliveryId)) removed += 1;
        await deps.store.endpoints.forgetDeletedIfEmpty(id);
      }
      if (removed > 0) deps.logger.info({ removed, endpoints: ids.length + deletedIds.length }, 'janitor removed deliveries past retention');
      return { endpoints: ids.length + deletedIds.length, removed };
    },
  };
}

/**
 * Finished deliveries that finished before `cutoffMs`, at most `limit`, oldest first. Only the
 * finished statuses' indexes are read: queued deliveries older than the cutoff, which are never
 * removed, would otherwise fill every bounded step and stall the sweep for good.
 */
async function expiredByAge(store: Store, endpointId: string, cutoffMs: number, limit: number): Promise<string[]> {
  const out: string[] = [];
  for (const status of ['succeeded', 'failed', 'cancelled'] as const) {
    const oldest = await store.deliveries.getMany(await store.deliveries.oldestIds(endpointId, limit, status));
    for (const d of oldest) {
      // Ids are time-ordered: past the cutoff by creation, nothing later can be older.
      if (d.createdAt >= cutoffMs) break;
      if (d.finishedAt !== null && d.finishedAt < cutoffMs) out.push(d.id);
    }
  }
  return out.sort().slice(0, limit);
}

/** The oldest finished deliveries beyond the newest `keep`, at most `limit` of them. */
async function beyondNewest(store: Store, endpointId: string, keep: number, limit: number): Promise<string[]> {
  const statuses = ['succeeded', 'failed', 'cancelled'] as const;
  const counts = await store.deliveries.countByStatus(endpointId, statuses);
  const excess = Math.min(limit, counts.reduce((a, b) => a + b, 0) - keep);
  if (excess <= 0) return [];
  const lists = await Promise.all(statuses.map((s) => store.deliveries.oldestIds(endpointId, excess, s)));
  return lists.flat().sort().slice(0, excess);
}

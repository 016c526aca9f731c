import type { Store } from '@postern/store';
import type { Logger } from 'pino';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * A deleted endpoint's policy is gone with it; its finished deliveries stay readable this long
 * after they finished (the `standard` log window), then go like any others.
 */
export const DELETED_ENDPOINT_RETENTION_DAYS = 30;

/** Removes finished deliveries past their endpoint's retention, and signing secrets past their grace. */
export interface Janitor {
  /**
   * One bounded step of a sweep over every org's endpoints (live, then deleted ones): at most
   * `endpointBatch` endpoints (and as many org reads) and
   * `perEndpointLimit` deliveries examined for each. Returns how many deliveries were removed, and
   * how many rotated-out signing secrets whose grace had ended were deleted (`secretsDropped`).
   */
  runOnce(opts?: { endpointBatch?: number; perEndpointLimit?: number }): Promise<{ endpoints: number; removed: number; secretsDropped: number }>;
}

/**
 * What is left of retention after the finish scripts (docs/architecture.md, "Retention"): a
 * delivery finished under `{days}` expires natively and `{lastPerEndpoint}` is trimmed right after
 * each finish, so this sweep only catches what those cannot see — index entries of expired
 * deliveries not yet dropped by a read, records written without an expiry (before the org-tagged
 * layout, or whose endpoint's policy changed since), and deleted endpoints' logs. Its work per run
 * is bounded (`endpointBatch` endpoints × `perEndpointLimit` rows) and does not grow with traffic.
 * Queued and in-flight deliveries are never removed (jitter-45h). The same visit deletes an
 * endpoint's rotated-out signing secrets once their grace has ended (the sender already stopped
 * signing with them), so an old secret is not kept at rest until the next rotation.
 */
export function createJanitor(deps: { store: Store; clock: { now(): number }; logger: Logger }): Janitor {
  // Where the sweep goes on from: the org it is in and the last endpoint (live, then deleted) done.
  let orgCursor: string | undefined;
  let current: { orgId: string; cursor?: string; deletedCursor?: string; liveDone: boolean } | null = null;
  return {
    async runOnce(opts = {}) {
      const endpointBatch = opts.endpointBatch ?? 100;
      const perEndpointLimit = opts.perEndpointLimit ?? 500;
      let removed = 0;
      let endpoints = 0;
      let secretsDropped = 0;
      const now = deps.clock.now();
      // At most `endpointBatch` endpoints (live or deleted) and as many org reads per run.
      for (let steps = 0; endpoints < endpointBatch && steps < endpointBatch; steps += 1) {
        if (!current) {
          const [orgId] = await deps.store.orgs.listIds({ limit: 1, cursor: orgCursor });
          orgCursor = orgId;
          if (!orgId) break;
          current = { orgId, liveDone: false };
        }
        const { orgId } = current;
        const room = endpointBatch - endpoints;
        if (!current.liveDone) {
          const ids = await deps.store.endpoints.listIds(orgId, { limit: room, cursor: current.cursor });
          current.cursor = ids[ids.length - 1] ?? current.cursor;
          if (ids.length < room) current.liveDone = true;
          endpoints += ids.length;
          for (const id of ids) {
            const endpoint = await deps.store.endpoints.get(orgId, id);
            if (!endpoint) continue;
            if (endpoint.secrets.some((s) => s.expiresAt !== null && s.expiresAt <= now)) secretsDropped += await deps.store.endpoints.dropExpiredSecrets(orgId, id, now);
            const retention = endpoint.policy.retention;
            const victims = 'days' in retention
              ? await expiredByAge(deps.store, orgId, id, now - retention.days * DAY_MS, perEndpointLimit)
              : await beyondNewest(deps.store, orgId, id, retention.lastPerEndpoint, perEndpointLimit);
            for (const deliveryId of victims) if (await deps.store.deliveries.purge(orgId, deliveryId, now)) removed += 1;
          }
          continue;
        }
        const deletedIds = await deps.store.endpoints.listDeletedIds(orgId, { limit: room, cursor: current.deletedCursor });
        current.deletedCursor = deletedIds[deletedIds.length - 1] ?? current.deletedCursor;
        if (deletedIds.length < room) current = null;
        endpoints += deletedIds.length;
        for (const id of deletedIds) {
          const victims = await expiredByAge(deps.store, orgId, id, now - DELETED_ENDPOINT_RETENTION_DAYS * DAY_MS, perEndpointLimit);
          for (const deliveryId of victims) if (await deps.store.deliveries.purge(orgId, deliveryId, now)) removed += 1;
          await deps.store.endpoints.forgetDeletedIfEmpty(orgId, id);
        }
      }
      if (removed > 0) deps.logger.info({ removed, endpoints }, 'janitor removed deliveries past retention');
      if (secretsDropped > 0) deps.logger.info({ secretsDropped }, 'janitor deleted signing secrets past their grace');
      return { endpoints, removed, secretsDropped };
    },
  };
}

/**
 * Finished deliveries that finished before `cutoffMs`, at most `limit`, oldest first. Only the
 * finished statuses' indexes are read: queued deliveries older than the cutoff, which are never
 * removed, would otherwise fill every bounded step and stall the sweep for good.
 */
async function expiredByAge(store: Store, orgId: string, endpointId: string, cutoffMs: number, limit: number): Promise<string[]> {
  const out: string[] = [];
  for (const status of ['succeeded', 'failed', 'cancelled'] as const) {
    const ids = await store.deliveries.oldestIds(orgId, endpointId, limit, status);
    const oldest = await store.deliveries.getMany(orgId, ids);
    // Those Redis expired by themselves (finished under a `{days}` policy) leave index entries behind.
    await store.deliveries.dropMissing(orgId, endpointId, ids, oldest);
    for (const d of oldest) {
      // Ids are time-ordered: past the cutoff by creation, nothing later can be older.
      if (d.createdAt >= cutoffMs) break;
      if (d.finishedAt !== null && d.finishedAt < cutoffMs) out.push(d.id);
    }
  }
  return out.sort().slice(0, limit);
}

/** The oldest finished deliveries beyond the newest `keep`, at most `limit` of them. */
async function beyondNewest(store: Store, orgId: string, endpointId: string, keep: number, limit: number): Promise<string[]> {
  const statuses = ['succeeded', 'failed', 'cancelled'] as const;
  const counts = await store.deliveries.countByStatus(orgId, endpointId, statuses);
  const excess = Math.min(limit, counts.reduce((a, b) => a + b, 0) - keep);
  if (excess <= 0) return [];
  const lists = await Promise.all(statuses.map((s) => store.deliveries.oldestIds(orgId, endpointId, excess, s)));
  return lists.flat().sort().slice(0, excess);
}

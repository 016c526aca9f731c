import { deliveryJobData, deliveryJobOptions, type DeliveryJobEntry, type DeliveryQueues, type EndpointRecord, type Store } from '@postern/store';
import type { Logger } from 'pino';

/** Most orgs one reconciler step reads (the rest of the index is swept by the next steps). */
export const RECONCILE_ORGS_PER_RUN = 1000;

/** Finds unfinished deliveries whose queue job is gone and queues them again. */
export interface Reconciler {
  /**
   * One bounded step of a sweep over every org's unfinished deliveries (at most `batchSize`
   * checked, default 500; an org's index is read from where the last step left off). Returns how many
   * were checked and how many jobs were re-created.
   */
  runOnce(batchSize?: number): Promise<{ checked: number; requeued: number }>;
}

/**
 * The safety net behind docs/architecture.md's "nothing lost": a job removed by hand, a Redis restored from
 * an older snapshot, or an ingest that died between writing a delivery and queueing it. It never
 * creates a second job for a delivery that has one (the job id is the delivery id), skips held
 * deliveries while their endpoint is paused or disabled, and leaves deliveries younger than `graceMs` alone.
 */
export function createReconciler(deps: {
  store: Store;
  queues: DeliveryQueues;
  clock: { now(): number };
  logger: Logger;
  graceMs: number;
}): Reconciler {
  // Where the sweep goes on from: the org it is in (null = start over from the first), and how
  // far into that org's unfinished deliveries. Unfinished deliveries are indexed per org (one slot
  // each on Redis Cluster), so the sweep walks the index of orgs.
  let orgCursor: string | undefined;
  let current: { orgId: string; offset: number } | null = null;
  /** The next org to sweep, or null at the end of the index (the next run starts over). */
  const nextOrg = async (): Promise<string | null> => {
    const [id] = await deps.store.orgs.listIds({ limit: 1, cursor: orgCursor });
    orgCursor = id;
    return id ?? null;
  };
  return {
    async runOnce(batchSize = 500) {
      const now = deps.clock.now();
      let checked = 0;
      let requeued = 0;
      // Bounded either way: at most `batchSize` deliveries and RECONCILE_ORGS_PER_RUN org reads.
      for (let steps = 0; checked < batchSize && steps < RECONCILE_ORGS_PER_RUN; steps += 1) {
        if (!current) {
          const orgId = await nextOrg();
          if (!orgId) break;
          current = { orgId, offset: 0 };
        }
        const { orgId, offset } = current;
        const limit = batchSize - checked;
        const ids = await deps.store.deliveries.listUnfinished(orgId, now - deps.graceMs, offset, limit);
        current = ids.length < limit ? null : { orgId, offset: offset + ids.length };
        const step = await requeueWithoutJob(deps, orgId, ids, now);
        checked += step.checked;
        requeued += step.requeued;
      }
      return { checked, requeued };
    },
  };
}

/**
 * Re-queues those of one org's unfinished deliveries `ids` whose job is gone (never a second job:
 * the job id is the delivery id), due at their `nextAttemptAt` or now; held ones wait while their
 * endpoint is inactive. The reconciler's step over an org, and what a sender does at once for a
 * parked delivery its line called whose job was lost (`DeliveryQueues.wake` names those).
 */
export async function requeueWithoutJob(
  deps: { store: Store; queues: DeliveryQueues; logger: Logger },
  orgId: string,
  ids: readonly string[],
  now: number,
  opts: { createdBeforeMs?: number; by?: string } = {},
): Promise<{ checked: number; requeued: number }> {
  if (ids.length === 0) return { checked: 0, requeued: 0 };
  // One round trip for the whole batch (one org: one partition, one slot); most deliveries have
  // their job, and only the others are read.
  const withoutJob = await deps.store.deliveries.withoutJob(orgId, ids);
  if (withoutJob.length === 0) return { checked: ids.length, requeued: 0 };
  const deliveries = await deps.store.deliveries.getMany(orgId, withoutJob);
  const unfinished = deliveries.filter((d) => d.status !== 'succeeded' && d.status !== 'failed' && d.status !== 'cancelled');
  const endpoints = new Map<string, EndpointRecord | null>();
  const jobs: DeliveryJobEntry[] = [];
  for (const d of unfinished) {
    // Ingest writes a delivery before its job: one younger than that is not missing its job yet.
    if (opts.createdBeforeMs !== undefined && d.createdAt > opts.createdBeforeMs) continue;
    let endpoint = endpoints.get(d.endpointId);
    if (endpoint === undefined) {
      endpoint = await deps.store.endpoints.get(orgId, d.endpointId);
      endpoints.set(d.endpointId, endpoint);
    }
    // Held ones wait while their endpoint is inactive. One held while a resume was re-queueing
    // (its old job not yet removed, so the new one was dropped as a duplicate) is due now; one
    // whose endpoint is gone is queued so the sender cancels it (`endpoint_deleted`).
    if (d.held && endpoint !== null && endpoint.status !== 'active') continue;
    const delayMs = d.nextAttemptAt ? Math.max(0, d.nextAttemptAt - now) : 0;
    jobs.push({ name: 'deliver', data: deliveryJobData(d), opts: deliveryJobOptions(d.id, delayMs) });
    deps.logger.warn({ deliveryId: d.id, status: d.status }, `${opts.by ?? 'reconciler'} re-queued a delivery whose job was missing`);
  }
  if (jobs.length > 0) await deps.queues.forOrg(orgId).addBulk(jobs);
  return { checked: ids.length, requeued: jobs.length };
}

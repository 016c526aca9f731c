import { deliveryJobData, deliveryJobOptions, type DeliveryJobEntry, type DeliveryQueues, type EndpointRecord, type Store, type UnfinishedIndex } from '@postern/store';
import type { Logger } from 'pino';

/**
 * Most index reads one reconciler step makes (the rest is swept by the next steps): each read of
 * the index of orgs, each read of a page of an org's endpoints (its live and its deleted ones: 2)
 * and each endpoint status index read. An org with one endpoint costs 5.
 */
export const RECONCILE_READS_PER_RUN = 5000;

/** Endpoints read per page of an org's endpoints; their status indexes are then read by one script call (2 per endpoint). */
export const RECONCILE_ENDPOINTS_PER_PAGE = 100;

/** Finds unfinished deliveries whose queue job is gone and queues them again. */
export interface Reconciler {
  /**
   * One bounded step of a sweep over every org's unfinished deliveries (at most `batchSize`
   * checked, default 500, and {@link RECONCILE_READS_PER_RUN} index reads; the next step goes on
   * from where this one stopped: org, endpoint, status and last delivery id). Returns how many
   * were checked and how many jobs were re-created.
   */
  runOnce(batchSize?: number): Promise<{ checked: number; requeued: number }>;
}

/**
 * Where a sweep is in one org: the endpoint status indexes of the page of endpoints read last that
 * are still to read (each endpoint's `pending`, then its `in_flight`), the last id read from the
 * first of them, and the last endpoint of the pages read so far.
 */
interface OrgSweep {
  orgId: string;
  indexes: UnfinishedIndex[];
  afterId: string | undefined;
  endpointCursor: string | undefined;
  /** The page read last was the org's last page of endpoints. */
  lastPage: boolean;
}

/**
 * The safety net behind docs/architecture.md's "nothing lost": a job removed by hand, a Redis restored from
 * an older snapshot, or an ingest that died between writing a delivery and queueing it. It never
 * creates a second job for a delivery that has one (the job id is the delivery id), skips held
 * deliveries while their endpoint is paused or disabled, and leaves deliveries younger than `graceMs` alone.
 *
 * It walks the index of orgs, and in each org its endpoints (deleted ones too, whose queued
 * deliveries the sender then cancels) and their `pending` and `in_flight` indexes, where every
 * unfinished delivery is (store.unfinished). Those are ordered by id, so creation time: an index is
 * read up to the deliveries younger than the grace. A delivery that changes status while the sweep
 * is in its endpoint may be seen twice or not at all in that sweep; the next one finds it.
 */
export function createReconciler(deps: {
  store: Store;
  queues: DeliveryQueues;
  clock: { now(): number };
  logger: Logger;
  graceMs: number;
}): Reconciler {
  // Where the sweep goes on from: the org it is in (none = start over from the first org) and
  // where in that org (see OrgSweep). Every index of an org is in its one slot on Redis Cluster.
  let orgCursor: string | undefined;
  let current: OrgSweep | null = null;
  /** The next org to sweep, or null at the end of the index (the next run starts over). */
  const nextOrg = async (): Promise<string | null> => {
    const [id] = await deps.store.orgs.listIds({ limit: 1, cursor: orgCursor });
    orgCursor = id;
    return id ?? null;
  };
  return {
    async runOnce(batchSize = 500) {
      const now = deps.clock.now();
      const createdUpToMs = now - deps.graceMs;
      let checked = 0;
      let requeued = 0;
      // Bounded either way: at most `batchSize` deliveries and RECONCILE_READS_PER_RUN index reads.
      for (let reads = 0; checked < batchSize && reads < RECONCILE_READS_PER_RUN; ) {
        if (!current) {
          const orgId = await nextOrg();
          reads += 1;
          if (!orgId) break;
          current = { orgId, indexes: [], afterId: undefined, endpointCursor: undefined, lastPage: false };
        }
        const sweep = current;
        if (sweep.indexes.length === 0) {
          if (sweep.lastPage) {
            current = null;
            continue;
          }
          const firstPage = sweep.endpointCursor === undefined;
          // Data written before this release also has the org's own index of unfinished
          // deliveries: nothing reads it, so it goes as the sweep enters the org (sent with the read).
          const [endpointIds] = await Promise.all([
            deps.store.unfinished.listEndpoints(sweep.orgId, { limit: RECONCILE_ENDPOINTS_PER_PAGE, cursor: sweep.endpointCursor }),
            firstPage ? deps.store.unfinished.dropLegacyIndex(sweep.orgId) : undefined,
          ]);
          reads += 2;
          sweep.lastPage = endpointIds.length < RECONCILE_ENDPOINTS_PER_PAGE;
          sweep.endpointCursor = endpointIds[endpointIds.length - 1] ?? sweep.endpointCursor;
          sweep.indexes = endpointIds.flatMap((endpointId): UnfinishedIndex[] => [
            { endpointId, status: 'pending' },
            { endpointId, status: 'in_flight' },
          ]);
          continue;
        }
        const indexes = sweep.indexes.slice(0, RECONCILE_READS_PER_RUN - reads);
        const { ids, indexesDone } = await deps.store.unfinished.list(sweep.orgId, indexes, { afterId: sweep.afterId, createdUpToMs, limit: batchSize - checked });
        // Fewer done than given: the limit was reached in the next one, which goes on after its last id.
        reads += Math.min(indexes.length, indexesDone + 1);
        sweep.indexes.splice(0, indexesDone);
        sweep.afterId = indexesDone < indexes.length ? ids[ids.length - 1] : undefined;
        const step = await requeueWithoutJob(deps, sweep.orgId, ids, now, { createdBeforeMs: createdUpToMs });
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

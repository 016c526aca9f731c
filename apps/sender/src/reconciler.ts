import { deliveryJobData, deliveryJobOptions, type DeliveryJobData, type EndpointRecord, type Store } from '@postern/store';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';

/** Finds unfinished deliveries whose queue job is gone and queues them again. */
export interface Reconciler {
  /**
   * One bounded step of a sweep over unfinished deliveries (at most `batchSize`). Returns how many
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
  queue: Queue<DeliveryJobData>;
  clock: { now(): number };
  logger: Logger;
  graceMs: number;
}): Reconciler {
  // Where the sweep goes on from: each run checks the next batch, then starts over from the oldest.
  let offset = 0;
  return {
    async runOnce(batchSize = 500) {
      const now = deps.clock.now();
      const ids = await deps.store.deliveries.listUnfinished(now - deps.graceMs, offset, batchSize);
      offset = ids.length < batchSize ? 0 : offset + ids.length;
      const deliveries = await deps.store.deliveries.getMany(ids);
      const unfinished = deliveries.filter((d) => d.status !== 'succeeded' && d.status !== 'failed' && d.status !== 'cancelled');
      // One round trip for the whole batch; most deliveries have their job.
      const withoutJob = new Set(await deps.store.deliveries.withoutJob(unfinished.map((d) => d.id)));
      const endpoints = new Map<string, EndpointRecord | null>();
      const jobs: Parameters<Queue<DeliveryJobData>['addBulk']>[0] = [];
      for (const d of unfinished) {
        if (!withoutJob.has(d.id)) continue;
        let endpoint = endpoints.get(d.endpointId);
        if (endpoint === undefined) {
          endpoint = await deps.store.endpoints.get(d.endpointId);
          endpoints.set(d.endpointId, endpoint);
        }
        // Held ones wait while their endpoint is inactive. One held while a resume was re-queueing
        // (its old job not yet removed, so the new one was dropped as a duplicate) is due now; one
        // whose endpoint is gone is queued so the sender cancels it (`endpoint_deleted`).
        if (d.held && endpoint !== null && endpoint.status !== 'active') continue;
        const delayMs = d.nextAttemptAt ? Math.max(0, d.nextAttemptAt - now) : 0;
        jobs.push({ name: 'deliver', data: deliveryJobData(d), opts: deliveryJobOptions(d.id, delayMs) });
        deps.logger.warn({ deliveryId: d.id, status: d.status }, 'reconciler re-queued a delivery whose job was missing');
      }
      if (jobs.length > 0) await deps.queue.addBulk(jobs);
      return { checked: deliveries.length, requeued: jobs.length };
    },
  };
}

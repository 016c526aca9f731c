import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import { z } from 'zod';

/** Name of the BullMQ queue that carries deliveries; its keys live under the instance's queue prefix. */
export const DELIVERY_QUEUE_NAME = 'deliveries';

/**
 * Payload of a delivery job: ids and a version only; the delivery itself is read from the store,
 * so a job never carries a stale copy of the payload.
 */
export const deliveryJobDataSchema = z.object({ v: z.literal(1), deliveryId: z.string().startsWith('dlv_') });
/** Parsed delivery job payload, `{v: 1, deliveryId}`. */
export type DeliveryJobData = z.infer<typeof deliveryJobDataSchema>;

/**
 * BullMQ job options for one delivery. The job id is the delivery id, so adding the same delivery
 * twice is a no-op while its job exists. Retries are decided by the sender (which throws
 * `UnrecoverableError` on the last one), so `attempts` is only a generous ceiling for Postern's
 * own faults; the wait before each retry comes from the worker's custom backoff strategy.
 * Finished jobs are removed at once: the delivery log, not the queue, is the history.
 */
export function deliveryJobOptions(deliveryId: string, maxAttempts: number, delayMs = 0): JobsOptions {
  return {
    jobId: deliveryId,
    attempts: maxAttempts * 2 + 10,
    backoff: { type: 'custom' },
    delay: delayMs > 0 ? delayMs : undefined,
    removeOnComplete: true,
    removeOnFail: true,
  };
}

/**
 * Entries kept in BullMQ's event stream of the queue (`<queuePrefix>:deliveries:events`). Postern
 * reads no queue events (the delivery log is the history), so the stream is kept short instead of
 * BullMQ's default 10 000 entries, which would grow Redis memory by about 1 MB under steady traffic
 * after retention has trimmed the log. Trimming is approximate (whole stream nodes).
 */
export const QUEUE_EVENTS_MAX_LEN = 100;

/** Creates the deliveries queue for a producer (ingest). `prefix` is the key schema's `queuePrefix`. */
export function createDeliveryQueue(connection: ConnectionOptions, prefix: string): Queue<DeliveryJobData> {
  return new Queue<DeliveryJobData>(DELIVERY_QUEUE_NAME, { connection, prefix, streams: { events: { maxLen: QUEUE_EVENTS_MAX_LEN } } });
}

/**
 * `addBulk` entries for new deliveries, one job each. `maxAttemptsOf` gives the policy's
 * `maxAttempts` of a delivery's endpoint (the job's attempts ceiling).
 */
export function deliveryJobs(
  deliveries: readonly { id: string; endpointId: string }[],
  maxAttemptsOf: (endpointId: string) => number,
): { name: string; data: DeliveryJobData; opts: JobsOptions }[] {
  return deliveries.map((d) => ({ name: 'deliver', data: { v: 1 as const, deliveryId: d.id }, opts: deliveryJobOptions(d.id, maxAttemptsOf(d.endpointId)) }));
}

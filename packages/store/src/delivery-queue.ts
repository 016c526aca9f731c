import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import { z } from 'zod';

/** Name of the BullMQ queue that carries deliveries; its keys live under the instance's queue prefix. */
export const DELIVERY_QUEUE_NAME = 'deliveries';

/**
 * Payload of a delivery job: ids and a version only; the delivery itself is read from the store,
 * so a job never carries a stale copy of the payload. Version 2 carries every id the attempt's
 * keys are built from, so the sender's claim is one script call; a version 1 job (`{v: 1,
 * deliveryId}`, queued by an older Postern) still runs, its ids read from the delivery first.
 */
export const deliveryJobDataSchema = z.union([
  z.object({
    v: z.literal(2),
    deliveryId: z.string().startsWith('dlv_'),
    endpointId: z.string().startsWith('ep_'),
    eventId: z.string().startsWith('evt_'),
    orgId: z.string().startsWith('org_'),
    /** W3C `traceparent` of the span that accepted the event, when tracing is on: the attempt's span continues its trace. */
    traceparent: z.string().max(55).optional(),
  }),
  z.object({ v: z.literal(1), deliveryId: z.string().startsWith('dlv_') }),
]);
/** Parsed delivery job payload, `{v: 2, deliveryId, endpointId, eventId, orgId}` (or a legacy `{v: 1, deliveryId}`). */
export type DeliveryJobData = z.infer<typeof deliveryJobDataSchema>;

/** The ids of one delivery that its job carries. */
export interface DeliveryJobIds {
  id: string;
  endpointId: string;
  eventId: string;
  orgId: string;
}

/**
 * BullMQ job options for one delivery. The job id is the delivery id, so adding the same delivery
 * twice is a no-op while its job exists. The delivery's attempts are counted in the delivery
 * record only: the sender moves the job to `delayed` at each planned next attempt itself, so the
 * job has no attempt ceiling or backoff of its own. Finished jobs are removed at once: the
 * delivery log, not the queue, is the history.
 *
 * @param delayMs - run no sooner than this many ms from now (0 = now)
 */
export function deliveryJobOptions(deliveryId: string, delayMs = 0): JobsOptions {
  return {
    jobId: deliveryId,
    delay: delayMs > 0 ? delayMs : undefined,
    removeOnComplete: true,
    removeOnFail: true,
  };
}

/** The job payload of a delivery; `traceparent` (tracing on) links its attempts to the trace that accepted the event. */
export function deliveryJobData(d: DeliveryJobIds, traceparent?: string): DeliveryJobData {
  const data: DeliveryJobData = { v: 2, deliveryId: d.id, endpointId: d.endpointId, eventId: d.eventId, orgId: d.orgId };
  if (traceparent) data.traceparent = traceparent;
  return data;
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

/** `addBulk` entries for new deliveries, one job each, due now (or after `delayMs`), with the accepting span's `traceparent` when tracing is on. */
export function deliveryJobs(deliveries: readonly DeliveryJobIds[], delayMs = 0, traceparent?: string): { name: string; data: DeliveryJobData; opts: JobsOptions }[] {
  return deliveries.map((d) => ({ name: 'deliver', data: deliveryJobData(d, traceparent), opts: deliveryJobOptions(d.id, delayMs) }));
}

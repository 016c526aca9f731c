import type { ConnectionOptions, JobsOptions, Queue } from 'bullmq';
import { Queue as QueueClass } from './bullmq-classes.js';
import { z } from 'zod';
import { COMPACT_ID_CHARS, compactId, expandId } from './compact-ids.js';

/** Name of the BullMQ queue that carries deliveries; its keys live under the instance's queue prefix. */
export const DELIVERY_QUEUE_NAME = 'deliveries';

/**
 * Payload of a delivery job as read back (parsed): ids and a version only; the delivery itself is
 * read from the store, so a job never carries a stale copy of the payload. Version 2 carries every
 * id the attempt's keys are built from, so the sender's claim is one script call; a version 1 job
 * (`{v: 1, deliveryId}`, queued by an older Postern) still parses, and is dropped by the sender.
 * New jobs are queued as version 3, the compact string of {@link deliveryJobData}: use
 * {@link parseDeliveryJob}, which reads all three.
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
export type ParsedDeliveryJob = z.infer<typeof deliveryJobDataSchema>;
/**
 * A delivery job's data as queued: version 3, `"3<org><endpoint><event>"` (each id in its
 * 20-character {@link compactId} form, the delivery id being the job id), or an object of
 * version 2 (ids that are not ULID-shaped) or 1 (queued by an older Postern).
 */
export type DeliveryJobData = string | ParsedDeliveryJob;

/**
 * Reads a delivery job's data (any version) with its job id; null when malformed. Version 3 is
 * a string, 61 characters, so the job's `data` stays within Redis' 64-byte listpack value and its
 * whole hash stays listpack-encoded (about 500 B less per pending delivery than version 2).
 */
export function parseDeliveryJob(jobId: string | undefined, data: unknown): ParsedDeliveryJob | null {
  if (typeof data === 'string') {
    if (data.length !== 1 + 3 * COMPACT_ID_CHARS || data[0] !== '3' || !jobId?.startsWith('dlv_')) return null;
    const at = (i: number) => data.slice(1 + i * COMPACT_ID_CHARS, 1 + (i + 1) * COMPACT_ID_CHARS);
    const orgId = expandId(at(0), 'org');
    const endpointId = expandId(at(1), 'ep');
    const eventId = expandId(at(2), 'evt');
    if (!orgId || !endpointId || !eventId) return null;
    return { v: 2, deliveryId: jobId, endpointId, eventId, orgId };
  }
  const parsed = deliveryJobDataSchema.safeParse(data);
  return parsed.success ? parsed.data : null;
}

/** The org a queued job's data names, or null (a version 1 job). */
export function deliveryJobOrgId(data: DeliveryJobData): string | null {
  if (typeof data === 'string') return expandId(data.slice(1, 1 + COMPACT_ID_CHARS), 'org');
  return data.v === 2 ? data.orgId : null;
}

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
 * job has no attempt ceiling or backoff of its own. Finished jobs are removed at once (the
 * delivery log, not the queue, is the history) by the sender's worker options
 * ({@link DELIVERY_WORKER_REMOVE}), not per job: every option given here is stored in the job's
 * hash, and the shorter its `opts` the more likely the hash stays listpack-encoded.
 *
 * @param delayMs - run no sooner than this many ms from now (0 = now)
 */
export function deliveryJobOptions(deliveryId: string, delayMs = 0): JobsOptions {
  return delayMs > 0 ? { jobId: deliveryId, delay: delayMs } : { jobId: deliveryId };
}

/** The sender's worker options that remove a job once it completes or fails for good: at once. */
export const DELIVERY_WORKER_REMOVE = { removeOnComplete: { count: 0 }, removeOnFail: { count: 0 } } as const;

/**
 * The job payload of a delivery: the compact version 3 string, or, with a `traceparent` (tracing on:
 * it links the attempts to the trace that accepted the event) or ids that are not ULID-shaped, a
 * version 2 object.
 */
export function deliveryJobData(d: DeliveryJobIds, traceparent?: string): DeliveryJobData {
  const org = compactId(d.orgId, 'org');
  const endpoint = compactId(d.endpointId, 'ep');
  const event = compactId(d.eventId, 'evt');
  if (org && endpoint && event && !traceparent) return `3${org}${endpoint}${event}`;
  const data: ParsedDeliveryJob = { v: 2, deliveryId: d.id, endpointId: d.endpointId, eventId: d.eventId, orgId: d.orgId };
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
  return new QueueClass<DeliveryJobData>(DELIVERY_QUEUE_NAME, { connection, prefix, streams: { events: { maxLen: QUEUE_EVENTS_MAX_LEN } } });
}

/** `addBulk` entries for new deliveries, one job each, due now (or after `delayMs`), with the accepting span's `traceparent` when tracing is on. */
export function deliveryJobs(deliveries: readonly DeliveryJobIds[], delayMs = 0, traceparent?: string): { name: string; data: DeliveryJobData; opts: JobsOptions }[] {
  return deliveries.map((d) => ({ name: 'deliver', data: deliveryJobData(d, traceparent), opts: deliveryJobOptions(d.id, delayMs) }));
}

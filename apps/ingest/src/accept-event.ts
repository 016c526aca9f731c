import { createHash } from 'node:crypto';
import { buildEnvelope, durabilityVerdict, isEventTypeDisabled, matchesEventTypes } from '@postern/shared';
import { confirmWrites, deliveryJobs, markWrites, newPendingDelivery, touchForConfirmation, type DeliveryRecord, type EndpointRecord, type EventRecord, type RedisClient, type WriteMark } from '@postern/store';
import { SpanKind, SpanStatusCode, contextFromTraceparent, traceparentOf } from '@postern/telemetry';
import { ApiError } from './api-error.js';
import type { AppDeps } from './app-deps.js';

/** The 202 answer to an accepted event; the same answer is replayed for its idempotency key. */
export interface AcceptedEvent {
  id: string;
  deliveries: { id: string; endpointId: string }[];
  /** The catalog's warnings (`eventValidation: "warn"`); absent when none. */
  warnings?: { path: string; message: string }[];
}

interface StoredAnswer {
  fingerprint: string;
  body: AcceptedEvent;
}

/**
 * Adds the jobs of new deliveries. One job goes in with `add`: `addBulk` builds an ioredis pipeline,
 * and every pipeline copies each of the dozens of scripts BullMQ defines on its connection, which
 * costs more than the one command it would carry.
 */
async function queueJobs(queues: AppDeps['queues'], orgId: string, jobs: ReturnType<typeof deliveryJobs>): Promise<void> {
  if (jobs.length === 0) return;
  const [only] = jobs;
  const queue = queues.forOrg(orgId);
  if (jobs.length === 1 && only) await queue.add(only.name, only.data, only.opts);
  else await queue.addBulk(jobs);
}

/**
 * Whether an endpoint gets a delivery of a new event: active ones do; a paused or disabled one
 * does only when its policy holds deliveries while inactive (standard, tourical and kestrel: they are
 * replayed on resume). Its job then finds the endpoint inactive and holds the delivery without
 * sending anything, so no attempt reaches an inactive endpoint.
 */
function receivesWhileInactive(endpoint: EndpointRecord): boolean {
  return endpoint.status === 'active' || endpoint.policy.onEndpointInactive === 'hold';
}

/**
 * Accepts one event: builds its envelope once (the producer's `data` text byte for byte), fans it
 * out to every endpoint of the org whose filter matches and that is active (or holds while inactive) (or to `onlyEndpoint`, for a test
 * event), writes event + deliveries atomically, then queues one job per delivery. Resolves only
 * once all of it is in Redis. If queueing fails, what was written is removed again and the error
 * propagates (503), so a producer never sees 202 for an event that will not be delivered.
 *
 * With an idempotency key, a repeat within 24 h returns the first answer; a repeat with a
 * different type or data is refused with 409 `idempotency_key_reused`.
 *
 * `endpoints` is every endpoint of the org as the request's lookup found it (see `LookupCache`);
 * when absent they are read from the store. An event whose type the org switched off
 * (`disabledEventTypes`, issue 16) is stored but fans out to no endpoint. With `deps.tracer` (tracing on), the acceptance is a
 * span whose `traceparent` is stored with each delivery's job.
 */
export async function acceptEvent(deps: AppDeps, input: AcceptInput): Promise<{ replayed: boolean; answer: AcceptedEvent }> {
  if (!deps.tracer) return accept(deps, input, undefined);
  // Tracing on: one span for the accepted event, continuing the producer's trace when its request
  // carried a `traceparent`; its own traceparent goes with each job, so the attempts join it.
  const span = deps.tracer.startSpan(
    'postern event accepted',
    { kind: SpanKind.SERVER, attributes: { 'postern.org.id': input.orgId, 'postern.event.type': input.type, 'postern.event.test': input.onlyEndpoint !== undefined } },
    contextFromTraceparent(input.traceparent),
  );
  try {
    const result = await accept(deps, input, traceparentOf(span));
    span.setAttributes({ 'postern.event.id': result.answer.id, 'postern.deliveries': result.answer.deliveries.length, 'postern.idempotent_replay': result.replayed });
    return result;
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof ApiError ? err.code : 'internal_error' });
    throw err;
  } finally {
    span.end();
  }
}

/** What {@link acceptEvent} takes: the event, and the producer's `traceparent` header when it sent one. */
export interface AcceptInput {
  orgId: string;
  type: string;
  dataJson: string;
  idempotencyKey: string | null;
  /** The producer's ordering key (1..256 characters), or null/absent. */
  orderingKey?: string | null;
  onlyEndpoint?: EndpointRecord;
  endpoints?: readonly EndpointRecord[];
  /** The org's `disabledEventTypes` (issue 16): a matching event fans out to no endpoint. */
  disabledEventTypes?: readonly string[];
  traceparent?: string;
  /** The catalog's warnings about the event's data, answered (and stored with the answer for replays); none = left out. */
  warnings?: readonly { path: string; message: string }[];
}

async function accept(deps: AppDeps, input: AcceptInput, traceparent: string | undefined): Promise<{ replayed: boolean; answer: AcceptedEvent }> {
  const now = deps.clock.now();
  const eventId = deps.ids('evt', now);
  const envelope = buildEnvelope({ id: eventId, type: input.type, timestampMs: now, dataJson: input.dataJson });
  const targets = input.onlyEndpoint
    ? [input.onlyEndpoint]
    : isEventTypeDisabled(input.disabledEventTypes, input.type)
      ? []
      : (input.endpoints ?? (await deps.store.endpoints.listAll(input.orgId))).filter((e) => receivesWhileInactive(e) && matchesEventTypes(e.eventTypes, input.type));

  const deliveries: DeliveryRecord[] = targets.map((endpoint) =>
    newPendingDelivery({
      id: deps.ids('dlv', now),
      orgId: input.orgId,
      eventId,
      eventType: input.type,
      endpointId: endpoint.id,
      nowMs: now,
      isTest: input.onlyEndpoint !== undefined,
      orderingKey: input.orderingKey ?? null,
    }),
  );
  // Under a `per-key` policy, a delivery with a key joins its key's line and gets a sequence number.
  const perKey = new Set(targets.filter((e) => e.policy.ordering === 'per-key').map((e) => e.id));
  const keyLineDeliveryIds = new Set(input.orderingKey ? deliveries.filter((d) => perKey.has(d.endpointId)).map((d) => d.id) : []);
  const event: EventRecord = {
    id: eventId,
    orgId: input.orgId,
    type: input.type,
    envelope,
    createdAt: now,
    idempotencyKey: input.idempotencyKey,
    deliveryIds: deliveries.map((d) => d.id),
  };
  const answer: AcceptedEvent = { id: eventId, deliveries: deliveries.map((d) => ({ id: d.id, endpointId: d.endpointId })), ...(input.warnings && input.warnings.length > 0 ? { warnings: [...input.warnings] } : {}) };
  // Hashed and stored only for a request that can be repeated: one with an idempotency key.
  const keyHash = input.idempotencyKey ? createHash('sha256').update(input.idempotencyKey).digest('hex') : null;
  // The ordering key counts only when given, so answers stored before it existed still match.
  const fingerprint = keyHash
    ? createHash('sha256').update(input.type).update('\0').update(input.dataJson).update(input.orderingKey ? `\0${input.orderingKey}` : '').digest('hex')
    : '';

  // Which connections the writes go on, before they go (ACCEPT_DURABILITY: a WAIT after a reconnect confirms nothing).
  const marks = writeMarks(deps, input.orgId);
  const written = await deps.store.events.createWithDeliveries({
    event,
    deliveries,
    idempotencyKeyHash: keyHash,
    keyLineDeliveryIds,
    answer: keyHash ? JSON.stringify({ fingerprint, body: answer } satisfies StoredAnswer) : '',
  });
  if (!written.created) {
    const stored = JSON.parse(written.answer) as StoredAnswer;
    if (stored.fingerprint !== fingerprint) {
      throw new ApiError(409, 'idempotency_key_reused', 'this idempotencyKey was used in the last 24 h for a different event');
    }
    // The first request may have died between writing and queueing. Re-adding is safe: a job id
    // that exists is ignored, and a job for a finished delivery ends without sending anything.
    await queueJobs(deps.queues, input.orgId, deliveryJobs(stored.body.deliveries.map((d) => ({ ...d, eventId: stored.body.id, orgId: input.orgId })), 0, traceparent));
    // The first answer may have been a 503 not_durable: this one promises the same as a first 202.
    await confirmDurable(deps, input.orgId, stored.body.id, stored.body.deliveries[0]?.id ?? null, true, marks);
    return { replayed: true, answer: stored.body };
  }

  try {
    await queueJobs(deps.queues, input.orgId, deliveryJobs(deliveries, 0, traceparent));
  } catch (err) {
    // Best effort: if Redis is gone this fails too, and the reconciler queues the deliveries later.
    await deps.store.events.removeUnqueued(event, deliveries, keyHash).catch(() => undefined);
    throw err;
  }
  await confirmDurable(deps, input.orgId, eventId, deliveries[0]?.id ?? null, false, marks);
  return { replayed: false, answer };
}

/**
 * Under `ACCEPT_DURABILITY=replica` or `local-fsync`, waits until Redis confirms the event's writes
 * (the event's on the store's connection, its jobs' on the queue's: two primaries on a cluster)
 * as durable as promised; else throws 503 `not_durable` with `Retry-After`. The event stays
 * written (and, with an idempotency key, its answer stored), so a retry with the same key answers
 * the same event, confirmed again. A replay first writes a probe on each connection, since `WAIT`
 * counts only a connection's own writes.
 */
function durabilityWrites(deps: AppDeps, orgId: string, withJobs: boolean): { redis: RedisClient; key: string }[] {
  const writes: { redis: RedisClient; key: string }[] = [{ redis: deps.redis, key: deps.store.keys.durabilityProbe(orgId) }];
  if (withJobs && deps.queues.connection) writes.push({ redis: deps.queues.connection, key: deps.store.keys.queueDurabilityProbe(orgId) });
  return writes;
}

/** The {@link WriteMark}s of the connections an accept writes on (none under `local`, or when Redis is unreachable: the write then fails anyway). */
function writeMarks(deps: AppDeps, orgId: string): (WriteMark | undefined)[] {
  if (!deps.config.durability || deps.config.durability.mode === 'local') return [];
  return durabilityWrites(deps, orgId, true).map(({ redis, key }) => {
    try {
      return markWrites(redis, key);
    } catch {
      return undefined;
    }
  });
}

async function confirmDurable(deps: AppDeps, orgId: string, eventId: string, firstDeliveryId: string | null, replay: boolean, marks: readonly (WriteMark | undefined)[]): Promise<void> {
  const durability = deps.config.durability;
  if (!durability || durability.mode === 'local') return;
  const fsync = durability.mode === 'local-fsync';
  const opts = { replicas: durability.replicas, timeoutMs: durability.waitMs, fsync };
  const writes = durabilityWrites(deps, orgId, firstDeliveryId !== null);
  const now = deps.clock.now();
  const confirmations = await Promise.all(
    writes.map(async ({ redis, key }, i) => {
      if (replay) await touchForConfirmation(redis, key, now);
      // A write whose connection was not known before it went (a cluster still learning its slots) confirms nothing.
      const mark = marks[i];
      if (!mark) return { replicas: 0, localFsynced: false };
      return confirmWrites(redis, key, opts, mark);
    }),
  );
  const verdict = durabilityVerdict(durability.mode, durability.replicas, confirmations);
  if (verdict.durable) return;
  deps.logger.warn({ orgId, eventId, reason: verdict.reason }, 'event written but not confirmed durable: answered 503');
  throw new ApiError(503, 'not_durable', `the event was written but ${verdict.reason}; retry with the same idempotencyKey to get the same event`, undefined, verdict.retryAfterS);
}

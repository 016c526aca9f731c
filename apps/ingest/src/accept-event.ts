import { createHash } from 'node:crypto';
import { buildEnvelope, durabilityVerdict, isEventTypeDisabled, matchesEventTypes } from '@postern/shared';
import { confirmWrites, deliveryJobs, markWrites, newPendingDelivery, touchForConfirmation, type CreateEventResult, type DeliveryJobEntry, type DeliveryRecord, type EndpointRecord, type EventRecord, type NewEvent, type RedisClient, type WriteMark } from '@postern/store';
import { SpanKind, SpanStatusCode, contextFromTraceparent, traceparentOf } from '@postern/telemetry';
import { ApiError } from './api-error.js';
import { DEFAULT_MAX_DELIVERIES_PER_REQUEST, type AppDeps } from './app-deps.js';

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
async function queueJobs(queues: AppDeps['queues'], orgId: string, jobs: readonly DeliveryJobEntry[]): Promise<void> {
  if (jobs.length === 0) return;
  const [only] = jobs;
  const queue = queues.forOrg(orgId);
  if (jobs.length === 1 && only) await queue.add(only.name, only.data, only.opts);
  else await queue.addBulk(jobs as DeliveryJobEntry[]);
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

/** What {@link acceptEvent} resolves with: the answer, and whether it is a replay of an earlier one under the same idempotency key. */
export interface AcceptResult {
  replayed: boolean;
  answer: AcceptedEvent;
}

/** One event's outcome in {@link acceptEvents}: accepted (or replayed), or the error that refused it (an `ApiError`, or Redis's). */
export type AcceptOutcome = ({ ok: true } & AcceptResult) | { ok: false; error: unknown };

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
export async function acceptEvent(deps: AppDeps, input: AcceptInput): Promise<AcceptResult> {
  const span = startAcceptSpan(deps, input);
  try {
    const result = await accept(deps, input, span?.traceparent);
    span?.end({ ok: true, ...result });
    return result;
  } catch (err) {
    span?.end({ ok: false, error: err });
    throw err;
  }
}

/**
 * Accepts several events of one org, each exactly as {@link acceptEvent} would (same fan-out,
 * idempotency, ordering keys, durability, tracing span), in a constant number of round trips
 * whatever their number: one for every event with its deliveries (create-event.lua once per
 * event, in order, in one pipeline), one for every job (one `addBulk` on the org's queue
 * partition), and under `ACCEPT_DURABILITY` one `WAIT` per connection. An event whose idempotency
 * key an earlier event of the same call used replays that one's answer (or is 409 when it differs).
 *
 * Events are independent: each outcome is the answer or the error `acceptEvent` would have
 * given it. When a round trip shared by several fails (Redis unreachable, queueing refused, a
 * `WAIT` short), every event it concerned fails with that error and the events this call wrote are
 * removed again, as `acceptEvent` does for one; a retry with the same idempotency keys is safe.
 * Never rejects: outcomes in the order of `inputs`.
 *
 * @throws Error when `inputs` are not all of one org.
 */
export async function acceptEvents(deps: AppDeps, inputs: readonly AcceptInput[]): Promise<AcceptOutcome[]> {
  const orgId = inputs[0]?.orgId;
  if (orgId === undefined) return [];
  if (inputs.some((i) => i.orgId !== orgId)) throw new Error('acceptEvents: every event must be of one org');
  const spans = inputs.map((input) => startAcceptSpan(deps, input));
  let outcomes: AcceptOutcome[];
  try {
    outcomes = await acceptMany(deps, orgId, inputs, spans);
  } catch (err) {
    outcomes = inputs.map(() => ({ ok: false, error: err }));
  }
  outcomes.forEach((outcome, i) => spans[i]?.end(outcome));
  return outcomes;
}

/** The tracing span of one event's acceptance, when tracing is on. */
interface AcceptSpan {
  /** Its W3C `traceparent`, stored with each delivery's job so the attempts join the trace. */
  traceparent: string;
  end(outcome: AcceptOutcome): void;
}

/**
 * One span for the accepted event, continuing the producer's trace when its request carried a
 * `traceparent`; undefined when tracing is off.
 */
function startAcceptSpan(deps: AppDeps, input: AcceptInput): AcceptSpan | undefined {
  if (!deps.tracer) return undefined;
  const span = deps.tracer.startSpan(
    'postern event accepted',
    { kind: SpanKind.SERVER, attributes: { 'postern.org.id': input.orgId, 'postern.event.type': input.type, 'postern.event.test': input.onlyEndpoint !== undefined } },
    contextFromTraceparent(input.traceparent),
  );
  return {
    traceparent: traceparentOf(span),
    end(outcome) {
      if (outcome.ok) span.setAttributes({ 'postern.event.id': outcome.answer.id, 'postern.deliveries': outcome.answer.deliveries.length, 'postern.idempotent_replay': outcome.replayed });
      else span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error instanceof ApiError ? outcome.error.code : 'internal_error' });
      span.end();
    },
  };
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

/** An event ready to write: its records, its answer, and what tells a replay of it from a reuse of its key. */
interface PreparedEvent {
  event: EventRecord;
  deliveries: DeliveryRecord[];
  answer: AcceptedEvent;
  /** SHA-256 (hex) of the idempotency key; null without one. */
  keyHash: string | null;
  fingerprint: string;
  /** What the store writes. */
  write: NewEvent;
  /** The accepting span's, when tracing is on. */
  traceparent: string | undefined;
}

/**
 * 422 `too_many_deliveries`: the event would take a request past `MAX_DELIVERIES_PER_REQUEST`
 * deliveries (`before` made by the batch's earlier events, 0 alone). Nothing of it is written.
 */
function tooManyDeliveries(max: number, deliveries: number, before: number): ApiError {
  const already = before > 0 ? ` on top of the ${before} of this batch's earlier events` : '';
  return new ApiError(422, 'too_many_deliveries', `the event would create ${deliveries} deliveries${already}; one request creates at most ${max} (MAX_DELIVERIES_PER_REQUEST): send it${before > 0 ? ' in another request' : ' to fewer endpoints (narrow their eventTypes)'}`);
}

/** Whether the event fans out to the org's endpoint list (rather than to none, or to a test's one endpoint). */
function fansOut(input: AcceptInput): boolean {
  return !input.onlyEndpoint && !isEventTypeDisabled(input.disabledEventTypes, input.type);
}

/**
 * Builds one event's records: its id and envelope, one pending delivery per target, the answer
 * and, with an idempotency key, its fingerprint. `orgEndpoints` is the org's endpoint list when
 * `input.endpoints` is absent.
 */
function prepare(deps: AppDeps, input: AcceptInput, orgEndpoints: readonly EndpointRecord[], traceparent: string | undefined): PreparedEvent {
  const now = deps.clock.now();
  const eventId = deps.ids('evt', now);
  const envelope = buildEnvelope({ id: eventId, type: input.type, timestampMs: now, dataJson: input.dataJson });
  const targets = input.onlyEndpoint
    ? [input.onlyEndpoint]
    : fansOut(input)
      ? (input.endpoints ?? orgEndpoints).filter((e) => receivesWhileInactive(e) && matchesEventTypes(e.eventTypes, input.type))
      : [];

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
  const write: NewEvent = {
    event,
    deliveries,
    idempotencyKeyHash: keyHash,
    keyLineDeliveryIds,
    answer: keyHash ? JSON.stringify({ fingerprint, body: answer } satisfies StoredAnswer) : '',
  };
  return { event, deliveries, answer, keyHash, fingerprint, write, traceparent };
}

/**
 * The first answer stored under the event's idempotency key when the write found one (null when
 * the event was written); 409 `idempotency_key_reused` when that answer was for a different event.
 */
function replayOf(prepared: PreparedEvent, written: CreateEventResult): AcceptedEvent | null {
  if (written.created) return null;
  const stored = JSON.parse(written.answer) as StoredAnswer;
  if (stored.fingerprint !== prepared.fingerprint) {
    throw new ApiError(409, 'idempotency_key_reused', 'this idempotencyKey was used in the last 24 h for a different event');
  }
  return stored.body;
}

/**
 * The jobs of a replayed answer's deliveries. The first request may have died between writing and
 * queueing: re-adding is safe, since a job id that exists is ignored, and a job for a finished
 * delivery ends without sending anything.
 */
function replayJobs(orgId: string, stored: AcceptedEvent, traceparent: string | undefined): DeliveryJobEntry[] {
  return deliveryJobs(stored.deliveries.map((d) => ({ ...d, eventId: stored.id, orgId })), 0, traceparent);
}

async function accept(deps: AppDeps, input: AcceptInput, traceparent: string | undefined): Promise<AcceptResult> {
  const orgEndpoints = fansOut(input) && !input.endpoints ? await deps.store.endpoints.listAll(input.orgId) : [];
  const prepared = prepare(deps, input, orgEndpoints, traceparent);
  const maxDeliveries = deps.config.maxDeliveriesPerRequest ?? DEFAULT_MAX_DELIVERIES_PER_REQUEST;
  if (prepared.deliveries.length > maxDeliveries) throw tooManyDeliveries(maxDeliveries, prepared.deliveries.length, 0);
  // Which connections the writes go on, before they go (ACCEPT_DURABILITY: a WAIT after a reconnect confirms nothing).
  const marks = writeMarks(deps, input.orgId);
  const stored = replayOf(prepared, await deps.store.events.createWithDeliveries(prepared.write));
  if (stored) {
    await queueJobs(deps.queues, input.orgId, replayJobs(input.orgId, stored, traceparent));
    // The first answer may have been a 503 not_durable: this one promises the same as a first 202.
    await confirmDurable(deps, input.orgId, { eventIds: [stored.id], withJobs: stored.deliveries.length > 0, replay: true }, marks);
    return { replayed: true, answer: stored };
  }
  const { event, deliveries, keyHash } = prepared;
  try {
    await queueJobs(deps.queues, input.orgId, deliveryJobs(deliveries, 0, traceparent));
  } catch (err) {
    // Best effort: if Redis is gone this fails too, and the reconciler queues the deliveries later.
    await deps.store.events.removeUnqueued(event, deliveries, keyHash).catch(() => undefined);
    throw err;
  }
  await confirmDurable(deps, input.orgId, { eventIds: [event.id], withJobs: deliveries.length > 0, replay: false }, marks);
  return { replayed: false, answer: prepared.answer };
}

/** {@link acceptEvents}: one pipeline of writes, one `addBulk`, one durability check, each shared by the events it concerns. */
async function acceptMany(deps: AppDeps, orgId: string, inputs: readonly AcceptInput[], spans: readonly (AcceptSpan | undefined)[]): Promise<AcceptOutcome[]> {
  const orgEndpoints = inputs.some((i) => fansOut(i) && !i.endpoints) ? await deps.store.endpoints.listAll(orgId) : [];
  const all = inputs.map((input, i) => prepare(deps, input, orgEndpoints, spans[i]?.traceparent));
  // In request order, each event while the request's deliveries stay within the limit; one that
  // would pass it is refused alone and writes nothing, and a later, smaller one may still fit.
  const maxDeliveries = deps.config.maxDeliveriesPerRequest ?? DEFAULT_MAX_DELIVERIES_PER_REQUEST;
  let planned = 0;
  const refusals = all.map((p) => {
    if (planned + p.deliveries.length > maxDeliveries) return tooManyDeliveries(maxDeliveries, p.deliveries.length, planned);
    planned += p.deliveries.length;
    return null;
  });
  const prepared = all.filter((_, i) => refusals[i] === null);
  const marks = writeMarks(deps, orgId);
  const writtenFitting = prepared.length > 0 ? await deps.store.events.createManyWithDeliveries(prepared.map((p) => p.write)) : [];
  let next = 0;
  const written = refusals.map((refusal) => refusal ?? writtenFitting[next++]!);

  const outcomes: AcceptOutcome[] = [];
  const created: PreparedEvent[] = [];
  // By delivery id: an event replaying one of the same call queues nothing more.
  const jobs = new Map<string, DeliveryJobEntry>();
  const addJobs = (entries: readonly DeliveryJobEntry[]) => {
    for (const job of entries) if (!jobs.has(job.opts?.jobId ?? '')) jobs.set(job.opts?.jobId ?? '', job);
  };
  let replays = false;
  for (const [i, result] of written.entries()) {
    const p = all[i]!;
    if (result instanceof Error) {
      outcomes.push({ ok: false, error: result });
      continue;
    }
    let stored: AcceptedEvent | null;
    try {
      stored = replayOf(p, result);
    } catch (err) {
      outcomes.push({ ok: false, error: err });
      continue;
    }
    if (stored) {
      replays = true;
      addJobs(replayJobs(orgId, stored, p.traceparent));
      outcomes.push({ ok: true, replayed: true, answer: stored });
    } else {
      created.push(p);
      addJobs(deliveryJobs(p.deliveries, 0, p.traceparent));
      outcomes.push({ ok: true, replayed: false, answer: p.answer });
    }
  }

  // A failure shared by every event that got this far: each is answered with it.
  const failAccepted = (error: unknown) => {
    outcomes.forEach((o, i) => {
      if (o.ok) outcomes[i] = { ok: false, error };
    });
    return outcomes;
  };
  try {
    await queueJobs(deps.queues, orgId, [...jobs.values()]);
  } catch (err) {
    // Best effort, as for one event: if Redis is gone this fails too, and the reconciler queues them later.
    await deps.store.events.removeManyUnqueued(created.map((p) => ({ event: p.event, deliveries: p.deliveries, idempotencyKeyHash: p.keyHash }))).catch(() => undefined);
    return failAccepted(err);
  }
  const accepted = outcomes.flatMap((o) => (o.ok ? [o.answer.id] : []));
  if (accepted.length === 0) return outcomes;
  try {
    await confirmDurable(deps, orgId, { eventIds: accepted, withJobs: jobs.size > 0, replay: replays }, marks);
  } catch (err) {
    return failAccepted(err);
  }
  return outcomes;
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

async function confirmDurable(deps: AppDeps, orgId: string, written: { eventIds: readonly string[]; withJobs: boolean; replay: boolean }, marks: readonly (WriteMark | undefined)[]): Promise<void> {
  const durability = deps.config.durability;
  if (!durability || durability.mode === 'local') return;
  const fsync = durability.mode === 'local-fsync';
  const opts = { replicas: durability.replicas, timeoutMs: durability.waitMs, fsync };
  const writes = durabilityWrites(deps, orgId, written.withJobs);
  const now = deps.clock.now();
  const confirmations = await Promise.all(
    writes.map(async ({ redis, key }, i) => {
      if (written.replay) await touchForConfirmation(redis, key, now);
      // A write whose connection was not known before it went (a cluster still learning its slots) confirms nothing.
      const mark = marks[i];
      if (!mark) return { replicas: 0, localFsynced: false };
      return confirmWrites(redis, key, opts, mark);
    }),
  );
  const verdict = durabilityVerdict(durability.mode, durability.replicas, confirmations);
  if (verdict.durable) return;
  const [eventId, ...more] = written.eventIds;
  deps.logger.warn({ orgId, ...(more.length === 0 ? { eventId } : { eventIds: written.eventIds }), reason: verdict.reason }, 'event written but not confirmed durable: answered 503');
  throw new ApiError(503, 'not_durable', `the event was written but ${verdict.reason}; retry with the same idempotencyKey to get the same event`, undefined, verdict.retryAfterS);
}

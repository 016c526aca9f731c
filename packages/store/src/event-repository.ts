import { createHash } from 'node:crypto';
import { newId } from '@postern/shared';
import type { RedisClient } from './redis-connection.js';
import type { KeySchema } from './keys.js';
import { LuaScript } from './lua-script.js';
import { assertExec } from './org-repository.js';
import { deliveryHashFields, eventHashFields, parseDelivery, parseEvent, type DeliveryRecord, type EventRecord } from './records.js';
import { joinSplitValues } from './split-values.js';

const createEventScript = LuaScript.load('create-event');
const eraseDataScript = LuaScript.load('erase-event-data');

/** Result of {@link EventRepository.eraseData}. */
export type EraseDataResult =
  | { kind: 'missing' }
  /** A delivery of the event is being attempted now: nothing was erased; try again when it is over. */
  | { kind: 'in_flight'; deliveryId: string }
  /**
   * Erased (now, or before: `erasedAt` is the first time, epoch ms). `cancelled`: pending deliveries
   * cancelled by this call (`data_erased`); `woken`: deliveries now first in their ordering key's
   * line, whose jobs the caller wakes.
   */
  | { kind: 'erased'; erasedAt: number; cancelled: number; woken: string[] };

/** How long a producer's idempotency key keeps returning the first answer: 24 h, in seconds. */
export const IDEMPOTENCY_TTL_S = 24 * 60 * 60;

/** How long an event that reached no endpoint is kept, in seconds: 30 days (no delivery purges it). */
export const UNDELIVERED_EVENT_TTL_S = 30 * IDEMPOTENCY_TTL_S;

/** Result of {@link EventRepository.createWithDeliveries}. */
export type CreateEventResult =
  | { created: true; answer: string }
  /** The idempotency key was used before: `answer` is what was stored then. */
  | { created: false; answer: string };

/** One event to write with its deliveries: see {@link EventRepository.createWithDeliveries}. */
export interface NewEvent {
  event: EventRecord;
  deliveries: DeliveryRecord[];
  /** SHA-256 (hex) of the producer's idempotency key, or null when it sent none. */
  idempotencyKeyHash: string | null;
  /** What to store under the idempotency key (ignored without one). */
  answer: string;
  /**
   * Ids of the deliveries that join their ordering key's line (an `orderingKey` and a `per-key`
   * endpoint): each gets the key's next `sequence` at its endpoint. Default none.
   */
  keyLineDeliveryIds?: ReadonlySet<string>;
}

function createResult(reply: unknown): CreateEventResult {
  const [written, answer] = reply as [number, string];
  return written === 1 ? { created: true, answer } : { created: false, answer };
}

/**
 * The hash that names an ordering key in Redis keys and key line entries: 32 hex characters of its
 * SHA-256, so any key (≤ 256 characters, any characters) makes a short, safe key name.
 */
export function orderingKeyHash(orderingKey: string): string {
  return createHash('sha256').update(orderingKey).digest('hex').slice(0, 32);
}

/** Events and their fan-out, written atomically. */
export class EventRepository {
  constructor(private readonly redis: RedisClient, private readonly keys: KeySchema) {}

  /**
   * Writes the event, every delivery (status `pending`) and their indexes in one Lua call, and
   * stores `answer` under the idempotency key (hashed by the caller) for 24 h. When the key
   * already holds an answer, nothing is written and that answer is returned.
   */
  async createWithDeliveries(input: NewEvent): Promise<CreateEventResult> {
    const { keys, args } = this.createCall(input);
    return createResult(await createEventScript.run(this.redis, keys, args));
  }

  /**
   * Writes several events of one org, each as {@link createWithDeliveries} does, in one round trip
   * (the script once per event, in order: an event whose idempotency key an earlier one of the same
   * call used gets that one's answer). Each event is written whole or not at all, independently of
   * the others. Resolves with each event's result, or the error Redis refused it with, in order;
   * rejects when the call could not be sent or answered at all (any of them may then be written:
   * a retry with the same idempotency keys finds their answers).
   *
   * @throws Error when the events are not all of one org (their keys would span hash slots).
   */
  async createManyWithDeliveries(inputs: readonly NewEvent[]): Promise<(CreateEventResult | Error)[]> {
    const orgId = inputs[0]?.event.orgId;
    if (inputs.some((i) => i.event.orgId !== orgId)) throw new Error('createManyWithDeliveries: every event must be of one org');
    const replies = await createEventScript.runMany(this.redis, inputs.map((input) => this.createCall(input)));
    return replies.map((reply) => (reply instanceof Error ? reply : createResult(reply)));
  }

  /** The keys and arguments of create-event.lua for one event. */
  private createCall(input: NewEvent): { keys: string[]; args: string[] } {
    const { event, deliveries } = input;
    const keys = [
      input.idempotencyKeyHash ? this.keys.idempotency(event.orgId, input.idempotencyKeyHash) : this.keys.event(event.orgId, event.id),
      this.keys.event(event.orgId, event.id),
      this.keys.orgAcceptSeq(event.orgId),
    ];
    const fields: string[] = [];
    const keyed: [number, string][] = [];
    const keyLineKeys: string[] = [];
    deliveries.forEach((d, i) => {
      keys.push(this.keys.delivery(event.orgId, d.id), this.keys.endpointDeliveriesByStatus(event.orgId, d.endpointId, 'pending'));
      fields.push(JSON.stringify(['id', d.id, ...deliveryHashFields(d)]));
      if (d.orderingKey && input.keyLineDeliveryIds?.has(d.id)) {
        const keyHash = orderingKeyHash(d.orderingKey);
        keyed.push([i, keyHash]);
        keyLineKeys.push(this.keys.orderingKeySequence(event.orgId, d.endpointId, keyHash), this.keys.endpointKeyLines(event.orgId, d.endpointId));
      }
    });
    keys.push(this.keys.orgEvents(event.orgId), this.keys.orgUndeliveredEvents(event.orgId), ...keyLineKeys);
    const args: string[] = [
      input.idempotencyKeyHash ? '1' : '0',
      String(IDEMPOTENCY_TTL_S),
      input.answer,
      JSON.stringify(['id', event.id, ...eventHashFields(event)]),
      String(deliveries.length),
      JSON.stringify(keyed),
      // Events that reached no endpoint expire after 30 days: the smallest id of that instant.
      newId('evt', event.createdAt - UNDELIVERED_EVENT_TTL_S * 1000, (n) => Buffer.alloc(n, 0)),
      ...fields,
    ];
    return { keys, args };
  }

  /**
   * Removes an event and deliveries written by {@link createWithDeliveries} whose jobs could not
   * be queued, so a failed request leaves nothing half-visible.
   */
  async removeUnqueued(event: Pick<EventRecord, 'id' | 'orgId'>, deliveries: Pick<DeliveryRecord, 'id' | 'endpointId' | 'orderingKey'>[], idempotencyKeyHash: string | null): Promise<void> {
    await this.removeManyUnqueued([{ event, deliveries, idempotencyKeyHash }]);
  }

  /**
   * {@link removeUnqueued} for several events of one org (written by
   * {@link createManyWithDeliveries}) in one transaction, after one round of reads.
   */
  async removeManyUnqueued(written: readonly { event: Pick<EventRecord, 'id' | 'orgId'>; deliveries: readonly Pick<DeliveryRecord, 'id' | 'endpointId' | 'orderingKey'>[]; idempotencyKeyHash: string | null }[]): Promise<void> {
    if (written.length === 0) return;
    // A keyed delivery left in its key's line would hold the key up for good: its entry goes too.
    const keyed = written.flatMap(({ event, deliveries }) => deliveries.filter((d) => d.orderingKey !== undefined).map((d) => ({ orgId: event.orgId, d })));
    const entries = await Promise.all(keyed.map(({ orgId, d }) => this.redis.hget(this.keys.delivery(orgId, d.id), 'keyLine')));
    const multi = this.redis.multi();
    for (const { event, deliveries, idempotencyKeyHash } of written) {
      multi.del(this.keys.event(event.orgId, event.id)).zrem(this.keys.orgEvents(event.orgId), event.id).zrem(this.keys.orgUndeliveredEvents(event.orgId), event.id);
      if (idempotencyKeyHash) multi.del(this.keys.idempotency(event.orgId, idempotencyKeyHash));
      for (const d of deliveries) {
        multi
          .del(this.keys.delivery(event.orgId, d.id), this.keys.deliveryAttempts(event.orgId, d.id))
          .zrem(this.keys.endpointDeliveriesByStatus(event.orgId, d.endpointId, 'pending'), d.id);
      }
    }
    keyed.forEach(({ orgId, d }, i) => {
      const entry = entries[i];
      if (entry) multi.zrem(this.keys.endpointKeyLines(orgId, d.endpointId), entry);
    });
    assertExec(await multi.exec());
  }

  /**
   * Erases an event's payload, keeping its delivery log's metadata (erase-event-data.lua): the
   * envelope, every delivery's frozen body and every kept response go; pending deliveries are
   * cancelled with `data_erased`, each then expiring as `expiresAt(delivery)` says (what its
   * endpoint's retention gives a delivery finished at `nowMs`: epoch ms, or '' when kept by count).
   * Refused (`in_flight`) while a delivery is being attempted. Erasing again changes nothing and
   * answers the first time. Every delivery of the event, redeliveries included, is in one script
   * call; a redelivery made between reading them and the call makes it read them again.
   */
  async eraseData(orgId: string, eventId: string, nowMs: number, expiresAt: (d: DeliveryRecord) => number | ''): Promise<EraseDataResult> {
    for (let round = 0; round < 5; round++) {
      const event = await this.get(orgId, eventId);
      if (!event) return { kind: 'missing' };
      const redeliveries = await this.redis.zrange(this.keys.eventRedeliveries(orgId, eventId), 0, -1);
      const ids = [...event.deliveryIds, ...redeliveries];
      const pipeline = this.redis.pipeline();
      for (const id of ids) pipeline.hgetall(this.keys.delivery(orgId, id));
      const deliveries = assertExec(await pipeline.exec())
        .map(([, h], i) => parseDelivery(h as Record<string, string>, orgId, ids[i]))
        .filter((d): d is DeliveryRecord => d !== null);
      const k = this.keys;
      const keys = [k.event(orgId, eventId), k.eventRedeliveries(orgId, eventId)];
      const args: (string | number)[] = [nowMs, redeliveries.length];
      for (const d of deliveries) {
        keys.push(
          k.delivery(orgId, d.id),
          k.deliveryAttempts(orgId, d.id),
          k.endpointDeliveriesByStatus(orgId, d.endpointId, 'pending'),
          k.endpointDeliveriesByStatus(orgId, d.endpointId, 'cancelled'),
          k.endpointHeld(orgId, d.endpointId),
          k.endpointKeyLines(orgId, d.endpointId),
        );
        args.push(d.id, expiresAt(d));
      }
      const r = (await eraseDataScript.run(this.redis, keys, args)) as [string, ...unknown[]];
      if (r[0] === 'changed') continue;
      if (r[0] === 'in_flight') return { kind: 'in_flight', deliveryId: String(r[1]) };
      return { kind: 'erased', cancelled: Number(r[1]), erasedAt: Number(r[2]), woken: r.slice(3).map(String) };
    }
    throw new Error(`event ${eventId}: its redeliveries kept changing while it was being erased`);
  }

  /** The event id of the 202 answer stored under an idempotency key's SHA-256 (hex), kept 24 h; null when none. */
  async storedAnswer(orgId: string, keyHash: string): Promise<string | null> {
    const raw = await this.redis.get(this.keys.idempotency(orgId, keyHash));
    if (!raw) return null;
    try {
      // `{fingerprint, body: {id, deliveries}}` (ingest's accept-event.ts).
      const id = (JSON.parse(raw) as { body?: { id?: unknown } }).body?.id;
      return typeof id === 'string' ? id : null;
    } catch {
      return null;
    }
  }

  /** The org's event, or null. */
  async get(orgId: string, eventId: string): Promise<EventRecord | null> {
    return parseEvent(joinSplitValues(await this.redis.hgetallBuffer(this.keys.event(orgId, eventId))), orgId, eventId);
  }

  /** Only the envelope bytes of an event, or null when the event is gone. */
  async getEnvelope(orgId: string, eventId: string): Promise<string | null> {
    const event = await this.get(orgId, eventId);
    return event ? event.envelope : null;
  }
}

import type { Redis } from 'ioredis';
import type { KeySchema } from './keys.js';
import { LuaScript } from './lua-script.js';
import { assertExec } from './org-repository.js';
import { webhookRequestHeaders } from '@postern/shared';
import { parseDelivery, toHashFields, type AttemptRecord, type DeliveryRecord, type DeliveryStatus, type StoredAttempt } from './records.js';

const purgeDeliveryScript = LuaScript.load('purge-delivery');

/** Deliveries, their attempts and the per-endpoint delivery log. */
export class DeliveryRepository {
  constructor(private readonly redis: Redis, private readonly keys: KeySchema) {}

  /** The delivery, or null. */
  async get(deliveryId: string): Promise<DeliveryRecord | null> {
    return parseDelivery(await this.redis.hgetall(this.keys.delivery(deliveryId)));
  }

  /**
   * Every attempt of a delivery, by number, with the request headers rebuilt as sent
   * (`webhookRequestHeaders`). `eventId` is read from the delivery when not given.
   */
  async getAttempts(deliveryId: string, eventId?: string): Promise<AttemptRecord[]> {
    const [raw, storedEventId] = await Promise.all([
      this.redis.hvals(this.keys.deliveryAttempts(deliveryId)),
      eventId === undefined ? this.redis.hget(this.keys.delivery(deliveryId), 'eventId') : eventId,
    ]);
    return raw
      .map((r) => JSON.parse(r) as StoredAttempt)
      .map((a) => ({
        number: a.number ?? 0,
        startedAt: a.startedAt ?? 0,
        durationMs: a.durationMs ?? null,
        responseStatus: a.responseStatus ?? null,
        error: a.error ?? null,
        requestHeaders: a.sent ? webhookRequestHeaders({ eventId: storedEventId ?? '', deliveryId, attemptNumber: a.number }, a.sent) : null,
        response: a.response ?? null,
      }))
      .sort((a, b) => a.number - b.number);
  }

  /**
   * A page of an endpoint's delivery log, newest first, optionally of one status.
   * `cursor` is the last id of the previous page; `limit` 1..100.
   */
  async listByEndpoint(
    endpointId: string,
    opts: { status?: DeliveryStatus; limit: number; cursor?: string },
  ): Promise<{ items: DeliveryRecord[]; nextCursor: string | null }> {
    const key = opts.status ? this.keys.endpointDeliveriesByStatus(endpointId, opts.status) : this.keys.endpointDeliveries(endpointId);
    const max = opts.cursor ? `(${opts.cursor}` : '+';
    const ids = await this.redis.zrevrangebylex(key, max, '-', 'LIMIT', 0, opts.limit + 1);
    const page = ids.slice(0, opts.limit);
    const items = await this.getMany(page);
    return { items, nextCursor: ids.length > opts.limit ? (page[page.length - 1] ?? null) : null };
  }

  /** Ids of an event's redeliveries (deliveries with `redeliveredFromId`), oldest first. */
  async redeliveryIds(eventId: string): Promise<string[]> {
    return this.redis.zrange(this.keys.eventRedeliveries(eventId), 0, -1);
  }

  /** Deliveries by id, in the order given; missing ones are skipped. */
  async getMany(ids: readonly string[]): Promise<DeliveryRecord[]> {
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(this.keys.delivery(id));
    const results = assertExec(await pipeline.exec());
    return results.map(([, h]) => parseDelivery(h as Record<string, string>)).filter((d): d is DeliveryRecord => d !== null);
  }

  /**
   * Writes new deliveries (redeliveries) with their indexes in one transaction. With
   * `markBulkRedelivered`, the originals are remembered so the next bulk call skips them; the
   * original rows themselves are never changed.
   */
  async createMany(deliveries: readonly DeliveryRecord[], markBulkRedelivered = false): Promise<void> {
    if (deliveries.length === 0) return;
    const multi = this.redis.multi();
    for (const d of deliveries) {
      multi
        .hset(this.keys.delivery(d.id), ...toHashFields(d))
        .zadd(this.keys.endpointDeliveries(d.endpointId), 0, d.id)
        .zadd(this.keys.endpointDeliveriesByStatus(d.endpointId, d.status), 0, d.id)
        .zadd(this.keys.unfinishedDeliveries(), d.createdAt, d.id);
      multi.hincrby(this.keys.event(d.eventId), 'liveDeliveries', 1);
      // Every delivery of an event is listed with it: the first ones are the event's own
      // `deliveryIds`, redeliveries are indexed here (issue 14).
      if (d.redeliveredFromId) multi.zadd(this.keys.eventRedeliveries(d.eventId), 0, d.id);
      if (markBulkRedelivered && d.redeliveredFromId) multi.sadd(this.keys.endpointBulkRedelivered(d.endpointId), d.redeliveredFromId);
    }
    assertExec(await multi.exec());
  }

  /**
   * Deliveries of an endpoint that a bulk redelivery would take, oldest first: every `failed` one
   * and every one `cancelled` by the breaker, not yet taken by an earlier bulk call, finished at or
   * after `sinceMs`. Returns up to `limit` of them and how many there are in all.
   */
  async listRedeliverable(endpointId: string, opts: { limit: number; sinceMs?: number }): Promise<{ items: DeliveryRecord[]; total: number }> {
    const [failed, cancelled, taken] = await Promise.all([
      this.redis.zrange(this.keys.endpointDeliveriesByStatus(endpointId, 'failed'), 0, -1),
      this.redis.zrange(this.keys.endpointDeliveriesByStatus(endpointId, 'cancelled'), 0, -1),
      this.redis.smembers(this.keys.endpointBulkRedelivered(endpointId)),
    ]);
    const skip = new Set(taken);
    const candidates = [...failed, ...cancelled].filter((id) => !skip.has(id)).sort();
    const eligible: DeliveryRecord[] = [];
    for (let i = 0; i < candidates.length; i += 500) {
      const batch = await this.getMany(candidates.slice(i, i + 500));
      for (const d of batch) {
        if (d.status === 'cancelled' && d.cancelReason !== 'breaker_tripped') continue;
        if (opts.sinceMs !== undefined && (d.finishedAt ?? d.updatedAt) < opts.sinceMs) continue;
        eligible.push(d);
      }
    }
    return { items: eligible.slice(0, opts.limit), total: eligible.length };
  }

  /** Removes a finished delivery (and its event when no other delivery refers to it). Returns false when unfinished or missing. */
  async purge(deliveryId: string): Promise<boolean> {
    const [status, endpointId, eventId, orgId] = await this.redis.hmget(this.keys.delivery(deliveryId), 'status', 'endpointId', 'eventId', 'orgId');
    if (!status || !endpointId || !eventId || !orgId) return false;
    const k = this.keys;
    const r = await purgeDeliveryScript.run(
      this.redis,
      [
        k.delivery(deliveryId),
        k.deliveryAttempts(deliveryId),
        k.endpointDeliveries(endpointId),
        k.endpointDeliveriesByStatus(endpointId, status),
        k.endpointHeld(endpointId),
        k.endpointBulkRedelivered(endpointId),
        k.event(eventId),
        k.orgEvents(orgId),
        k.eventRedeliveries(eventId),
      ],
      [status, eventId],
    );
    return r === 1;
  }

  /** The oldest `limit` ids of an endpoint's delivery log (all statuses), in creation order. */
  async oldestIds(endpointId: string, limit: number, status?: DeliveryStatus): Promise<string[]> {
    const key = status ? this.keys.endpointDeliveriesByStatus(endpointId, status) : this.keys.endpointDeliveries(endpointId);
    return this.redis.zrangebylex(key, '-', '+', 'LIMIT', 0, limit);
  }

  /** How many deliveries of an endpoint are in each status given. */
  async countByStatus(endpointId: string, statuses: readonly DeliveryStatus[]): Promise<number[]> {
    const pipeline = this.redis.pipeline();
    for (const s of statuses) pipeline.zcard(this.keys.endpointDeliveriesByStatus(endpointId, s));
    return assertExec(await pipeline.exec()).map(([, n]) => Number(n));
  }

  /** Ids of the endpoint's held deliveries, oldest first, at most `limit`. */
  async listHeld(endpointId: string, limit: number): Promise<string[]> {
    return this.redis.zrangebylex(this.keys.endpointHeld(endpointId), '-', '+', 'LIMIT', 0, limit);
  }

  /** Those of `ids` whose queue job does not exist, in the order given (one round trip for all). */
  async withoutJob(ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.exists(this.keys.deliveryJob(id));
    const results = assertExec(await pipeline.exec());
    return ids.filter((_, i) => results[i]![1] === 0);
  }

  /**
   * Ids of unfinished deliveries created before `beforeMs`, oldest first, skipping `offset`
   * (for the reconciler's sweep).
   */
  async listUnfinished(beforeMs: number, offset: number, limit: number): Promise<string[]> {
    return this.redis.zrangebyscore(this.keys.unfinishedDeliveries(), 0, beforeMs, 'LIMIT', offset, limit);
  }
}

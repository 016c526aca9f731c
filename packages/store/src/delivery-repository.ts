import { randomBytes } from 'node:crypto';
import type { RedisClient } from './redis-connection.js';
import type { KeySchema } from './keys.js';
import { LuaScript } from './lua-script.js';
import { assertExec } from './org-repository.js';
import { newId, webhookRequestHeaders } from '@postern/shared';
import { joinSplitValues } from './split-values.js';
import { endpointLogIds, endpointStatusIds } from './endpoint-log.js';
import { readAttempts } from './attempt-encoding.js';
import { deliveryHashFields, parseDelivery, type AttemptRecord, type DeliveryRecord, type DeliveryStatus } from './records.js';
import { eventIdOfDelivery } from './derived-ids.js';

const purgeDeliveryScript = LuaScript.load('purge-delivery');
const trimFinishedScript = LuaScript.load('trim-finished');
const reopenEventScript = LuaScript.load('reopen-event');

/** Finished deliveries one round of a `{lastPerEndpoint}` trim removes at most: one Redis script never pauses long. */
export const TRIM_BATCH = 50;
/** How long one endpoint's trim holds its turn at most, ms (a crashed trimmer's turn frees itself). */
const TRIM_TURN_MS = 5_000;
/** How long one call trims at most, ms: half a turn, so the turn never expires under a running trim. */
export const TRIM_WORK_MS = TRIM_TURN_MS / 2;
const releaseScript = LuaScript.load('release-if-holder');
const makeDueNowScript = LuaScript.load('make-due-now');

/**
 * Every attempt of a delivery from its hash and its attempts hash (split values joined), with the
 * request headers rebuilt as sent (`webhookRequestHeaders`). `eventId` is read from the delivery
 * hash when not given.
 */
function attemptsOf(deliveryHash: Record<string, string>, attemptsHash: Record<string, string>, deliveryId: string, eventId?: string): AttemptRecord[] {
  const storedEventId = eventId ?? eventIdOfDelivery(deliveryHash.eventId, deliveryId);
  // The ordering headers were sent from the delivery's own orderingKey and sequence.
  const ordering = {
    ...(deliveryHash.orderingKey ? { orderingKey: deliveryHash.orderingKey } : {}),
    ...(deliveryHash.sequence ? { sequence: Number(deliveryHash.sequence) } : {}),
  };
  return readAttempts(deliveryHash, attemptsHash).map((a) => ({
    number: a.number ?? 0,
    startedAt: a.startedAt ?? 0,
    durationMs: a.durationMs ?? null,
    responseStatus: a.responseStatus ?? null,
    error: a.error ?? null,
    requestHeaders: a.sent ? webhookRequestHeaders({ eventId: storedEventId, deliveryId, attemptNumber: a.number }, { ...ordering, ...a.sent }) : null,
    response: a.response ?? null,
    ...(a.cancelReason ? { cancelReason: a.cancelReason } : {}),
    ...(a.sent?.transformed ? { transformation: { version: a.sent.transformed.version, request: a.sent.transformed } } : a.transformationVersion !== undefined ? { transformation: { version: a.transformationVersion, request: null } } : {}),
  }));
}

/** Deliveries, their attempts and the per-endpoint delivery log. */
export class DeliveryRepository {
  constructor(private readonly redis: RedisClient, private readonly keys: KeySchema) {}

  /** The delivery, or null. */
  async get(orgId: string, deliveryId: string): Promise<DeliveryRecord | null> {
    return parseDelivery(await this.redis.hgetall(this.keys.delivery(orgId, deliveryId)), orgId, deliveryId);
  }

  /**
   * Freezes the body of a delivery (issue 16: the org's pre-attempt check answered send at the
   * delivery's first attempt): every later attempt sends exactly these bytes. Written only while
   * the delivery exists and has none yet (a re-run of the same attempt keeps the first); returns
   * the body in force after the call, or null when the delivery is gone.
   */
  async freezeEnvelope(orgId: string, deliveryId: string, envelope: string): Promise<string | null> {
    const key = this.keys.delivery(orgId, deliveryId);
    const [[, set], [, current], [, exists]] = assertExec(
      await this.redis.multi().hsetnx(key, 'frozenEnvelope', envelope).hget(key, 'frozenEnvelope').hexists(key, 'status').exec(),
    ) as [[null, number], [null, string | null], [null, number]];
    if (exists !== 1) {
      // HSETNX on a delivery that expired meanwhile created a stray hash: remove it again.
      if (set === 1) await this.redis.del(key);
      return null;
    }
    return current;
  }

  /**
   * Brings a waiting delivery's next attempt forward to `nowMs` (send-now), only while it is still
   * pending with `nextAttemptAt` as the caller read it; its job must then be promoted. Returns
   * false when the delivery moved on meanwhile (attempted, finished, held).
   */
  async makeDueNow(orgId: string, deliveryId: string, nextAttemptAt: number, nowMs: number): Promise<boolean> {
    return (await makeDueNowScript.run(this.redis, [this.keys.delivery(orgId, deliveryId)], [nowMs, nextAttemptAt])) === 1;
  }

  /**
   * Every attempt of a delivery, by number, with the request headers rebuilt as sent
   * (`webhookRequestHeaders`). `eventId` is read from the delivery when not given.
   */
  async getAttempts(orgId: string, deliveryId: string, eventId?: string): Promise<AttemptRecord[]> {
    // Cores are in the delivery's hash, kept responses (and older attempts) in its attempts hash.
    const [deliveryHash, attemptsHash] = await Promise.all([
      this.redis.hgetallBuffer(this.keys.delivery(orgId, deliveryId)).then(joinSplitValues),
      this.redis.hgetallBuffer(this.keys.deliveryAttempts(orgId, deliveryId)).then(joinSplitValues),
    ]);
    return attemptsOf(deliveryHash, attemptsHash, deliveryId, eventId);
  }

  /**
   * Deliveries of one org by id with their attempts, in the order given, missing ones skipped:
   * two reads per delivery, all in one pipeline (the export's page).
   */
  async getManyWithAttempts(orgId: string, ids: readonly string[]): Promise<{ delivery: DeliveryRecord; attempts: AttemptRecord[] }[]> {
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetallBuffer(this.keys.delivery(orgId, id)).hgetallBuffer(this.keys.deliveryAttempts(orgId, id));
    const results = assertExec(await pipeline.exec());
    const out: { delivery: DeliveryRecord; attempts: AttemptRecord[] }[] = [];
    ids.forEach((id, i) => {
      const deliveryHash = joinSplitValues(results[2 * i]![1] as Record<string, Buffer>);
      const delivery = parseDelivery(deliveryHash, orgId, id);
      if (!delivery) return;
      out.push({ delivery, attempts: attemptsOf(deliveryHash, joinSplitValues(results[2 * i + 1]![1] as Record<string, Buffer>), id, delivery.eventId) });
    });
    return out;
  }

  /**
   * The org's delivery log in pages, for the export (docs/erasure-and-export.md): each endpoint of
   * `endpointIds` in turn, its deliveries oldest first (id order = creation order), those of
   * `status` only when given, created from `sinceMs` to `untilMs` (epoch ms, both inclusive) when
   * given. Reads one page of ids, then those deliveries with their attempts, and yields it, so only
   * one page is ever held: the consumer pulls the next when it has written this one.
   */
  async *pagesOfLog(
    orgId: string,
    endpointIds: readonly string[],
    q: { status?: DeliveryStatus; sinceMs?: number; untilMs?: number; pageSize: number },
  ): AsyncGenerator<{ delivery: DeliveryRecord; attempts: AttemptRecord[] }[]> {
    const floor = q.sinceMs !== undefined ? `[${newId('dlv', q.sinceMs, (n) => Buffer.alloc(n, 0))}` : '-';
    const ceiling = q.untilMs !== undefined ? `[${newId('dlv', q.untilMs, (n) => Buffer.alloc(n, 0xff))}` : '+';
    for (const endpointId of endpointIds) {
      let min = floor;
      for (;;) {
        const ids = q.status
          ? await endpointStatusIds(this.redis, this.keys, orgId, endpointId, q.status, { order: 'asc', min, max: ceiling, limit: q.pageSize })
          : await endpointLogIds(this.redis, this.keys, orgId, endpointId, { order: 'asc', min, max: ceiling, limit: q.pageSize });
        if (ids.length === 0) break;
        const page = await this.getManyWithAttempts(orgId, ids);
        // pending and in_flight share an index: each delivery's own status tells them apart.
        const kept = q.status ? page.filter((x) => x.delivery.status === q.status) : page;
        if (kept.length > 0) yield kept;
        if (ids.length < q.pageSize) break;
        min = `(${ids[ids.length - 1]}`;
      }
    }
  }

  /**
   * A page of an endpoint's delivery log, newest first, optionally of one status.
   * `cursor` is the last id of the previous page; `limit` 1..100. Index entries of deliveries
   * that expired (`{days}` retention) are dropped as they are read, so a page may hold fewer.
   */
  async listByEndpoint(
    orgId: string,
    endpointId: string,
    opts: { status?: DeliveryStatus; limit: number; cursor?: string },
  ): Promise<{ items: DeliveryRecord[]; nextCursor: string | null }> {
    const max = opts.cursor ? `(${opts.cursor}` : '+';
    const ids = opts.status
      ? await endpointStatusIds(this.redis, this.keys, orgId, endpointId, opts.status, { order: 'desc', max, min: '-', limit: opts.limit + 1 })
      : await endpointLogIds(this.redis, this.keys, orgId, endpointId, { order: 'desc', max, min: '-', limit: opts.limit + 1 });
    const page = ids.slice(0, opts.limit);
    const items = await this.getMany(orgId, page);
    if (items.length < page.length) await this.dropMissing(orgId, endpointId, page, items);
    // pending and in_flight share an index: each delivery's own status tells them apart.
    const kept = opts.status ? items.filter((d) => d.status === opts.status) : items;
    return { items: kept, nextCursor: ids.length > opts.limit ? (page[page.length - 1] ?? null) : null };
  }

  /** Ids of an event's redeliveries (deliveries with `redeliveredFromId`), oldest first. */
  async redeliveryIds(orgId: string, eventId: string): Promise<string[]> {
    return this.redis.zrange(this.keys.eventRedeliveries(orgId, eventId), 0, -1);
  }

  /**
   * Removes from the endpoint's indexes the ids of `ids` that `found` lacks: deliveries Redis
   * expired by themselves (`{days}` retention), whose index entries are trimmed as they are read.
   */
  async dropMissing(orgId: string, endpointId: string, ids: readonly string[], found: readonly DeliveryRecord[]): Promise<number> {
    const present = new Set(found.map((d) => d.id));
    const gone = ids.filter((id) => !present.has(id));
    if (gone.length === 0) return 0;
    const k = this.keys;
    const multi = this.redis.multi().zrem(k.endpointDeliveries(orgId, endpointId), ...gone);
    for (const s of ['succeeded', 'failed', 'cancelled'] as const) multi.zrem(k.endpointDeliveriesByStatus(orgId, endpointId, s), ...gone);
    multi.zrem(k.endpointHeld(orgId, endpointId), ...gone).srem(k.endpointBulkRedelivered(orgId, endpointId), ...gone);
    assertExec(await multi.exec());
    return gone.length;
  }

  /** Deliveries of one org by id, in the order given; missing ones are skipped. */
  async getMany(orgId: string, ids: readonly string[]): Promise<DeliveryRecord[]> {
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(this.keys.delivery(orgId, id));
    const results = assertExec(await pipeline.exec());
    return results.map(([, h], i) => parseDelivery(h as Record<string, string>, orgId, ids[i])).filter((d): d is DeliveryRecord => d !== null);
  }

  /**
   * Writes new deliveries (redeliveries) with their indexes in one transaction; the original rows
   * are never changed (a bulk call marks the originals it took beforehand:
   * {@link takeForBulkRedelivery}). All deliveries must be of one org (one slot).
   */
  async createMany(deliveries: readonly DeliveryRecord[]): Promise<void> {
    if (deliveries.length === 0) return;
    // Their places in their endpoints' lines: after everything accepted so far (README, "Ordering").
    const [first] = deliveries;
    const lastSeq = await this.redis.incrby(this.keys.orgAcceptSeq(first!.orgId), deliveries.length);
    const multi = this.redis.multi();
    for (const [i, d] of deliveries.entries()) {
      multi
        .hset(this.keys.delivery(d.orgId, d.id), ...deliveryHashFields({ ...d, acceptSeq: lastSeq - deliveries.length + 1 + i }))
        .zadd(this.keys.endpointDeliveriesByStatus(d.orgId, d.endpointId, d.status), 0, d.id);
      // One more delivery of the event to wait for: it must not expire before this one finishes
      // (its keep time, when only its expiry held it, is kept: reopen-event.lua).
      reopenEventScript.queueIn(multi, [this.keys.event(d.orgId, d.eventId)], [d.createdAt]);
      // Every delivery of an event is listed with it: the first ones are the event's own
      // `deliveryIds`, redeliveries are indexed here (issue 14).
      if (d.redeliveredFromId) multi.zadd(this.keys.eventRedeliveries(d.orgId, d.eventId), 0, d.id);
    }
    assertExec(await multi.exec());
  }

  /**
   * Takes deliveries of `ids` (an endpoint's, from {@link listRedeliverable}) for one bulk
   * redelivery: each is marked taken by one `SADD`, so of bulk calls racing for the same delivery
   * exactly one gets it. Returns the ids this call took; those another call took first are left out.
   */
  async takeForBulkRedelivery(orgId: string, endpointId: string, ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const key = this.keys.endpointBulkRedelivered(orgId, endpointId);
    const results = assertExec(await this.redis.pipeline(ids.map((id) => ['sadd', key, id])).exec());
    return new Set(ids.filter((_, i) => results[i]![1] === 1));
  }

  /** Gives back deliveries {@link takeForBulkRedelivery} took when their redeliveries could not be written, so a later call takes them. */
  async releaseBulkRedelivery(orgId: string, endpointId: string, ids: readonly string[]): Promise<void> {
    if (ids.length > 0) await this.redis.srem(this.keys.endpointBulkRedelivered(orgId, endpointId), ...ids);
  }

  /**
   * Deliveries of an endpoint that a bulk redelivery would take, oldest first: every `failed` one
   * and every one `cancelled` by the breaker, whose event's payload was not erased, not yet taken by an earlier bulk call, finished at or
   * after `sinceMs`. Returns up to `limit` of them and how many there are in all.
   */
  async listRedeliverable(orgId: string, endpointId: string, opts: { limit: number; sinceMs?: number }): Promise<{ items: DeliveryRecord[]; total: number }> {
    const [failed, cancelled, taken] = await Promise.all([
      this.redis.zrange(this.keys.endpointDeliveriesByStatus(orgId, endpointId, 'failed'), 0, -1),
      this.redis.zrange(this.keys.endpointDeliveriesByStatus(orgId, endpointId, 'cancelled'), 0, -1),
      this.redis.smembers(this.keys.endpointBulkRedelivered(orgId, endpointId)),
    ]);
    const skip = new Set(taken);
    const candidates = [...failed, ...cancelled].filter((id) => !skip.has(id)).sort();
    const eligible: DeliveryRecord[] = [];
    for (let i = 0; i < candidates.length; i += 500) {
      const batch = await this.getMany(orgId, candidates.slice(i, i + 500));
      for (const d of batch) {
        if (d.status === 'cancelled' && d.cancelReason !== 'breaker_tripped') continue;
        // Its event's payload was erased: nothing to send again.
        if (d.dataErased) continue;
        if (opts.sinceMs !== undefined && (d.finishedAt ?? d.updatedAt) < opts.sinceMs) continue;
        eligible.push(d);
      }
    }
    return { items: eligible.slice(0, opts.limit), total: eligible.length };
  }

  /**
   * Removes a finished delivery (and its event when no other delivery keeps it: docs/architecture.md,
   * "Retention"; an event whose other deliveries expire by days is left to expire with the latest,
   * or goes now when that is before `nowMs`, epoch ms of the caller's clock). Returns false when
   * unfinished or missing.
   */
  async purge(orgId: string, deliveryId: string, nowMs: number): Promise<boolean> {
    const [status, endpointId, storedEvent] = await this.redis.hmget(this.keys.delivery(orgId, deliveryId), 'status', 'endpointId', 'eventId');
    const eventId = eventIdOfDelivery(storedEvent, deliveryId);
    if (!status || !endpointId || !eventId) return false;
    const k = this.keys;
    const r = await purgeDeliveryScript.run(
      this.redis,
      [
        k.delivery(orgId, deliveryId),
        k.deliveryAttempts(orgId, deliveryId),
        k.endpointDeliveries(orgId, endpointId),
        k.endpointDeliveriesByStatus(orgId, endpointId, status),
        k.endpointHeld(orgId, endpointId),
        k.endpointBulkRedelivered(orgId, endpointId),
        k.event(orgId, eventId),
        k.orgEvents(orgId),
        k.eventRedeliveries(orgId, eventId),
      ],
      [status, eventId, deliveryId, nowMs],
    );
    return r === 1;
  }

  /**
   * Keeps the newest `keep` finished deliveries of an endpoint — the `{lastPerEndpoint}` trim right
   * after a finish: removes the oldest (by id, which is creation order) beyond `keep`, with their
   * attempts, index entries and, with its last delivery, their event (an event whose other
   * deliveries are kept by days expires with the latest of them, or goes at once when that is
   * before `nowMs`, epoch ms of the caller's clock). `excess` is how far over `keep` the caller saw
   * the endpoint.
   *
   * One trim per endpoint runs at a time (a short `SET NX` turn in the org's slot): finishes that
   * find it taken leave their excess to it, and it reads the count again after giving the turn
   * back, so nothing is left over when the finishes stop. Without the turn, finishes at full speed
   * all read the same oldest candidates, all but one found them gone, and one endpoint kept about
   * 28 times its limit. A round removes at most {@link TRIM_BATCH} (three round trips: candidates,
   * their events, the script); one call trims for at most {@link TRIM_WORK_MS}, after which a later
   * finish (or the janitor's sweep) goes on. Returns how many went.
   */
  async trimOldestFinished(orgId: string, endpointId: string, keep: number, excess: number, nowMs: number): Promise<number> {
    const turn = this.keys.endpointTrimming(orgId, endpointId);
    const token = randomBytes(8).toString('hex');
    // A bound on the work of one call, not a domain time: a monotonic clock.
    const stopAt = performance.now() + TRIM_WORK_MS;
    let removed = 0;
    let over = excess;
    let nothingRemovable = false;
    while (over > 0 && performance.now() < stopAt) {
      if ((await this.redis.set(turn, token, 'PX', TRIM_TURN_MS, 'NX')) !== 'OK') break;
      try {
        while (over > 0 && performance.now() < stopAt) {
          const r = await this.trimRound(orgId, endpointId, keep, Math.min(over, TRIM_BATCH), nowMs);
          removed += r.removed;
          // Nothing removable left (none found, or only entries whose delivery is gone): stop.
          nothingRemovable = r.candidates === 0 || r.removed === 0;
          over = nothingRemovable ? 0 : r.finishedLeft - keep;
        }
      } finally {
        await releaseScript.run(this.redis, [turn], [token]);
      }
      // Finishes that found the turn taken while this one held it left their excess to it.
      if (nothingRemovable) break;
      const counts = await this.countByStatus(orgId, endpointId, ['succeeded', 'failed', 'cancelled']);
      over = counts.reduce((a, b) => a + b, 0) - keep;
    }
    return removed;
  }

  private async trimRound(orgId: string, endpointId: string, keep: number, max: number, nowMs: number): Promise<{ removed: number; finishedLeft: number; candidates: number }> {
    const k = this.keys;
    const statuses = ['succeeded', 'failed', 'cancelled'] as const;
    // A few spare candidates: a concurrent trim may have taken the oldest ones already.
    const want = max + 2;
    const pipeline = this.redis.pipeline();
    for (const s of statuses) pipeline.zrangebylex(k.endpointDeliveriesByStatus(orgId, endpointId, s), '-', '+', 'LIMIT', 0, want);
    const oldest = assertExec(await pipeline.exec()).flatMap(([, ids]) => ids as string[]).sort().slice(0, want);
    if (oldest.length === 0) return { removed: 0, finishedLeft: 0, candidates: 0 };
    const events = assertExec(await this.redis.pipeline(oldest.map((id) => ['hmget', k.delivery(orgId, id), 'status', 'eventId'])).exec());
    // A missing delivery (its status absent) is skipped by the script; its event id is a placeholder.
    const eventOf = (i: number) => {
      const [status, stored] = (events[i]?.[1] ?? [null, null]) as [string | null, string | null];
      return (status && eventIdOfDelivery(stored, oldest[i]!)) || 'evt_missing';
    };
    const keys = [
      ...statuses.map((s) => k.endpointDeliveriesByStatus(orgId, endpointId, s)),
      k.endpointDeliveries(orgId, endpointId),
      k.endpointHeld(orgId, endpointId),
      k.endpointBulkRedelivered(orgId, endpointId),
      k.orgEvents(orgId),
      ...oldest.flatMap((id, i) => {
        const eventId = eventOf(i);
        return [k.delivery(orgId, id), k.deliveryAttempts(orgId, id), k.event(orgId, eventId), k.eventRedeliveries(orgId, eventId)];
      }),
    ];
    const [removed, finishedLeft] = (await trimFinishedScript.run(this.redis, keys, [keep, max, nowMs, ...oldest.flatMap((id, i) => [id, eventOf(i)])])) as [number, number];
    return { removed: Number(removed), finishedLeft: Number(finishedLeft), candidates: oldest.length };
  }

  /** The oldest `limit` ids of an endpoint's delivery log (all statuses), in creation order. */
  async oldestIds(orgId: string, endpointId: string, limit: number, status?: DeliveryStatus): Promise<string[]> {
    if (!status) return endpointLogIds(this.redis, this.keys, orgId, endpointId, { order: 'asc', max: '+', min: '-', limit });
    return this.redis.zrangebylex(this.keys.endpointDeliveriesByStatus(orgId, endpointId, status), '-', '+', 'LIMIT', 0, limit);
  }

  /** How many deliveries of an endpoint are in each status given. */
  async countByStatus(orgId: string, endpointId: string, statuses: readonly DeliveryStatus[]): Promise<number[]> {
    const pipeline = this.redis.pipeline();
    for (const s of statuses) pipeline.zcard(this.keys.endpointDeliveriesByStatus(orgId, endpointId, s));
    return assertExec(await pipeline.exec()).map(([, n]) => Number(n));
  }

  /** How many deliveries the endpoint holds until it is back (paused or disabled). */
  async countHeld(orgId: string, endpointId: string): Promise<number> {
    return this.redis.zcard(this.keys.endpointHeld(orgId, endpointId));
  }

  /** Ids of the endpoint's pending deliveries (queued, or waiting out a retry delay or a limit), in the status index's order, at most `limit`. */
  async listPending(orgId: string, endpointId: string, limit: number): Promise<string[]> {
    return this.redis.zrange(this.keys.endpointDeliveriesByStatus(orgId, endpointId, 'pending'), 0, limit - 1);
  }

  /** Ids of the endpoint's held deliveries, oldest first, at most `limit`. */
  async listHeld(orgId: string, endpointId: string, limit: number): Promise<string[]> {
    return this.redis.zrangebylex(this.keys.endpointHeld(orgId, endpointId), '-', '+', 'LIMIT', 0, limit);
  }

  /** Those of the org's delivery `ids` whose queue job does not exist, in the order given (one round trip for all: one partition, one slot). */
  async withoutJob(orgId: string, ids: readonly string[]): Promise<string[]> {
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.exists(this.keys.deliveryJob(orgId, id));
    const results = assertExec(await pipeline.exec());
    return ids.filter((_, i) => results[i]![1] === 0);
  }
}

import { newId } from '@postern/shared';
import type { RedisClient } from './redis-connection.js';
import type { KeySchema } from './keys.js';
import { assertExec } from './org-repository.js';
import { parseEvent, type EventRecord } from './records.js';
import { joinSplitValues } from './split-values.js';
import { endpointLogIds } from './endpoint-log.js';
import { eventIdOfDelivery } from './derived-ids.js';

/** Filters and paging of {@link EventIndexRepository.list}. Times are epoch ms, both ends inclusive. */
export interface EventListQuery {
  limit: number;
  /** The last event id of the previous page. */
  cursor?: string;
  type?: string;
  idempotencyKey?: string;
  /** Only events fanned out to this endpoint (the caller checks that it is the org's). */
  endpointId?: string;
  sinceMs?: number;
  untilMs?: number;
}

/** Ids looked at per call at most: a filter that matches rarely returns a short page and a cursor. */
export const EVENT_SCAN_BUDGET = 1000;

const SCAN_BATCH = 200;

/**
 * The org's events, newest first (`GET /v1/events`), from the org's events index written with each
 * event by create-event.lua (a sorted set of event ids, lex = creation order); with `endpointId`,
 * from that endpoint's delivery log instead (its first deliveries, redeliveries skipped: one per
 * event, at the event's time), so no per-endpoint copy of the index is kept. `since`/`until` are id
 * ranges (an id starts with its creation time); `type` and `idempotencyKey` are checked on the
 * events themselves, looking at no more than {@link EVENT_SCAN_BUDGET} ids per call. Ids of events
 * removed by retention are dropped from the org's index as they are met.
 */
export class EventIndexRepository {
  constructor(private readonly redis: RedisClient, private readonly keys: KeySchema) {}

  /**
   * A page of events, newest first. `nextCursor` (an event id, or with `endpointId` a delivery id)
   * is null at the end; otherwise the page may hold fewer than `limit` events (the scan budget ran
   * out) and the next call goes on from it.
   */
  async list(orgId: string, q: EventListQuery): Promise<{ items: EventRecord[]; nextCursor: string | null }> {
    const byEndpoint = q.endpointId !== undefined;
    const key = this.keys.orgEvents(orgId);
    // By endpoint: its delivery log, every status (endpoint-log.ts); else the org's events index.
    const read = (from: string, to: string, limit: number) =>
      byEndpoint ? endpointLogIds(this.redis, this.keys, orgId, q.endpointId!, { order: 'desc', max: from, min: to, limit }) : this.redis.zrevrangebylex(key, from, to, 'LIMIT', 0, limit);
    const kind = byEndpoint ? 'dlv' : 'evt';
    // Bounds as ids: the smallest and largest id of an instant (zero and all-ones random part).
    const floor = q.sinceMs !== undefined ? `[${newId(kind, q.sinceMs, (n) => Buffer.alloc(n, 0))}` : '-';
    let max = q.untilMs !== undefined ? `[${newId(kind, q.untilMs, (n) => Buffer.alloc(n, 0xff))}` : '+';
    if (q.cursor && (max === '+' || `(${q.cursor}` < max)) max = `(${q.cursor}`;
    const items: EventRecord[] = [];
    let looked = 0;
    let lastLooked: string | null = null;
    while (looked < EVENT_SCAN_BUDGET) {
      const ids = await read(max, floor, Math.min(SCAN_BATCH, EVENT_SCAN_BUDGET - looked));
      if (ids.length === 0) return { items, nextCursor: null };
      const eventIds = byEndpoint ? await this.firstDeliveryEvents(orgId, ids) : ids;
      const pipeline = this.redis.pipeline();
      for (const id of eventIds) pipeline.hgetallBuffer(this.keys.event(orgId, id ?? ''));
      const events = assertExec(await pipeline.exec()).map(([, h], i) => parseEvent(joinSplitValues(h as Record<string, Buffer>), orgId, eventIds[i] ?? ''));
      const gone: string[] = [];
      for (let i = 0; i < ids.length; i++) {
        const id = ids[i]!;
        const event = eventIds[i] === null ? null : (events[i] ?? null);
        looked += 1;
        lastLooked = id;
        if (!event) {
          if (!byEndpoint) gone.push(id);
          continue;
        }
        if (event.orgId !== orgId) continue;
        if (q.type !== undefined && event.type !== q.type) continue;
        if (q.idempotencyKey !== undefined && event.idempotencyKey !== q.idempotencyKey) continue;
        items.push(event);
        if (items.length === q.limit) {
          if (gone.length > 0) await this.redis.zrem(key, ...gone);
          const more = await read(`(${id}`, floor, 1);
          return { items, nextCursor: more.length > 0 ? id : null };
        }
      }
      if (gone.length > 0) await this.redis.zrem(key, ...gone);
      if (ids.length < SCAN_BATCH && looked < EVENT_SCAN_BUDGET) return { items, nextCursor: null };
      max = `(${lastLooked}`;
    }
    return { items, nextCursor: lastLooked };
  }

  /** The event of each delivery, or null for a redelivery (its event is listed at its first delivery) or a missing one. */
  private async firstDeliveryEvents(orgId: string, deliveryIds: readonly string[]): Promise<(string | null)[]> {
    const pipeline = this.redis.pipeline();
    for (const id of deliveryIds) pipeline.hmget(this.keys.delivery(orgId, id), 'status', 'eventId', 'redeliveredFromId');
    return assertExec(await pipeline.exec()).map(([, v], i) => {
      const [status, storedEvent, redeliveredFromId] = v as [string | null, string | null, string | null];
      // Compact records may leave the event id out (derived from the delivery's: derived-ids.ts).
      const eventId = status ? eventIdOfDelivery(storedEvent, deliveryIds[i]!) : '';
      return eventId && !redeliveredFromId ? eventId : null;
    });
  }
}

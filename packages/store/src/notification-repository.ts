import type { RedisClient } from './redis-connection.js';
import { finishedExpiresAt, type Retention } from '@postern/shared';
import type { KeySchema } from './keys.js';
import { LuaScript } from './lua-script.js';
import { assertExec } from './org-repository.js';
import { parseNotification, toHashFields, type EndpointRecord, type NotificationRecord } from './records.js';
import { eventIdOfDelivery } from './derived-ids.js';

const tripBreakerScript = LuaScript.load('trip-breaker');
const settleOnTripScript = LuaScript.load('settle-on-trip');

/** Pending deliveries settled per script call when a breaker trips. */
const TRIP_SETTLE_BATCH = 200;

/** Input of {@link NotificationRepository.tripBreaker}. */
export interface TripInput {
  endpoint: Pick<EndpointRecord, 'id' | 'orgId' | 'url'>;
  status: 'paused' | 'disabled';
  reason: string;
  pendingOnTrip: 'cancel' | 'hold' | 'fail';
  /** The endpoint policy's retention, for the deliveries the trip ends. */
  retention: Retention;
  /** Only deleting and re-creating the endpoint brings it back (vestiarion). */
  recreateRequired?: boolean;
  consecutiveFailures: number;
  notificationId: string;
  nowMs: number;
}

/** Breaker trips and the notifications they leave for operators. */
export class NotificationRepository {
  constructor(private readonly redis: RedisClient, private readonly keys: KeySchema) {}

  /**
   * Trips the endpoint's breaker atomically: sets its status, settles its pending deliveries as
   * `pendingOnTrip` says (cancel: `cancelled`/`breaker_tripped`; fail: `failed`/`endpoint_inactive`;
   * hold: kept `pending` and held), and records one notification. Only an `active` endpoint
   * trips, so concurrent failures trip once. The trip itself is atomic, and bumps the org's
   * version in the same step (so ingest's lookup cache sees it at once); its pending deliveries are
   * settled right after it in bounded batches (one in flight meanwhile finds the endpoint inactive
   * at its next claim). Returns the notification, or null when it did not trip.
   */
  async tripBreaker(input: TripInput): Promise<NotificationRecord | null> {
    const notification: Omit<NotificationRecord, 'deliveriesAffected'> = {
      id: input.notificationId,
      orgId: input.endpoint.orgId,
      kind: input.status === 'paused' ? 'endpoint.paused' : 'endpoint.disabled',
      endpointId: input.endpoint.id,
      endpointUrl: input.endpoint.url,
      reason: input.reason,
      consecutiveFailures: input.consecutiveFailures,
      createdAt: input.nowMs,
    };
    const k = this.keys;
    const tripped = await tripBreakerScript.run(
      this.redis,
      [k.endpoint(input.endpoint.orgId, input.endpoint.id), k.orgNotifications(input.endpoint.orgId), k.notification(input.endpoint.orgId, notification.id), k.orgVersion(input.endpoint.orgId)],
      [input.nowMs, input.status, input.reason, notification.id, JSON.stringify(toHashFields(notification)), input.recreateRequired ? '1' : '0'],
    );
    if (tripped !== 1) return null;
    const deliveriesAffected = await this.settlePendingOnTrip(input.endpoint.orgId, input.endpoint.id, input.pendingOnTrip, input.nowMs, input.retention);
    await this.redis.hset(k.notification(input.endpoint.orgId, notification.id), 'deliveriesAffected', deliveriesAffected);
    return { ...notification, deliveriesAffected };
  }

  /**
   * Settles the pending deliveries of a tripped endpoint as its breaker says, in batches of
   * {@link TRIP_SETTLE_BATCH} (each one script call, every key passed in), so a long backlog never
   * blocks Redis. Returns how many were settled.
   */
  private async settlePendingOnTrip(orgId: string, endpointId: string, pendingOnTrip: TripInput['pendingOnTrip'], nowMs: number, retention: Retention): Promise<number> {
    const k = this.keys;
    const target = pendingOnTrip === 'cancel' ? 'cancelled' : pendingOnTrip === 'fail' ? 'failed' : 'pending';
    let settled = 0;
    let cursor = '-';
    for (;;) {
      const ids = await this.redis.zrangebylex(k.endpointDeliveriesByStatus(orgId, endpointId, 'pending'), cursor, '+', 'LIMIT', 0, TRIP_SETTLE_BATCH);
      if (ids.length === 0) break;
      // Each delivery's event, so the script passes it its keys (one pipeline, one slot).
      // Compact records may leave the event id out (derived from the delivery's: derived-ids.ts).
      const eventIds = await this.redis.pipeline(ids.map((id) => ['hmget', k.delivery(orgId, id), 'status', 'eventId'])).exec().then(assertExec);
      const eventOf = (i: number) => {
        const [status, stored] = (eventIds[i]?.[1] ?? [null, null]) as [string | null, string | null];
        return (status && eventIdOfDelivery(stored, ids[i]!)) || 'evt_missing';
      };
      settled += Number(
        await settleOnTripScript.run(
          this.redis,
          [
            k.endpointDeliveriesByStatus(orgId, endpointId, 'pending'),
            k.endpointDeliveriesByStatus(orgId, endpointId, target),
            k.endpointHeld(orgId, endpointId),
            k.endpointKeyLines(orgId, endpointId),
            ...ids.flatMap((id, i) => [k.delivery(orgId, id), k.deliveryAttempts(orgId, id), k.event(orgId, eventOf(i))]),
          ],
          [nowMs, pendingOnTrip, finishedExpiresAt(retention, nowMs), ...ids],
        ),
      );
      if (ids.length < TRIP_SETTLE_BATCH) break;
      cursor = `(${ids[ids.length - 1]}`;
    }
    return settled;
  }

  /** A page of the org's notifications, newest first; `cursor` is the last id of the previous page. */
  async list(orgId: string, opts: { limit: number; cursor?: string }): Promise<{ items: NotificationRecord[]; nextCursor: string | null }> {
    const max = opts.cursor ? `(${opts.cursor}` : '+';
    const ids = await this.redis.zrevrangebylex(this.keys.orgNotifications(orgId), max, '-', 'LIMIT', 0, opts.limit + 1);
    const page = ids.slice(0, opts.limit);
    if (page.length === 0) return { items: [], nextCursor: null };
    const pipeline = this.redis.pipeline();
    for (const id of page) pipeline.hgetall(this.keys.notification(orgId, id));
    const items = assertExec(await pipeline.exec())
      .map(([, h]) => parseNotification(h as Record<string, string>))
      .filter((n): n is NotificationRecord => n !== null);
    return { items, nextCursor: ids.length > opts.limit ? (page[page.length - 1] ?? null) : null };
  }
}

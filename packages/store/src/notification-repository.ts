import type { Redis } from 'ioredis';
import type { KeySchema } from './keys.js';
import { LuaScript } from './lua-script.js';
import { assertExec } from './org-repository.js';
import { parseNotification, toHashFields, type EndpointRecord, type NotificationRecord } from './records.js';

const tripBreakerScript = LuaScript.load('trip-breaker');

/** Input of {@link NotificationRepository.tripBreaker}. */
export interface TripInput {
  endpoint: Pick<EndpointRecord, 'id' | 'orgId' | 'url'>;
  status: 'paused' | 'disabled';
  reason: string;
  pendingOnTrip: 'cancel' | 'hold' | 'fail';
  /** Only deleting and re-creating the endpoint brings it back (vestiarion). */
  recreateRequired?: boolean;
  consecutiveFailures: number;
  notificationId: string;
  nowMs: number;
}

/** Breaker trips and the notifications they leave for operators. */
export class NotificationRepository {
  constructor(private readonly redis: Redis, private readonly keys: KeySchema) {}

  /**
   * Trips the endpoint's breaker atomically: sets its status, settles its pending deliveries as
   * `pendingOnTrip` says (cancel: `cancelled`/`breaker_tripped`; fail: `failed`/`endpoint_inactive`;
   * hold: kept `pending` and held), and records one notification. Only an `active` endpoint
   * trips, so concurrent failures trip once. Returns the notification, or null when it did not trip.
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
    const r = (await tripBreakerScript.run(
      this.redis,
      [this.keys.endpoint(input.endpoint.id), this.keys.unfinishedDeliveries(), this.keys.orgNotifications(input.endpoint.orgId), this.keys.notification(notification.id)],
      [this.keys.prefix, input.nowMs, input.status, input.reason, input.pendingOnTrip, notification.id, JSON.stringify(toHashFields(notification)), input.recreateRequired ? '1' : '0'],
    )) as [number, number?];
    if (r[0] !== 1) return null;
    const deliveriesAffected = Number(r[1] ?? 0);
    await this.redis.hset(this.keys.notification(notification.id), 'deliveriesAffected', deliveriesAffected);
    return { ...notification, deliveriesAffected };
  }

  /** A page of the org's notifications, newest first; `cursor` is the last id of the previous page. */
  async list(orgId: string, opts: { limit: number; cursor?: string }): Promise<{ items: NotificationRecord[]; nextCursor: string | null }> {
    const max = opts.cursor ? `(${opts.cursor}` : '+';
    const ids = await this.redis.zrevrangebylex(this.keys.orgNotifications(orgId), max, '-', 'LIMIT', 0, opts.limit + 1);
    const page = ids.slice(0, opts.limit);
    if (page.length === 0) return { items: [], nextCursor: null };
    const pipeline = this.redis.pipeline();
    for (const id of page) pipeline.hgetall(this.keys.notification(id));
    const items = assertExec(await pipeline.exec())
      .map(([, h]) => parseNotification(h as Record<string, string>))
      .filter((n): n is NotificationRecord => n !== null);
    return { items, nextCursor: ids.length > opts.limit ? (page[page.length - 1] ?? null) : null };
  }
}

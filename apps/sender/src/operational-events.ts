import { buildEnvelope, type IdFactory } from '@postern/shared';
import { deliveryJobs, newPendingDelivery, type DeliveryQueues, type DeliveryRecord, type EventRecord, type NotificationRecord, type Store } from '@postern/store';

/**
 * Sends a breaker trip to the org's operations URL(s) as a signed webhook (issue 4): an
 * `endpoint.paused` or `endpoint.disabled` event, delivered like any other, to each active endpoint
 * of the org that subscribes to that type by name (a `*` filter does not take operational events,
 * and the tripped endpoint never gets its own notice). Returns how many deliveries were queued.
 */
export async function announceTrip(
  deps: { store: Store; queues: DeliveryQueues; ids: IdFactory; clock: { now(): number } },
  notification: NotificationRecord,
): Promise<number> {
  const type = notification.kind;
  const targets = (await deps.store.endpoints.listAll(notification.orgId)).filter(
    (e) => e.status === 'active' && e.id !== notification.endpointId && e.eventTypes.includes(type),
  );
  if (targets.length === 0) return 0;
  const now = deps.clock.now();
  const eventId = deps.ids('evt', now);
  const dataJson = JSON.stringify({
    notificationId: notification.id,
    endpointId: notification.endpointId,
    endpointUrl: notification.endpointUrl,
    reason: notification.reason,
    consecutiveFailures: notification.consecutiveFailures,
    deliveriesAffected: notification.deliveriesAffected,
    at: new Date(notification.createdAt).toISOString(),
  });
  const deliveries: DeliveryRecord[] = targets.map((endpoint) =>
    newPendingDelivery({ id: deps.ids('dlv', now), orgId: notification.orgId, eventId, eventType: type, endpointId: endpoint.id, nowMs: now }),
  );
  const event: EventRecord = {
    id: eventId,
    orgId: notification.orgId,
    type,
    envelope: buildEnvelope({ id: eventId, type, timestampMs: now, dataJson }),
    createdAt: now,
    idempotencyKey: null,
    deliveryIds: deliveries.map((d) => d.id),
  };
  await deps.store.events.createWithDeliveries({ event, deliveries, idempotencyKeyHash: null, answer: '{}' });
  await deps.queues.forOrg(notification.orgId).addBulk(deliveryJobs(deliveries));
  return deliveries.length;
}

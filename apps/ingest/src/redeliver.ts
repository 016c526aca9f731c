import { deliveryJobs, newPendingDelivery, type DeliveryRecord, type EndpointRecord } from '@postern/store';
import { ApiError } from './api-error.js';
import type { AppDeps } from './app-deps.js';

/** Bulk redelivery takes at most this many deliveries per call (jitter-45h: 500). */
export const BULK_REDELIVERY_LIMIT = 500;

/**
 * A new delivery of the same event to the same endpoint: fresh id, attempt 1, fresh schedule,
 * `redeliveredFromId` pointing at the original, which is never changed (tourical).
 */
export function newRedelivery(deps: AppDeps, original: DeliveryRecord, nowMs: number): DeliveryRecord {
  return newPendingDelivery({ ...original, id: deps.ids('dlv', nowMs), nowMs, redeliveredFromId: original.id });
}

/**
 * Checks that the endpoint may receive redeliveries: its policy offers them (custral and vestiarion do
 * not: 409 `redelivery_not_offered`) and it is active (409 `endpoint_inactive`).
 */
export function assertRedeliverable(endpoint: EndpointRecord | null): asserts endpoint is EndpointRecord {
  if (!endpoint) throw new ApiError(409, 'endpoint_inactive', 'the endpoint was deleted');
  if (!endpoint.policy.redelivery.allowed) {
    throw new ApiError(409, 'redelivery_not_offered', "this endpoint's policy does not offer redelivery");
  }
  if (endpoint.status !== 'active') {
    throw new ApiError(409, 'endpoint_inactive', `the endpoint is ${endpoint.status}; resume it first`);
  }
}

/**
 * Writes redeliveries, then queues them; resolves once both are in Redis. `unwritten` runs when the
 * write failed (nothing was written) before the error is passed on; a failure to queue them after
 * the write leaves them to the reconciler.
 */
export async function queueRedeliveries(deps: AppDeps, endpoint: EndpointRecord, deliveries: DeliveryRecord[], unwritten?: () => Promise<void>): Promise<void> {
  try {
    await deps.store.deliveries.createMany(deliveries);
  } catch (err) {
    await unwritten?.();
    throw err;
  }
  await deps.queues.forOrg(endpoint.orgId).addBulk(deliveryJobs(deliveries));
}

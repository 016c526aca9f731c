import { deliveryJobOptions, type DeliveryRecord, type EndpointRecord } from '@postern/store';
import { ApiError } from './api-error.js';
import type { AppDeps } from './app-deps.js';

/** Bulk redelivery takes at most this many deliveries per call (seed 001: 500). */
export const BULK_REDELIVERY_LIMIT = 500;

/**
 * A new delivery of the same event to the same endpoint: fresh id, attempt 1, fresh schedule,
 * `redeliveredFromId` pointing at the original, which is never changed (seed 002).
 */
export function newRedelivery(deps: AppDeps, original: DeliveryRecord, nowMs: number): DeliveryRecord {
  return {
    ...original,
    id: deps.ids('dlv', nowMs),
    status: 'pending',
    attempts: 0,
    nextAttemptAt: nowMs,
    lastResponseStatus: null,
    lastError: null,
    lastDurationMs: null,
    deliveredAt: null,
    createdAt: nowMs,
    updatedAt: nowMs,
    finishedAt: null,
    redeliveredFromId: original.id,
    cancelReason: null,
    held: false,
  };
}

/**
 * Checks that the endpoint may receive redeliveries: its policy offers them (seeds 000 and 004 do
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

/** Writes redeliveries, then queues them; resolves once both are in Redis. */
export async function queueRedeliveries(deps: AppDeps, endpoint: EndpointRecord, deliveries: DeliveryRecord[], bulk: boolean): Promise<void> {
  await deps.store.deliveries.createMany(deliveries, bulk);
  await deps.queue.addBulk(
    deliveries.map((d) => ({ name: 'deliver', data: { v: 1 as const, deliveryId: d.id }, opts: deliveryJobOptions(d.id, endpoint.policy.maxAttempts) })),
  );
}

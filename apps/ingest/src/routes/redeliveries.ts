import { Router } from 'express';
import { z } from 'zod';
import type { DeliveryRecord, EndpointRecord } from '@postern/store';
import { ApiError, invalidRequest, notFound } from '../api-error.js';
import type { AppDeps } from '../app-deps.js';
import { assertRedeliverable, BULK_REDELIVERY_LIMIT, newRedelivery, queueRedeliveries } from '../redeliver.js';
import { deliveryJson } from '../serializers.js';
import { requiredOr } from '../schemas.js';
import { ownEndpoint } from './endpoints.js';
import { requireScope } from '../auth.js';
import { requireEmptyBody } from '../empty-body.js';
import { actionIdempotency } from '../action-idempotency.js';
import { recordAudit } from '../audit.js';
import { bulkRedeliveryResponse, deliveryActionResponse, type Json } from '../response-schemas.js';

/** `POST /v1/endpoints/:id/recover` body. */
export const recoverBody = z.strictObject({
  since: z.iso.datetime({ offset: true, error: requiredOr('since', 'since must be an ISO 8601 date-time, e.g. 2026-11-29T12:00:00Z') }),
});

/**
 * Redelivers those of a bulk call's `candidates` that this call takes (a racing call takes each
 * at most once between them: `takeForBulkRedelivery`); gives them back when their redeliveries
 * could not be written, so the call can be made again. Returns how many it redelivered.
 */
async function redeliverTaken(deps: AppDeps, endpoint: EndpointRecord, candidates: readonly DeliveryRecord[]): Promise<number> {
  const taken = await deps.store.deliveries.takeForBulkRedelivery(endpoint.orgId, endpoint.id, candidates.map((d) => d.id));
  const mine = candidates.filter((d) => taken.has(d.id));
  const now = deps.clock.now();
  // Once written, a failure to queue them leaves them to the reconciler, never to a second bulk call.
  await queueRedeliveries(
    deps,
    endpoint,
    mine.map((d) => newRedelivery(deps, d, now)),
    () => deps.store.deliveries.releaseBulkRedelivery(endpoint.orgId, endpoint.id, [...taken]).catch(() => undefined),
  );
  return mine.length;
}

/** Redeliver one, redeliver every failed, recover since a time; each takes `Idempotency-Key`. Behind API-key auth. */
export function redeliveryRoutes(deps: AppDeps): Router {
  const router = Router();

  router.post('/v1/deliveries/:id/redeliver', requireScope('webhooks:write'), requireEmptyBody, actionIdempotency(deps, 'redeliver'), async (req, res) => {
    const original = await deps.store.deliveries.get(res.locals.orgId as string, req.params.id);
    if (!original || original.orgId !== res.locals.orgId) throw notFound('delivery');
    const endpoint = await deps.store.endpoints.get(original.orgId, original.endpointId);
    assertRedeliverable(endpoint);
    if (original.dataErased) throw new ApiError(409, 'data_erased', "this delivery's event payload was erased; there is nothing left to send");
    if (original.status === 'in_flight') throw new ApiError(409, 'in_flight', 'the delivery is being attempted right now; try again when it has finished');
    if (original.status === 'pending' && !endpoint.policy.redelivery.whilePending) {
      throw new ApiError(409, 'delivery_pending', 'the delivery is still queued; its own attempts are not over');
    }
    const redelivery = newRedelivery(deps, original, deps.clock.now());
    await queueRedeliveries(deps, endpoint, [redelivery]);
    await recordAudit(deps, req, res, { action: 'delivery.redelivered', target: { type: 'delivery', id: original.id } });
    res.status(202).json({ delivery: deliveryJson(redelivery) } satisfies Json<typeof deliveryActionResponse>);
  });

  router.post('/v1/endpoints/:id/redeliver-failed', requireScope('webhooks:write'), requireEmptyBody, actionIdempotency(deps, 'redeliver-failed'), async (req, res) => {
    const endpoint = await ownEndpoint(deps, res, req.params.id);
    assertRedeliverable(endpoint);
    const { items, total } = await deps.store.deliveries.listRedeliverable(endpoint.orgId, endpoint.id, { limit: BULK_REDELIVERY_LIMIT });
    const count = await redeliverTaken(deps, endpoint, items);
    await recordAudit(deps, req, res, { action: 'endpoint.failed_redelivered', target: { type: 'endpoint', id: endpoint.id } });
    res.status(202).json({ count, remaining: total - items.length } satisfies Json<typeof bulkRedeliveryResponse>);
  });

  router.post('/v1/endpoints/:id/recover', requireScope('webhooks:write'), actionIdempotency(deps, 'recover'), async (req, res) => {
    const endpoint = await ownEndpoint(deps, res, req.params.id);
    const body = recoverBody.safeParse(req.body ?? {});
    if (!body.success) throw invalidRequest(body.error);
    assertRedeliverable(endpoint);
    const sinceMs = Date.parse(body.data.since);
    const { items, total } = await deps.store.deliveries.listRedeliverable(endpoint.orgId, endpoint.id, { limit: BULK_REDELIVERY_LIMIT, sinceMs });
    const count = await redeliverTaken(deps, endpoint, items);
    await recordAudit(deps, req, res, { action: 'endpoint.recovered', target: { type: 'endpoint', id: endpoint.id } });
    res.status(202).json({ count, remaining: total - items.length } satisfies Json<typeof bulkRedeliveryResponse>);
  });

  return router;
}

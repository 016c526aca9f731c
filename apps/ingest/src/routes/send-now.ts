import { isWaitingForNextAttempt } from '@postern/store';
import { Router } from 'express';
import { ApiError, notFound } from '../api-error.js';
import type { AppDeps } from '../app-deps.js';
import { requireScope } from '../auth.js';
import { requireEmptyBody } from '../empty-body.js';
import { recordAudit } from '../audit.js';
import { deliveryJson } from '../serializers.js';
import { deliveryActionResponse, type Json } from '../response-schemas.js';

const FINAL = new Set(['succeeded', 'failed', 'cancelled']);

/**
 * `POST /v1/deliveries/:id/send-now`: a delivery waiting out the delay before its next attempt gets
 * that attempt now. Its queue job (job id = delivery id) is promoted from `delayed`; the attempt is
 * the next one by number, so the schedule after it is the policy's as if it had come on time.
 * 409 for a delivery that is not waiting: `in_flight`, `delivery_finished`, `delivery_held`
 * (endpoint inactive), `endpoint_inactive` (endpoint deleted), `not_waiting` (first attempt still queued, or waiting for a concurrency slot,
 * a rate-limit turn or the end of an adaptive Retry-After pause).
 */
export function sendNowRoutes(deps: AppDeps): Router {
  const router = Router();
  router.post('/v1/deliveries/:id/send-now', requireScope('webhooks:write'), requireEmptyBody, async (req, res) => {
    const delivery = await deps.store.deliveries.get(res.locals.orgId as string, req.params.id);
    if (!delivery || delivery.orgId !== res.locals.orgId) throw notFound('delivery');
    if (delivery.status === 'in_flight') throw new ApiError(409, 'in_flight', 'the delivery is being attempted right now');
    if (FINAL.has(delivery.status)) throw new ApiError(409, 'delivery_finished', `the delivery has ${delivery.status}; redeliver it instead`);
    if (delivery.held) throw new ApiError(409, 'delivery_held', 'the delivery is held while its endpoint is inactive; resume the endpoint instead');
    // A deleted endpoint's deliveries end at their next claim (`endpoint_deleted`): nothing to send now.
    if (!(await deps.store.endpoints.get(delivery.orgId, delivery.endpointId))) throw new ApiError(409, 'endpoint_inactive', 'the endpoint was deleted; its deliveries end cancelled (endpoint_deleted)');
    const notWaiting = () => new ApiError(409, 'not_waiting', 'the delivery is not waiting for a retry (its first attempt is queued, or it waits for a concurrency slot, its turn under the rate limit or the end of its endpoint\'s Retry-After pause)');
    if (!isWaitingForNextAttempt(delivery)) throw notWaiting();
    const job = await deps.queues.forOrg(delivery.orgId).getJob(delivery.id);
    if (!job || (await job.getState()) !== 'delayed') throw notWaiting();
    // The claim starts no attempt before the delivery's own next attempt time: bring it forward first.
    const now = deps.clock.now();
    if (!(await deps.store.deliveries.makeDueNow(delivery.orgId, delivery.id, delivery.nextAttemptAt!, now))) throw notWaiting();
    // BullMQ refuses to promote a job that left `delayed` since: the delivery is no longer waiting.
    await job.promote().catch(() => {
      throw notWaiting();
    });
    await recordAudit(deps, req, res, { action: 'delivery.sent_now', target: { type: 'delivery', id: delivery.id }, changes: ['nextAttemptAt'] });
    // As it is now: its next attempt due at once.
    res.status(202).json({ delivery: deliveryJson({ ...delivery, nextAttemptAt: now }) } satisfies Json<typeof deliveryActionResponse>);
  });
  return router;
}

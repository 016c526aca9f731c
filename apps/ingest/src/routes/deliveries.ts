import { Router } from 'express';
import type { DeliveryStatus } from '@postern/store';
import { notFound } from '../api-error.js';
import type { AppDeps } from '../app-deps.js';
import { ownEndpoint } from './endpoints.js';
import { deliveryListQuery, parseListQuery } from '../schemas.js';
import { attemptJson, deliveryJson } from '../serializers.js';
import { requireScope } from '../auth.js';
import { deliveryWithAttemptsResponse, type Json } from '../response-schemas.js';

/** The delivery log: per endpoint (newest first) and one delivery with its attempts. */
export function deliveryRoutes(deps: AppDeps): Router {
  const router = Router();

  router.get('/v1/endpoints/:id/deliveries', requireScope('webhooks:read'), async (req, res) => {
    const endpoint = await ownEndpoint(deps, res, req.params.id);
    const q = parseListQuery(deliveryListQuery, req.query, 'dlv');
    const page = await deps.store.deliveries.listByEndpoint(endpoint.orgId, endpoint.id, {
      status: q.status as DeliveryStatus | undefined,
      limit: q.limit,
      cursor: q.cursor,
    });
    res.json({ data: page.items.map(deliveryJson), nextCursor: page.nextCursor });
  });

  router.get('/v1/deliveries/:id', requireScope('webhooks:read'), async (req, res) => {
    const delivery = await deps.store.deliveries.get(res.locals.orgId as string, req.params.id);
    if (!delivery || delivery.orgId !== res.locals.orgId) throw notFound('delivery');
    const attempts = await deps.store.deliveries.getAttempts(delivery.orgId, delivery.id, delivery.eventId);
    // docs/architecture.md: the detail view's `attempts` is the list; the count is `attemptCount`, as in lists.
    // A body frozen by the org's pre-attempt check (issue 16) is what this delivery sends instead of the event's envelope.
    const frozen = delivery.frozenEnvelope !== undefined ? { frozenEnvelope: delivery.frozenEnvelope } : {};
    res.json({ ...deliveryJson(delivery), ...frozen, attempts: attempts.map(attemptJson) } satisfies Json<typeof deliveryWithAttemptsResponse>);
  });

  return router;
}

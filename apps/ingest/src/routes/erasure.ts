import { createHash } from 'node:crypto';
import { finishedExpiresAt, type Retention } from '@postern/shared';
import type { DeliveryRecord } from '@postern/store';
import { Router, type Request, type Response } from 'express';
import { z } from 'zod';
import { ApiError, invalidRequest, notFound } from '../api-error.js';
import type { AppDeps } from '../app-deps.js';
import { requireScope } from '../auth.js';
import { recordAudit } from '../audit.js';
import { iso } from '../serializers.js';
import type { eventErasureResponse, eventErasuresResponse, Json } from '../response-schemas.js';

/** What a delivery of a deleted endpoint is kept for once finished (the sender uses the same). */
const DELETED_ENDPOINT_RETENTION: Retention = { days: 30 };

/** `DELETE /v1/events/data` query: the producer's idempotency key (1..200 characters). */
export const eraseByKeyQuery = z.strictObject({
  idempotencyKey: z.string({ error: (issue) => (issue.input === undefined ? 'idempotencyKey is required: DELETE /v1/events/data?idempotencyKey=<key>' : 'idempotencyKey must be given once') }).min(1, 'idempotencyKey must be 1 to 200 characters').max(200, 'idempotencyKey must be 1 to 200 characters'),
});

/**
 * Erases one event of the caller's org and records it in the audit log. 404 when absent or
 * another org's; 409 `in_flight` while one of its deliveries is being attempted.
 */
async function eraseEvent(deps: AppDeps, req: Request, res: Response, eventId: string): Promise<Json<typeof eventErasureResponse>> {
  const orgId = res.locals.orgId as string;
  const now = deps.clock.now();
  const retention = new Map<string, Retention>();
  const endpointIds = new Set<string>();
  // Each endpoint's retention decides how long its cancelled deliveries are kept, as a finish would.
  const expiresAt = (d: DeliveryRecord) => finishedExpiresAt(retention.get(d.endpointId) ?? DELETED_ENDPOINT_RETENTION, now);
  const event = await deps.store.events.get(orgId, eventId);
  if (!event) throw notFound('event');
  const all = await deps.store.deliveries.getMany(orgId, [...event.deliveryIds, ...(await deps.store.deliveries.redeliveryIds(orgId, eventId))]);
  for (const d of all) endpointIds.add(d.endpointId);
  for (const id of endpointIds) {
    const endpoint = await deps.store.endpoints.get(orgId, id);
    if (endpoint) retention.set(id, endpoint.policy.retention);
  }
  const r = await deps.store.events.eraseData(orgId, eventId, now, expiresAt);
  if (r.kind === 'missing') throw notFound('event');
  if (r.kind === 'in_flight') {
    res.setHeader('retry-after', '1');
    throw new ApiError(409, 'in_flight', `delivery ${r.deliveryId} of this event is being attempted right now; nothing was erased: try again when it has finished`);
  }
  if (r.woken.length > 0) await deps.queues.wake(orgId, r.woken);
  const first = r.erasedAt === now;
  if (first || r.cancelled > 0) {
    await recordAudit(deps, req, res, { action: 'event.data_erased', target: { type: 'event', id: eventId }, changes: ['data', ...(r.cancelled > 0 ? ['deliveries.status'] : [])] });
  }
  return { eventId, dataErased: true, dataErasedAt: iso(r.erasedAt), cancelledDeliveries: r.cancelled };
}

/**
 * Event ids of the org accepted under an idempotency key: the one its stored answer names (kept
 * 24 h), and any the org's event index holds with that key (a key reused after 24 h made another).
 */
async function eventsByIdempotencyKey(deps: AppDeps, orgId: string, key: string): Promise<string[]> {
  const ids = new Set<string>();
  const answer = await deps.store.events.storedAnswer(orgId, createHash('sha256').update(key).digest('hex'));
  if (answer) ids.add(answer);
  let cursor: string | undefined;
  do {
    const page = await deps.store.eventIndex.list(orgId, { limit: 100, cursor, idempotencyKey: key });
    for (const e of page.items) ids.add(e.id);
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return [...ids].sort();
}

/**
 * Erasure of event payloads (docs/erasure-and-export.md), `webhooks:write`:
 * - `DELETE /v1/events/:id/data` → 200 the erasure; 404 unknown event; 409 `in_flight`;
 * - `DELETE /v1/events/data?idempotencyKey=…` → 200 `{data: [erasure…]}`, every event of the org
 *   accepted under that key (404 when there is none).
 * Erasing again is harmless: the answer names the first erasure's time.
 */
export function erasureRoutes(deps: AppDeps): Router {
  const router = Router();

  router.delete('/v1/events/data', requireScope('webhooks:write'), async (req, res) => {
    const q = eraseByKeyQuery.safeParse(req.query);
    if (!q.success) throw invalidRequest(q.error, '', 'query');
    const ids = await eventsByIdempotencyKey(deps, res.locals.orgId as string, q.data.idempotencyKey);
    if (ids.length === 0) throw new ApiError(404, 'not_found', 'no event of your org was accepted under this idempotency key');
    const data: Json<typeof eventErasureResponse>[] = [];
    for (const id of ids) data.push(await eraseEvent(deps, req, res, id));
    res.json({ data } satisfies Json<typeof eventErasuresResponse>);
  });

  router.delete('/v1/events/:id/data', requireScope('webhooks:write'), async (req, res) => {
    res.json(await eraseEvent(deps, req, res, req.params.id));
  });

  return router;
}

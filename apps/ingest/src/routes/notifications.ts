import { Router } from 'express';
import { invalidRequest } from '../api-error.js';
import type { AppDeps } from '../app-deps.js';
import { pageQuery } from '../schemas.js';
import { iso } from '../serializers.js';
import { requireScope } from '../auth.js';

/** `GET /v1/notifications`: endpoints paused or disabled by their breaker, newest first. */
export function notificationRoutes(deps: AppDeps): Router {
  const router = Router();
  router.get('/v1/notifications', requireScope('webhooks:read'), async (req, res) => {
    const q = pageQuery.safeParse(req.query);
    if (!q.success) throw invalidRequest(q.error);
    const page = await deps.store.notifications.list(res.locals.orgId as string, q.data);
    res.json({
      data: page.items.map((n) => ({
        id: n.id,
        kind: n.kind,
        endpointId: n.endpointId,
        endpointUrl: n.endpointUrl,
        reason: n.reason,
        consecutiveFailures: n.consecutiveFailures,
        deliveriesAffected: n.deliveriesAffected,
        createdAt: iso(n.createdAt),
      })),
      nextCursor: page.nextCursor,
    });
  });
  return router;
}

import { Router } from 'express';
import type { AppDeps } from '../app-deps.js';
import { pageQuery, parseListQuery } from '../schemas.js';
import { notificationJson } from '../serializers.js';
import { requireScope } from '../auth.js';

/** `GET /v1/notifications`: endpoints paused or disabled by their breaker, newest first. */
export function notificationRoutes(deps: AppDeps): Router {
  const router = Router();
  router.get('/v1/notifications', requireScope('webhooks:read'), async (req, res) => {
    const page = await deps.store.notifications.list(res.locals.orgId as string, parseListQuery(pageQuery, req.query, 'ntf'));
    res.json({
      data: page.items.map(notificationJson),
      nextCursor: page.nextCursor,
    });
  });
  return router;
}

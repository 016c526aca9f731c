import { Router } from 'express';
import { z } from 'zod';
import { invalidRequest } from '../api-error.js';
import type { AppDeps } from '../app-deps.js';
import { requireScope } from '../auth.js';
import { iso } from '../serializers.js';
import { ownEndpoint } from './endpoints.js';
import { statsResponse, type Json } from '../response-schemas.js';

/** `GET /v1/stats` query: `window` `hour` (default) or `day`; `endpointId` for one endpoint, else the whole org. */
export const statsQuery = z
  .object({
    window: z.enum(['hour', 'day'], { error: 'window must be hour or day' }).default('hour'),
    endpointId: z.string().regex(/^ep_[0-9A-Za-z]+$/, 'endpointId must be an endpoint id (ep_…)').optional(),
  })
  .strict();

/**
 * `GET /v1/stats`: attempts finished per minute (last hour) or per hour (last 24 h), successes,
 * failures and failures by error code, for the org or one endpoint — from counters the sender keeps
 * as attempts finish, never from the delivery log.
 */
export function statsRoutes(deps: AppDeps): Router {
  const router = Router();
  router.get('/v1/stats', requireScope('webhooks:read'), async (req, res) => {
    const q = statsQuery.safeParse(req.query);
    if (!q.success) throw invalidRequest(q.error, '', 'query');
    const orgId = res.locals.orgId as string;
    if (q.data.endpointId !== undefined) await ownEndpoint(deps, res, q.data.endpointId);
    const now = deps.clock.now();
    const series = q.data.endpointId !== undefined ? await deps.store.stats.read(orgId, 'endpoint', q.data.endpointId, q.data.window, now) : await deps.store.stats.read(orgId, 'org', orgId, q.data.window, now);
    const succeeded = series.buckets.reduce((n, b) => n + b.succeeded, 0);
    const failed = series.buckets.reduce((n, b) => n + b.failed, 0);
    res.json({
      scope: q.data.endpointId !== undefined ? { endpointId: q.data.endpointId } : { orgId },
      window: series.window,
      bucketMs: series.bucketMs,
      totals: { attempts: succeeded + failed, succeeded, failed, successRate: succeeded + failed === 0 ? null : succeeded / (succeeded + failed) },
      buckets: series.buckets.map((b) => ({ startAt: iso(b.startMs), attempts: b.succeeded + b.failed, succeeded: b.succeeded, failed: b.failed })),
      errors: series.errors,
    } satisfies Json<typeof statsResponse>);
  });
  return router;
}

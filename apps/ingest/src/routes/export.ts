import { once } from 'node:events';
import { DELIVERY_STATUSES, type DeliveryStatus } from '@postern/store';
import { Router, type Response } from 'express';
import { z } from 'zod';
import { invalidRequest, notFound } from '../api-error.js';
import type { AppDeps } from '../app-deps.js';
import { requireScope } from '../auth.js';
import { requestLogger } from '../request-logging.js';
import { attemptJson, deliveryJson } from '../serializers.js';

const isoTime = (name: string) => z.iso.datetime({ offset: true, error: `${name} must be an ISO 8601 date-time, e.g. 2026-11-29T12:00:00Z` });

/**
 * `GET /v1/deliveries/export` query: `endpointId` (one endpoint of the org, or a deleted one whose
 * log is still kept; default every endpoint, deleted ones included), `status`, `since`/`until` (the
 * deliveries' creation time, ISO 8601, inclusive; `since` after `until` is refused).
 */
export const deliveryExportQuery = z
  .strictObject({
    endpointId: z.string().regex(/^ep_[0-9A-Za-z]+$/, 'endpointId must be an endpoint id (ep_…)').optional(),
    status: z.enum(DELIVERY_STATUSES as [string, ...string[]], { error: `status must be one of ${DELIVERY_STATUSES.join(', ')}` }).optional(),
    since: isoTime('since').optional(),
    until: isoTime('until').optional(),
  })
  .refine((q) => q.since === undefined || q.until === undefined || Date.parse(q.since) <= Date.parse(q.until), { message: 'since must not be after until', path: ['since'] });

/** Deliveries read from Redis per page: one pipeline of two reads each, then written out. */
export const EXPORT_PAGE_SIZE = 100;

/** Resolves once `res` can take more (`drain`), or it closed; false when it closed. */
async function writable(res: Response): Promise<boolean> {
  if (res.destroyed || res.writableEnded) return false;
  if (!res.writableNeedDrain) return true;
  const closed = once(res, 'close').then(() => false);
  const drained = once(res, 'drain').then(() => true);
  return Promise.race([closed, drained]);
}

/**
 * `GET /v1/deliveries/export` (`webhooks:read`): the org's delivery log as NDJSON
 * (`application/x-ndjson`), one delivery per line as `GET /v1/deliveries/:id` shows it with its
 * `attempts` (no payload, no secrets; a frozen body is left out), endpoint by endpoint (in id
 * order), oldest first. Streamed page by page ({@link EXPORT_PAGE_SIZE}) and never faster than the
 * client reads: the next page is read from Redis only once the last one was taken by the socket,
 * so memory stays flat whatever the log's size. A client that goes away stops the export. A
 * failure once lines were sent ends the response abruptly (no final chunk), so a client never
 * takes a cut-short export for a whole one; the cause is logged.
 */
export function exportRoutes(deps: AppDeps): Router {
  const router = Router();
  router.get('/v1/deliveries/export', requireScope('webhooks:read'), async (req, res) => {
    const q = deliveryExportQuery.safeParse(req.query);
    if (!q.success) throw invalidRequest(q.error, '', 'query');
    const orgId = res.locals.orgId as string;
    const { endpointId, status, since, until } = q.data;
    let endpointIds: string[];
    if (endpointId !== undefined) {
      // A deleted endpoint's deliveries stay in the log until they expire: they export like any.
      const live = await deps.store.endpoints.get(orgId, endpointId);
      const exists = live !== null ? live.orgId === orgId : await deps.store.endpoints.isDeleted(orgId, endpointId);
      if (!exists) throw notFound('endpoint');
      endpointIds = [endpointId];
    } else {
      const [live, deleted] = await Promise.all([deps.redis.zrange(deps.store.keys.orgEndpoints(orgId), 0, -1), deps.redis.zrange(deps.store.keys.deletedEndpoints(orgId), 0, -1)]);
      endpointIds = [...new Set([...live, ...deleted])].sort();
    }
    const pages = deps.store.deliveries.pagesOfLog(orgId, endpointIds, {
      status: status as DeliveryStatus | undefined,
      // Nothing was created before 1970: an earlier `since` means from the start.
      sinceMs: since === undefined ? undefined : Math.max(0, Date.parse(since)),
      untilMs: until === undefined ? undefined : Date.parse(until),
      pageSize: EXPORT_PAGE_SIZE,
    });
    res.status(200).type('application/x-ndjson');
    res.flushHeaders();
    try {
      for await (const page of pages) {
        let chunk = '';
        for (const { delivery, attempts } of page) chunk += `${JSON.stringify({ ...deliveryJson(delivery), attempts: attempts.map(attemptJson) })}\n`;
        // Let go of the page before waiting on the client: only the written bytes are held meanwhile.
        page.length = 0;
        if (chunk !== '') res.write(chunk);
        if (!(await writable(res))) return;
      }
      res.end();
    } catch (err) {
      requestLogger(req, deps.logger).error({ err, path: req.path }, 'export failed');
      res.destroy();
    }
  });
  return router;
}

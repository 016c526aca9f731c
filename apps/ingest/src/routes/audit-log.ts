import { AUDIT_ACTIONS, type AuditAction } from '@postern/shared';
import { isAuditCursor, type StoredAuditEntry } from '@postern/store';
import { Router, type Request } from 'express';
import { z } from 'zod';
import { ApiError, invalidRequest } from '../api-error.js';
import { pageQuery } from '../schemas.js';
import type { AppDeps } from '../app-deps.js';
import { requireAdmin, requireApiKeyCredential, requireScope } from '../auth.js';
import { iso } from '../serializers.js';
import type { auditEntryResponse, Json } from '../response-schemas.js';

const isoTime = (name: string) => z.iso.datetime({ offset: true, error: `${name} must be an ISO 8601 date-time, e.g. 2026-11-29T12:00:00Z` });
const LIMIT = 'limit must be an integer from 1 to 100';

/**
 * `GET /v1/audit-log` query: `action` (one of the actions), `target` (the id of what was changed),
 * `actor` (the id of who changed it: `key_…`, `pfk_…`, `ps_…` or `admin`), `since`/`until` (ISO
 * 8601, inclusive; `since` after `until` is refused), `limit` 1..100 (default 50) and `cursor`
 * (the previous page's `nextCursor`).
 */
export const auditLogQuery = z
  .strictObject({
    limit: pageQuery.shape.limit,
    cursor: z.string().refine(isAuditCursor, 'cursor must be the nextCursor of a previous page').optional(),
    action: z.enum(AUDIT_ACTIONS, { error: `action must be one of ${AUDIT_ACTIONS.join(', ')}` }).optional(),
    target: z.string().regex(/^[a-z]+_[0-9A-Za-z]+$/, 'target must be an id, e.g. ep_…').optional(),
    actor: z.string().regex(/^([a-z]+_[0-9A-Za-z]+|admin)$/, 'actor must be a key, platform key or portal session id, or admin').optional(),
    since: isoTime('since').optional(),
    until: isoTime('until').optional(),
  })
  .refine((q) => q.since === undefined || q.until === undefined || Date.parse(q.since) <= Date.parse(q.until), { message: 'since must not be after until', path: ['since'] });

/** An entry as the API shows it: `at` as ISO 8601, the stream cursor left out (it is the page's `nextCursor`). */
export function auditEntryJson(e: StoredAuditEntry): Json<typeof auditEntryResponse> {
  return { id: e.id, at: iso(e.at), actor: e.actor, action: e.action, target: e.target, changes: e.changes, requestId: e.requestId };
}

function parseQuery(req: Request) {
  const raw = req.query as Record<string, unknown>;
  // Plain decimal digits only, as every list's `limit` (`1e1` or `0x10` are mistakes).
  if (raw.limit !== undefined && !(typeof raw.limit === 'string' && /^[0-9]+$/.test(raw.limit))) throw new ApiError(400, 'invalid_request', `limit: ${LIMIT}`);
  const q = auditLogQuery.safeParse(raw);
  if (!q.success) throw invalidRequest(q.error, '', 'query');
  const { limit, cursor, action, target, actor, since, until } = q.data;
  return {
    limit,
    cursor,
    action: action as AuditAction | undefined,
    targetId: target,
    actorId: actor,
    sinceMs: since === undefined ? undefined : Date.parse(since),
    untilMs: until === undefined ? undefined : Date.parse(until),
  };
}

/**
 * The audit log (docs/audit-log.md), newest first, filtered:
 * - `GET /v1/audit-log` — the calling org's changes (API or platform key with `webhooks:read`;
 *   a portal session gets 403 `api_key_required`: the log names the org's keys and people);
 * - `GET /v1/platform-audit-log` — the instance's own (platform keys created and revoked), admin token.
 * A page may be short when filters match sparsely: follow `nextCursor` until null.
 */
export function auditLogRoutes(deps: AppDeps): { org: Router; platform: Router } {
  const org = Router();
  org.get('/v1/audit-log', requireApiKeyCredential, requireScope('webhooks:read'), async (req, res) => {
    const page = await deps.store.auditLog.list(res.locals.orgId as string, parseQuery(req), deps.clock.now());
    res.json({ data: page.items.map(auditEntryJson), nextCursor: page.nextCursor });
  });
  const platform = Router();
  platform.get('/v1/platform-audit-log', requireAdmin(deps.config.adminToken), async (req, res) => {
    const page = await deps.store.auditLog.listPlatform(parseQuery(req), deps.clock.now());
    res.json({ data: page.items.map(auditEntryJson), nextCursor: page.nextCursor });
  });
  return { org, platform };
}

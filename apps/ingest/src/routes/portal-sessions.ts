import type { Request } from 'express';
import { Router } from 'express';
import type { PlatformKeyRecord, PortalSessionRecord } from '@postern/store';
import { ApiError, invalidRequest, notFound } from '../api-error.js';
import type { AppDeps } from '../app-deps.js';
import { mintPortalToken, requirePlatformAuthority } from '../auth.js';
import { jsonBody } from '../json-body.js';
import { iso } from '../serializers.js';
import { createPortalSessionBody } from '../schemas.js';
import { recordAudit } from '../audit.js';

/** Path of the dashboard page a portal session opens; the token follows in the fragment. */
export const PORTAL_PATH = '/dashboard/portal';

/** A session as the platform sees it: never the token (shown once, at creation) nor its hash. */
function sessionJson(session: PortalSessionRecord) {
  return {
    id: session.id,
    orgId: session.orgId,
    scopes: session.scopes,
    mode: session.mode,
    createdAt: iso(session.createdAt),
    expiresAt: iso(session.expiresAt),
    revokedAt: iso(session.revokedAt),
  };
}

/**
 * The origin the portal URL starts with: `PUBLIC_URL` when set, else the origin this request was
 * made to (`Host`; the caller holds the admin token, so it is the one naming it).
 */
function publicOrigin(deps: AppDeps, req: Request): string {
  return deps.config.publicUrl ?? `${req.protocol}://${req.get('host') ?? 'localhost'}`;
}

/**
 * The customer portal's sessions (issue 15), for a platform acting for one of its orgs:
 *
 * - `POST /v1/orgs/:id/portal-sessions` `{ttlSeconds?, scopes?, mode?}` → 201 `{id, orgId, scopes, mode,
 *   createdAt, expiresAt, revokedAt, token, url}`: `token` (`pst_…`, shown once, stored as its
 *   SHA-256) is a bearer credential of that org within `scopes` until `expiresAt`; `url` opens the
 *   dashboard signed in with it, the token in the URL's fragment (never sent to a server, so never
 *   in an access log).
 * - `GET /v1/orgs/:id/portal-sessions/:sessionId` → the session (a day past its expiry at most).
 * - `DELETE /v1/orgs/:id/portal-sessions/:sessionId` → the session revoked; its token is refused
 *   (401 `session_revoked`) from the next request on.
 *
 * Admin token (the platform key plugs in at {@link requirePlatformAuthority}); checked before the
 * body is read. Unknown org or session → 404.
 */
export function portalSessionRoutes(deps: AppDeps): Router {
  const router = Router();
  const authority = requirePlatformAuthority(deps);

  router.post('/v1/orgs/:id/portal-sessions', authority, ...jsonBody(deps.config.maxBodyBytes), async (req, res) => {
    const org = await deps.store.orgs.get(String(req.params.id));
    if (!org) throw notFound('org');
    const body = createPortalSessionBody.safeParse(req.body ?? {});
    if (!body.success) throw invalidRequest(body.error);
    // A platform key grants no more than it holds.
    const platformKey = res.locals.platformKey as PlatformKeyRecord | undefined;
    const beyond = platformKey ? body.data.scopes.filter((s) => !platformKey.scopes.includes(s)) : [];
    if (beyond.length > 0) throw new ApiError(403, 'insufficient_scope', `this platform key lacks the ${beyond.join(', ')} scope a portal session with these scopes needs`);
    const now = deps.clock.now();
    const { token, tokenHash } = mintPortalToken();
    const session: PortalSessionRecord = {
      id: deps.ids('ps', now),
      orgId: org.id,
      scopes: [...body.data.scopes],
      mode: body.data.mode,
      tokenHash,
      createdAt: now,
      expiresAt: now + body.data.ttlSeconds * 1000,
      revokedAt: null,
    };
    await deps.store.portalSessions.create(session);
    await recordAudit(deps, req, res, { action: 'portal_session.created', target: { type: 'portal_session', id: session.id }, orgId: org.id, changes: ['scopes', 'expiresAt'] });
    deps.logger.info({ orgId: org.id, portalSessionId: session.id, platformKeyId: platformKey?.id, scopes: session.scopes, expiresAt: iso(session.expiresAt) }, 'portal session created');
    res.status(201).json({ ...sessionJson(session), token, url: `${publicOrigin(deps, req)}${PORTAL_PATH}#session=${token}` });
  });

  router.get('/v1/orgs/:id/portal-sessions/:sessionId', authority, async (req, res) => {
    const session = await deps.store.portalSessions.get(String(req.params.id), String(req.params.sessionId));
    if (!session) throw notFound('portal session');
    res.json(sessionJson(session));
  });

  router.delete('/v1/orgs/:id/portal-sessions/:sessionId', authority, async (req, res) => {
    const session = await deps.store.portalSessions.get(String(req.params.id), String(req.params.sessionId));
    if (!session) throw notFound('portal session');
    const revoked = await deps.store.portalSessions.revoke(session, deps.clock.now());
    await recordAudit(deps, req, res, { action: 'portal_session.revoked', target: { type: 'portal_session', id: session.id }, orgId: session.orgId, changes: ['revokedAt'] });
    deps.logger.info({ orgId: session.orgId, portalSessionId: session.id }, 'portal session revoked');
    res.json(sessionJson(revoked));
  });

  return router;
}

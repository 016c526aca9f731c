import type { ApiKeyScope } from '@postern/shared';
import type { PlatformKeyRecord } from '@postern/store';
import { Router } from 'express';
import { invalidRequest, notFound } from '../api-error.js';
import type { AppDeps } from '../app-deps.js';
import { mintPlatformKey, requireAdmin } from '../auth.js';
import { jsonBody } from '../json-body.js';
import { createPlatformKeyBody, pageQuery, parseListQuery } from '../schemas.js';
import { platformKeyJson } from '../serializers.js';
import { recordAudit } from '../audit.js';
import { createdPlatformKeyResponse, type Json } from '../response-schemas.js';

/**
 * Platform keys, all with the admin token: `POST /v1/platform-keys` `{name, scopes}` → 201 the
 * record with `key` (shown once, stored hashed), `GET /v1/platform-keys` (prefix only, revoked
 * ones included), `DELETE /v1/platform-keys/:id` (revoked at once: the next request with it gets
 * 401). A platform key acts for the org named in `Postern-Org` (see `requirePlatformKey`).
 * Mounted before the app's body parser, so a caller without the admin token gets 401 unread.
 */
export function platformKeyRoutes(deps: AppDeps): Router {
  const router = Router();
  const admin = requireAdmin(deps.config.adminToken);

  router.post('/v1/platform-keys', admin, ...jsonBody(deps.config.maxBodyBytes), async (req, res) => {
    const body = createPlatformKeyBody.safeParse(req.body ?? {});
    if (!body.success) throw invalidRequest(body.error);
    const { platformKey, prefix, keyHash } = mintPlatformKey();
    const now = deps.clock.now();
    const key: PlatformKeyRecord = { id: deps.ids('pfk', now), name: body.data.name, scopes: body.data.scopes as ApiKeyScope[], prefix, keyHash, createdAt: now, revokedAt: null };
    await deps.store.platformKeys.create(key);
    await recordAudit(deps, req, res, { action: 'platform_key.created', target: { type: 'platform_key', id: key.id }, orgId: null, changes: ['name', 'scopes'] });
    res.status(201).json({ ...platformKeyJson(key), key: platformKey } satisfies Json<typeof createdPlatformKeyResponse>);
  });

  router.get('/v1/platform-keys', admin, async (req, res) => {
    const page = await deps.store.platformKeys.list(parseListQuery(pageQuery, req.query, 'pfk'));
    res.json({ data: page.items.map(platformKeyJson), nextCursor: page.nextCursor });
  });

  router.delete('/v1/platform-keys/:id', admin, async (req, res) => {
    const key = await deps.store.platformKeys.get(String(req.params.id));
    if (!key) throw notFound('platform key');
    const revoked = await deps.store.platformKeys.revoke(key, deps.clock.now());
    await recordAudit(deps, req, res, { action: 'platform_key.revoked', target: { type: 'platform_key', id: key.id }, orgId: null, changes: ['revokedAt'] });
    res.json(platformKeyJson(revoked));
  });

  return router;
}

import type { ApiKeyScope } from '@postern/shared';
import type { ApiKeyRecord, PlatformKeyRecord } from '@postern/store';
import { Router } from 'express';
import { ApiError, invalidRequest, notFound } from '../api-error.js';
import type { AppDeps } from '../app-deps.js';
import { mintApiKey, requireApiKeyCredential, requireScope, type PortalSessionCredential } from '../auth.js';
import { createApiKeyBody, pageQuery, parseListQuery } from '../schemas.js';
import { recordAudit } from '../audit.js';
import { apiKeyJson, iso } from '../serializers.js';
import { createdApiKeyResponse, meResponse, type Json } from '../response-schemas.js';

/**
 * `GET /v1/me` (any key or portal session: who am I, what may I do; `credential` says `api_key`,
 * `platform_key` or `portal_session`), and the org's API keys: create (the key is shown once), list
 * (prefix only), revoke — API or platform keys only, never a portal session (403
 * `api_key_required`). Behind API-key auth.
 */
export function apiKeyRoutes(deps: AppDeps): Router {
  const router = Router();

  router.get('/v1/me', (_req, res) => {
    const session = res.locals.portalSession as PortalSessionCredential | null | undefined;
    const orgId = res.locals.orgId as string;
    if (session) {
      // A portal session has no key: it says which session it is and until when it works.
      res.json({ orgId, keyId: null, name: 'portal session', prefix: null, scopes: res.locals.scopes as ApiKeyScope[], credential: 'portal_session', portalSession: { id: session.id, expiresAt: iso(session.expiresAt), mode: session.mode } } satisfies Json<typeof meResponse>);
      return;
    }
    const platformKey = res.locals.platformKey as PlatformKeyRecord | undefined;
    const key = platformKey ?? (res.locals.apiKey as ApiKeyRecord);
    res.json({ orgId, keyId: key.id, name: key.name, prefix: key.prefix, scopes: key.scopes, credential: platformKey ? 'platform_key' : 'api_key', portalSession: null } satisfies Json<typeof meResponse>);
  });

  router.use('/v1/api-keys', requireApiKeyCredential);

  router.post('/v1/api-keys', requireScope('webhooks:write'), async (req, res) => {
    const body = createApiKeyBody.safeParse(req.body ?? {});
    if (!body.success) throw invalidRequest(body.error);
    const held = res.locals.scopes as readonly ApiKeyScope[];
    const scopes = body.data.scopes as ApiKeyScope[];
    // A key may hand on only what it holds, or a narrow key could mint itself a wider one.
    const missing = scopes.find((s) => !held.includes(s));
    if (missing) throw new ApiError(403, 'insufficient_scope', `this ${res.locals.platformKey ? 'platform key' : 'API key'} lacks the ${missing} scope, so it cannot grant it`);
    const { apiKey, prefix, keyHash } = mintApiKey();
    const now = deps.clock.now();
    const key: ApiKeyRecord = { id: deps.ids('key', now), orgId: res.locals.orgId as string, name: body.data.name, scopes, prefix, keyHash, createdAt: now, revokedAt: null };
    await deps.store.apiKeys.create(key);
    await recordAudit(deps, req, res, { action: 'api_key.created', target: { type: 'api_key', id: key.id }, changes: ['name', 'scopes'] });
    res.status(201).json({ ...apiKeyJson(key), apiKey } satisfies Json<typeof createdApiKeyResponse>);
  });

  router.get('/v1/api-keys', requireScope('webhooks:read'), async (req, res) => {
    const page = await deps.store.apiKeys.list(res.locals.orgId as string, parseListQuery(pageQuery, req.query, 'key'));
    res.json({ data: page.items.map(apiKeyJson), nextCursor: page.nextCursor });
  });

  router.delete('/v1/api-keys/:id', requireScope('webhooks:write'), async (req, res) => {
    const key = await deps.store.apiKeys.get(res.locals.orgId as string, req.params.id);
    if (!key || key.orgId !== res.locals.orgId) throw notFound('API key');
    const revoked = await deps.store.apiKeys.revoke(key, deps.clock.now());
    await recordAudit(deps, req, res, { action: 'api_key.revoked', target: { type: 'api_key', id: key.id }, changes: ['revokedAt'] });
    res.json(apiKeyJson(revoked));
  });

  return router;
}

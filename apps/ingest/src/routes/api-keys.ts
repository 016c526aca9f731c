import type { ApiKeyScope } from '@postern/shared';
import type { ApiKeyRecord, PlatformKeyRecord } from '@postern/store';
import { Router } from 'express';
import { ApiError, invalidRequest, notFound } from '../api-error.js';
import type { AppDeps } from '../app-deps.js';
import { mintApiKey, requireScope } from '../auth.js';
import { createApiKeyBody, pageQuery, parseListQuery } from '../schemas.js';
import { apiKeyJson } from '../serializers.js';
import { createdApiKeyResponse, meResponse, type Json } from '../response-schemas.js';

/**
 * `GET /v1/me` (any key: who am I, what may I do; `credential` says `api_key` or `platform_key`), and the org's API keys: create (the key is
 * shown once), list (prefix only), revoke. Behind API-key auth.
 */
export function apiKeyRoutes(deps: AppDeps): Router {
  const router = Router();

  router.get('/v1/me', (_req, res) => {
    const platformKey = res.locals.platformKey as PlatformKeyRecord | undefined;
    const key = platformKey ?? (res.locals.apiKey as ApiKeyRecord);
    res.json({ orgId: res.locals.orgId as string, keyId: key.id, name: key.name, prefix: key.prefix, scopes: key.scopes, credential: platformKey ? 'platform_key' : 'api_key' } satisfies Json<typeof meResponse>);
  });

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
    res.status(201).json({ ...apiKeyJson(key), apiKey } satisfies Json<typeof createdApiKeyResponse>);
  });

  router.get('/v1/api-keys', requireScope('webhooks:read'), async (req, res) => {
    const page = await deps.store.apiKeys.list(res.locals.orgId as string, parseListQuery(pageQuery, req.query, 'key'));
    res.json({ data: page.items.map(apiKeyJson), nextCursor: page.nextCursor });
  });

  router.delete('/v1/api-keys/:id', requireScope('webhooks:write'), async (req, res) => {
    const key = await deps.store.apiKeys.get(res.locals.orgId as string, req.params.id);
    if (!key || key.orgId !== res.locals.orgId) throw notFound('API key');
    res.json(apiKeyJson(await deps.store.apiKeys.revoke(key, deps.clock.now())));
  });

  return router;
}

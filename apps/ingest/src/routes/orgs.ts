import { API_KEY_SCOPES } from '@postern/shared';
import { Router } from 'express';
import type { OrgRecord } from '@postern/store';
import { invalidRequest, notFound } from '../api-error.js';
import type { AppDeps } from '../app-deps.js';
import { mintApiKey, requireAdmin } from '../auth.js';
import { jsonBody } from '../json-body.js';
import { iso } from '../serializers.js';
import { createOrgBody } from '../schemas.js';
import { recordAudit } from '../audit.js';
import { createdOrgResponse, orgResponse, type Json } from '../response-schemas.js';

/**
 * `POST /v1/orgs` (admin token): creates an org and its first API key, with every scope, shown
 * once, stored hashed. `POST /v1/orgs/:id/suspend` and `/reactivate` (admin token) change its status. Mounted before the app's body parser: the admin token is checked first, so
 * a caller without it gets 401 whatever its body, and only then is the body read.
 */
export function orgRoutes(deps: AppDeps): Router {
  const router = Router();
  router.post('/v1/orgs', requireAdmin(deps.config.adminToken), ...jsonBody(deps.config.maxBodyBytes), async (req, res) => {
    const body = createOrgBody.safeParse(req.body ?? {});
    if (!body.success) throw invalidRequest(body.error);
    const now = deps.clock.now();
    const org: OrgRecord = { id: deps.ids('org', now), name: body.data.name, status: 'active', createdAt: now };
    const { apiKey, prefix, keyHash } = mintApiKey();
    await deps.store.orgs.create(org, keyHash);
    // Should this step not happen, the key still works and gets the same record on first use.
    await deps.store.apiKeys.adopt({ id: deps.ids('key', now), orgId: org.id, name: 'first key', scopes: [...API_KEY_SCOPES], prefix, keyHash, createdAt: now, revokedAt: null });
    await recordAudit(deps, req, res, { action: 'org.created', target: { type: 'org', id: org.id }, orgId: org.id, changes: ['name'] });
    res.status(201).json({ id: org.id, name: org.name, createdAt: iso(now), apiKey } satisfies Json<typeof createdOrgResponse>);
  });

  // Suspending an org stops its API keys (403 org_suspended) and, before each attempt, its queued
  // deliveries are cancelled, held or failed with `org_suspended` as each endpoint's policy says.
  for (const [action, status] of [['suspend', 'suspended'], ['reactivate', 'active']] as const) {
    router.post(`/v1/orgs/:id/${action}`, requireAdmin(deps.config.adminToken), async (req, res) => {
      const org = await deps.store.orgs.get(String(req.params.id));
      if (!org) throw notFound('org');
      await deps.store.orgs.setStatus(org.id, status);
      if (org.status !== status) await recordAudit(deps, req, res, { action: action === 'suspend' ? 'org.suspended' : 'org.reactivated', target: { type: 'org', id: org.id }, orgId: org.id, changes: ['status'] });
      res.json({ id: org.id, name: org.name, status, createdAt: iso(org.createdAt) } satisfies Json<typeof orgResponse>);
    });
  }
  return router;
}

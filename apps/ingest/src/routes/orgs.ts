import { randomBytes } from 'node:crypto';
import { Router } from 'express';
import type { OrgRecord } from '@postern/store';
import { invalidRequest } from '../api-error.js';
import type { AppDeps } from '../app-deps.js';
import { hashApiKey, requireAdmin } from '../auth.js';
import { iso } from '../serializers.js';
import { createOrgBody } from '../schemas.js';

/** `POST /v1/orgs` (admin token): creates an org and its API key, shown once, stored hashed. */
export function orgRoutes(deps: AppDeps): Router {
  const router = Router();
  router.post('/v1/orgs', requireAdmin(deps.config.adminToken), async (req, res) => {
    const body = createOrgBody.safeParse(req.body ?? {});
    if (!body.success) throw invalidRequest(body.error);
    const now = deps.clock.now();
    const org: OrgRecord = { id: deps.ids('org', now), name: body.data.name, status: 'active', createdAt: now };
    const apiKey = `pk_${randomBytes(32).toString('base64url')}`;
    await deps.store.orgs.create(org, hashApiKey(apiKey));
    res.status(201).json({ id: org.id, name: org.name, createdAt: iso(now), apiKey });
  });
  return router;
}

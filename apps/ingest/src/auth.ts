import { createHash, timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Store } from '@postern/store';
import { ApiError } from './api-error.js';

/** SHA-256 hex of an API key: the only form in which keys are stored. */
export function hashApiKey(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex');
}

function bearer(header: string | undefined): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m?.[1] ?? null;
}

/** Requires `Authorization: Bearer <ADMIN_TOKEN>` (compared in constant time); 401 otherwise. */
export function requireAdmin(adminToken: string): RequestHandler {
  const expected = createHash('sha256').update(adminToken).digest();
  return (req, _res, next) => {
    const token = bearer(req.headers.authorization);
    const given = createHash('sha256').update(token ?? '').digest();
    if (!token || !timingSafeEqual(given, expected)) {
      return next(new ApiError(401, 'unauthorized', 'admin token required: Authorization: Bearer <ADMIN_TOKEN>'));
    }
    next();
  };
}

/**
 * Requires `Authorization: Bearer <API key>` of an active org and puts the org id in
 * `res.locals.orgId`; 401 for a missing or unknown key, 403 `org_suspended` for a suspended org.
 */
export function requireApiKey(store: Store): RequestHandler {
  return (req, res, next) => {
    const token = bearer(req.headers.authorization);
    if (!token) return next(new ApiError(401, 'unauthorized', 'API key required: Authorization: Bearer <API key>'));
    store.orgs
      .orgIdForApiKey(hashApiKey(token))
      .then(async (orgId) => {
        if (!orgId) throw new ApiError(401, 'unauthorized', 'API key is not valid');
        const org = await store.orgs.get(orgId);
        if (!org) throw new ApiError(401, 'unauthorized', 'API key is not valid');
        if (org.status === 'suspended') throw new ApiError(403, 'org_suspended', 'this org is suspended');
        res.locals.orgId = orgId;
        next();
      })
      .catch(next);
  };
}

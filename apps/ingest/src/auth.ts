import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { API_KEY_SCOPES, type ApiKeyScope } from '@postern/shared';
import { ApiError } from './api-error.js';
import type { AppDeps } from './app-deps.js';
import type { LookupCache } from './lookup-cache.js';

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

const API_KEY_PREFIX = 'pk_';

/** Every portal session token starts with this, so ingest knows which lookup to make. */
export const PORTAL_TOKEN_PREFIX = 'pst_';

/** A fresh portal session token: `pst_` + 43 base64url characters (256 random bits), and its hash. */
export function mintPortalToken(): { token: string; tokenHash: string } {
  const token = `${PORTAL_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { token, tokenHash: hashApiKey(token) };
}

/** What `res.locals.portalSession` holds when a portal session token authenticated the request. */
export interface PortalSessionCredential {
  id: string;
  /** Epoch ms. */
  expiresAt: number;
}

/**
 * Authenticates a portal session token (issue 15): 401 `session_revoked` once revoked, 401
 * `session_expired` from `expiresAt` on (both for a day after, then `unauthorized`), 401
 * `unauthorized` when unknown; 403 `org_suspended` for a suspended org. Sets the same
 * `res.locals` as an API key (`orgId`, `scopes`; `apiKey` null, no endpoints: a session cannot
 * post events) plus `portalSession`. Two reads: the token's lookup, then the org.
 */
function requirePortalSession(deps: Pick<AppDeps, 'store' | 'clock'>) {
  return (token: string, res: Response, next: NextFunction): void => {
    deps.store.portalSessions
      .authenticate(hashApiKey(token))
      .then(async (session) => {
        if (!session) throw new ApiError(401, 'unauthorized', 'portal session is not valid');
        if (session.revokedAt !== null) throw new ApiError(401, 'session_revoked', 'this portal session was revoked; ask for a new one');
        if (deps.clock.now() >= session.expiresAt) throw new ApiError(401, 'session_expired', 'this portal session has expired; ask for a new one');
        const org = await deps.store.orgs.get(session.orgId);
        if (!org) throw new ApiError(401, 'unauthorized', 'portal session is not valid');
        if (org.status === 'suspended') throw new ApiError(403, 'org_suspended', 'this org is suspended');
        res.locals.orgId = org.id;
        res.locals.apiKey = null;
        res.locals.scopes = session.scopes;
        res.locals.orgEndpoints = [];
        res.locals.portalSession = { id: session.sessionId, expiresAt: session.expiresAt } satisfies PortalSessionCredential;
        next();
      })
      .catch(next);
  };
}

/**
 * Refuses portal sessions on routes that manage credentials (`/v1/api-keys`): a customer's
 * short-lived session must not mint itself a key that outlives it. 403 `api_key_required`.
 */
export const requireApiKeyCredential: RequestHandler = (_req, res, next) => {
  if (res.locals.portalSession) return next(new ApiError(403, 'api_key_required', 'a portal session cannot manage API keys; use an API key'));
  next();
};

/**
 * Requires the authority to act for any org, on the admin routes under `/v1/orgs/:id/…` that a
 * platform uses (portal sessions): today the admin token. This is the one place where the
 * platform key of issue 15 (item 3) is to be accepted too, confined to the org in the path.
 */
export function requirePlatformAuthority(deps: Pick<AppDeps, 'config'>): RequestHandler {
  return requireAdmin(deps.config.adminToken);
}

/** A fresh API key: `pk_` + 43 base64url characters (256 random bits), its prefix and its hash. */
export function mintApiKey(): { apiKey: string; prefix: string; keyHash: string } {
  const apiKey = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { apiKey, prefix: apiKeyPrefix(apiKey), keyHash: hashApiKey(apiKey) };
}

/** The part of a key people see to tell keys apart: the 8 characters after `pk_`. */
export function apiKeyPrefix(apiKey: string): string {
  const body = apiKey.startsWith(API_KEY_PREFIX) ? apiKey.slice(API_KEY_PREFIX.length) : apiKey;
  return body.slice(0, 8);
}

/**
 * Requires `Authorization: Bearer <API key>` of an active org and puts the org id in
 * `res.locals.orgId`, the key's record in `res.locals.apiKey`, its scopes in `res.locals.scopes`
 * and the org's endpoints (parsed, current as of this request) in `res.locals.orgEndpoints`; 401
 * for a missing, unknown or revoked key, 403 `org_suspended` for a suspended org. Lookups come
 * from `lookups` (one Redis round trip when the key is cached). A key without a record yet (made
 * before keys had scopes) gets one on first use, with every scope, so it keeps working and can be
 * listed and revoked. A portal session token (`pst_…`) is checked as {@link requirePortalSession}
 * says instead, and sets the same locals (`res.locals.portalSession` too; null for an API key).
 */
export function requireApiKey(deps: Pick<AppDeps, 'store' | 'ids' | 'clock'>, lookups: LookupCache): RequestHandler {
  const { store } = deps;
  const portalSession = requirePortalSession(deps);
  return (req, res, next) => {
    const token = bearer(req.headers.authorization);
    if (!token) return next(new ApiError(401, 'unauthorized', 'API key required: Authorization: Bearer <API key>'));
    if (token.startsWith(PORTAL_TOKEN_PREFIX)) return portalSession(token, res, next);
    res.locals.portalSession = null;
    const keyHash = hashApiKey(token);
    lookups
      .lookup(keyHash)
      .then(async (found) => {
        const org = found?.org;
        if (!found?.apiKey || !org) throw new ApiError(401, 'unauthorized', 'API key is not valid');
        if (org.status === 'suspended') throw new ApiError(403, 'org_suspended', 'this org is suspended');
        const key =
          found.apiKey.key ??
          (await store.apiKeys.adopt({
            id: deps.ids('key', deps.clock.now()),
            orgId: org.id,
            name: 'first key',
            scopes: [...API_KEY_SCOPES],
            prefix: apiKeyPrefix(token),
            keyHash,
            createdAt: org.createdAt,
            revokedAt: null,
          }));
        if (!key) throw new ApiError(401, 'unauthorized', 'API key is not valid');
        res.locals.orgId = org.id;
        res.locals.apiKey = key;
        res.locals.scopes = key.scopes;
        res.locals.orgEndpoints = found.endpoints;
        res.locals.org = org;
        next();
      })
      .catch(next);
  };
}

/**
 * Requires the API key (already checked by {@link requireApiKey}) to hold `scope`; 403
 * `insufficient_scope` naming it otherwise. Scope checks come before any lookup, so the answer
 * never depends on whether an id exists. Generic in the route's params so that express
 * still types the next handler's `req.params` from the route path.
 */
export function requireScope(scope: ApiKeyScope): <Params>(req: Request<Params>, res: Response, next: NextFunction) => void {
  return (_req, res, next) => {
    const scopes = (res.locals.scopes ?? []) as readonly ApiKeyScope[];
    if (!scopes.includes(scope)) {
      return next(new ApiError(403, 'insufficient_scope', `this API key lacks the ${scope} scope`));
    }
    next();
  };
}

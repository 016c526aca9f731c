import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { API_KEY_SCOPES, isId, type ApiKeyScope } from '@postern/shared';
import type { PlatformKeyRecord, Store } from '@postern/store';
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

/** A check of `Authorization: Bearer <ADMIN_TOKEN>`, comparing in constant time. */
function adminTokenCheck(adminToken: string): (req: Request) => boolean {
  const expected = createHash('sha256').update(adminToken).digest();
  return (req) => {
    const token = bearer(req.headers.authorization);
    return token !== null && timingSafeEqual(createHash('sha256').update(token).digest(), expected);
  };
}

/** Requires `Authorization: Bearer <ADMIN_TOKEN>` (compared in constant time); 401 otherwise. */
export function requireAdmin(adminToken: string): RequestHandler {
  const isAdmin = adminTokenCheck(adminToken);
  return (req, _res, next) => {
    if (!isAdmin(req)) return next(new ApiError(401, 'unauthorized', 'admin token required: Authorization: Bearer <ADMIN_TOKEN>'));
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
  /** `customer`: the portal shows plain words and lets the customer pick only the org's policy choices. */
  mode: 'customer' | 'operator';
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
        res.locals.org = org;
        res.locals.portalSession = { id: session.sessionId, expiresAt: session.expiresAt, mode: session.mode } satisfies PortalSessionCredential;
        next();
      })
      .catch(next);
  };
}

/**
 * Refuses portal sessions on routes that manage credentials (`/v1/api-keys`) or the org's own
 * settings (`PATCH /v1/org`, `GET /v1/org/check-secret`): a customer's short-lived session must
 * not mint itself a key that outlives it, nor switch off the platform's checks or read their
 * secret. 403 `api_key_required`.
 */
export const requireApiKeyCredential: RequestHandler = (_req, res, next) => {
  if (res.locals.portalSession) return next(new ApiError(403, 'api_key_required', 'a portal session cannot manage API keys, change org settings or read the audit log; use an API key'));
  next();
};

/**
 * Requires the authority to act for any org, on the admin routes under `/v1/orgs/:id/…` that a
 * platform uses (portal sessions): the admin token, or a platform key holding `webhooks:read`
 * (put in `res.locals.platformKey`; the route checks it holds every scope it grants). The org is
 * the one in the path.
 */
export function requirePlatformAuthority(deps: Pick<AppDeps, 'config' | 'store'>): RequestHandler {
  return requireAdminOrPlatformKey(deps, 'webhooks:read');
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
        // Only a platform key acts for the org it names; an API key naming another org is a mistake, not a switch.
        const named = req.headers[PLATFORM_ORG_HEADER];
        if (named !== undefined && (Array.isArray(named) || named.trim() !== org.id)) {
          throw new ApiError(400, 'invalid_request', 'Postern-Org: names another org than the one this API key belongs to; an API key acts for its own org only');
        }
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

const PLATFORM_KEY_PREFIX = 'ppk_';

/**
 * The header a platform key names the org it acts for in (`Postern-Org: org_…`). Node lower-cases
 * header names, so this is how `req.headers` spells it.
 */
export const PLATFORM_ORG_HEADER = 'postern-org';

/** A fresh platform key: `ppk_` + 43 base64url characters (256 random bits), its prefix and its hash. */
export function mintPlatformKey(): { platformKey: string; prefix: string; keyHash: string } {
  const platformKey = `${PLATFORM_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { platformKey, prefix: platformKey.slice(PLATFORM_KEY_PREFIX.length, PLATFORM_KEY_PREFIX.length + 8), keyHash: hashApiKey(platformKey) };
}

/** Whether a bearer token is shaped like a platform key (`ppk_…`); says nothing about whether it is valid. */
export function isPlatformKeyToken(token: string | null | undefined): boolean {
  return typeof token === 'string' && token.startsWith(PLATFORM_KEY_PREFIX);
}

/**
 * The live platform key presented as `Authorization: Bearer ppk_…`, read from Redis on every call
 * (never cached, so a revoked key is refused by the very next request).
 *
 * @returns the key's record, or null when the request carries no platform key at all.
 * @throws ApiError 401 `unauthorized` for a platform key that is unknown or revoked.
 */
export async function authenticatePlatformKey(store: Pick<Store, 'platformKeys'>, req: Request): Promise<PlatformKeyRecord | null> {
  const token = bearer(req.headers.authorization);
  if (!isPlatformKeyToken(token)) return null;
  const key = await store.platformKeys.authenticate(hashApiKey(token as string));
  if (!key) throw new ApiError(401, 'unauthorized', 'platform key is not valid');
  return key;
}

/**
 * The org a platform-key request acts for, from the `Postern-Org` header.
 *
 * @throws ApiError 400 `org_required` when the header is missing or sent twice, 400
 *   `invalid_request` when it is not an org id.
 */
export function platformOrgId(req: Request): string {
  const raw = req.headers[PLATFORM_ORG_HEADER];
  if (raw === undefined || raw === '' || Array.isArray(raw)) {
    throw new ApiError(400, 'org_required', 'a platform key acts for the org named in the Postern-Org header: send Postern-Org: <org id> once');
  }
  const orgId = raw.trim();
  if (!isId('org', orgId)) throw new ApiError(400, 'invalid_request', 'Postern-Org: must be an org id (org_…)');
  return orgId;
}

/**
 * Requires `Authorization: Bearer <platform key>` and `Postern-Org: <org id>`, and then acts as an
 * API key of that org holding the platform key's scopes: puts the org id in `res.locals.orgId`,
 * the key's record in `res.locals.platformKey`, its scopes in `res.locals.scopes` and the org's
 * endpoints in `res.locals.orgEndpoints`. Every route reads the org from `res.locals.orgId` only,
 * so another org's ids answer 404 as they do for an API key. 401 for an unknown or revoked key
 * (checked before the header), 400 `org_required` without the header, 404 `org_not_found` for an
 * org that does not exist, 403 `org_suspended` for a suspended one. The request's log line
 * carries `orgId` and `platformKeyId` ({@link requestLogging}).
 */
export function requirePlatformKey(deps: Pick<AppDeps, 'store'>, lookups: LookupCache): RequestHandler {
  return (req, res, next) => {
    authenticatePlatformKey(deps.store, req)
      .then(async (key) => {
        if (!key) throw new ApiError(401, 'unauthorized', 'platform key required: Authorization: Bearer <platform key>');
        res.locals.platformKey = key;
        const orgId = platformOrgId(req);
        const found = await lookups.lookupOrg(orgId);
        if (!found.org) throw new ApiError(404, 'org_not_found', `the org named in Postern-Org (${orgId}) does not exist`);
        if (found.org.status === 'suspended') throw new ApiError(403, 'org_suspended', 'this org is suspended');
        res.locals.orgId = found.org.id;
        res.locals.org = found.org;
        res.locals.scopes = key.scopes;
        res.locals.orgEndpoints = found.endpoints;
        next();
      })
      .catch(next);
  };
}

/**
 * For an admin route a platform may call too, acting on an org the route names itself (e.g.
 * `POST /v1/orgs/:id/…`): the admin token, or a live platform key holding `scope`. A platform key
 * is put in `res.locals.platformKey` (absent for the admin token); the route confines it to the
 * org it names. 401 `unauthorized` for anything else, 403 `insufficient_scope` for a platform key
 * without `scope`.
 */
export function requireAdminOrPlatformKey(deps: { store: Pick<Store, 'platformKeys'>; config: Pick<AppDeps['config'], 'adminToken'> }, scope: ApiKeyScope): RequestHandler {
  const isAdmin = adminTokenCheck(deps.config.adminToken);
  return (req, res, next) => {
    if (isAdmin(req)) return next();
    authenticatePlatformKey(deps.store, req)
      .then((key) => {
        if (!key) throw new ApiError(401, 'unauthorized', 'admin token or platform key required: Authorization: Bearer <ADMIN_TOKEN or platform key>');
        if (!key.scopes.includes(scope)) throw new ApiError(403, 'insufficient_scope', `this platform key lacks the ${scope} scope`);
        res.locals.platformKey = key;
        next();
      })
      .catch(next);
  };
}

/**
 * The v1 API's credential check: a platform key (`ppk_…`, see {@link requirePlatformKey}) or else
 * an API key ({@link requireApiKey}). Either way the routes after it see the same `res.locals`.
 */
export function requireApiCredential(deps: Pick<AppDeps, 'store' | 'ids' | 'clock'>, lookups: LookupCache): RequestHandler {
  const apiKey = requireApiKey(deps, lookups);
  const platformKey = requirePlatformKey(deps, lookups);
  return (req, res, next) => (isPlatformKeyToken(bearer(req.headers.authorization)) ? platformKey : apiKey)(req, res, next);
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
      const credential = res.locals.platformKey ? 'platform key' : 'API key';
      return next(new ApiError(403, 'insufficient_scope', `this ${credential} lacks the ${scope} scope`));
    }
    next();
  };
}

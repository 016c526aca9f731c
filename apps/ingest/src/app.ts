import { createSandboxPool } from '@postern/sandbox';
import { transformationRoutes } from './routes/transformations.js';
import express, { type Express, type Request, type RequestHandler, type Response } from 'express';
import { dashboardStatic } from '@postern/dashboard';
import { Registry } from 'prom-client';
import { mountBullBoard } from './bull-board.js';
import { createIngestMetrics } from './http-metrics.js';
import { requestLogging } from './request-logging.js';
import { allowedMethods, listRoutes, queryTaken, routeMatcher } from './route-list.js';
import { operationsRoutes } from './routes/operations.js';
import { apiReferenceRoutes } from './api-reference.js';
import { ApiError, errorHandler } from './api-error.js';
import type { AppDeps } from './app-deps.js';
import { requireApiCredential } from './auth.js';
import { jsonBody } from './json-body.js';
import { checkHostHeader, refuseUnknownTransferCoding } from './http-framing.js';
import { DEFAULT_LOOKUP_CACHE_MAX_ENTRIES, DEFAULT_LOOKUP_CACHE_TTL_MS, LookupCache } from './lookup-cache.js';
import { apiKeyRoutes } from './routes/api-keys.js';
import { auditLogRoutes } from './routes/audit-log.js';
import { deliveryRoutes } from './routes/deliveries.js';
import { deliveryStreamRoutes } from './routes/delivery-stream.js';
import { LiveHub } from './live-hub.js';
import type { RedisClient } from '@postern/store';
import { erasureRoutes } from './routes/erasure.js';
import { exportRoutes } from './routes/export.js';
import { endpointRoutes } from './routes/endpoints.js';
import { eventRoutes } from './routes/events.js';
import { eventBatchRoutes } from './routes/event-batch.js';
import { eventTypeRoutes } from './routes/event-types.js';
import { portalRoutes } from './routes/portal.js';
import { EventValidators } from './event-validation.js';
import { orgRoutes } from './routes/orgs.js';
import { platformKeyRoutes } from './routes/platform-keys.js';
import { orgSettingsRoutes } from './routes/org-settings.js';
import { portalSessionRoutes } from './routes/portal-sessions.js';
import { policyRoutes } from './routes/policies.js';
import { notificationRoutes } from './routes/notifications.js';
import { redeliveryRoutes } from './routes/redeliveries.js';
import { policyPreviewRoutes } from './routes/policy-preview.js';
import { sendNowRoutes } from './routes/send-now.js';
import { statsRoutes } from './routes/stats.js';

/**
 * Two `Authorization` headers are an ambiguous credential: Node keeps the first and drops the
 * rest, so which one counts would depend on their order. 400 before any credential is looked at.
 */
const refuseRepeatedAuthorization: RequestHandler = (req, _res, next) => {
  let seen = 0;
  for (let i = 0; i < req.rawHeaders.length; i += 2) if ((req.rawHeaders[i] as string).toLowerCase() === 'authorization') seen++;
  if (seen > 1) return next(new ApiError(400, 'invalid_request', 'authorization: send one Authorization header, not several'));
  next();
};

/**
 * The query parser takes `a=1` only: `a[]=1` or `a[b]=1` would reach a route as an unknown name and
 * be ignored, so a filter the caller meant would silently not apply. 400, naming the parameter.
 * No parameter takes several values, so one given twice (`limit=10&limit=20`) is 400 too, saying
 * so, whatever the route's own wording for a bad value.
 */
const refuseAmbiguousQuery: RequestHandler = (req, _res, next) => {
  const query = req.query as Record<string, unknown>;
  const bracketed = Object.keys(query).find((name) => name.includes('[') || name.includes(']'));
  if (bracketed !== undefined) return next(new ApiError(400, 'invalid_request', `query parameter ${bracketed}: brackets are not supported; send ${bracketed.replace(/\[.*$/, '')}=<value>`));
  const repeated = Object.keys(query).find((name) => Array.isArray(query[name]));
  if (repeated !== undefined) return next(new ApiError(400, 'invalid_request', `${repeated}: ${repeated} must be given once`));
  next();
};

/**
 * A query string on a route that reads none is refused, as an unknown body field is: 400
 * `query: unknown parameter "x"`. Otherwise `POST /v1/events?idempotencyKey=k` would accept the
 * event twice without a word. Routes that read a query validate it themselves (strictly).
 */
function refuseUnreadQuery(): RequestHandler {
  // Which routes read a query is in the route docs (`openapi.ts`), loaded at the first request
  // that has a query string rather than at start-up, as `/openapi.json` loads them.
  let takesQuery: ReturnType<typeof queryTaken> | undefined;
  return async (req, _res, next) => {
    if (!req.url.includes('?') || !req.path.startsWith('/v1/')) return next();
    const names = Object.keys(req.query as Record<string, unknown>);
    if (names.length === 0) return next();
    takesQuery ??= queryTaken((await import('./openapi.js')).API_ROUTES.map((r) => ({ method: r.method, path: r.path, takesQuery: r.query !== undefined })));
    if (takesQuery(req.method, req.path) !== false) return next();
    next(new ApiError(400, 'invalid_request', `query: unknown parameter ${JSON.stringify(names[0])}`));
  };
}

/**
 * CORS for the customer portal in a sandboxed iframe, whose opaque origin (`null`) makes every
 * call to the API cross-origin: a preflight is answered for any origin, and an answer carries
 * `Access-Control-Allow-Origin: *` only when the request presented a portal session token
 * (`pst_…`). No cookie is involved (the token is the credential, sent as a header), so this lets
 * a browser do nothing that the token alone would not; API keys stay same-origin only.
 */
const portalCors: RequestHandler = (req, res, next) => {
  if (!req.get('origin')) return next();
  if (req.method === 'OPTIONS') {
    res.set({
      'access-control-allow-origin': '*',
      'access-control-allow-methods': 'GET, POST, PATCH, DELETE',
      'access-control-allow-headers': 'authorization, content-type, idempotency-key',
      'access-control-max-age': '600',
    });
    return res.status(204).end();
  }
  if (/^Bearer pst_/.test(req.get('authorization') ?? '')) res.set({ 'access-control-allow-origin': '*', 'access-control-expose-headers': 'idempotent-replayed, retry-after' });
  next();
};

/**
 * Builds the ingest API without listening: tests pass a port-0 listener and their own prefix.
 * Every error is JSON `{error:{code,message}}` with the right status. Also serves `/healthz`,
 * `/readyz`, `/metrics` (from `deps.registry`), `/openapi.json`, the API reference page at `/docs/api`
 * and Bull Board at `/admin/queues`.
 */
export function createApp(given: AppDeps): Express {
  // Threads start only when a transformation is first checked or tested. The cap is generous: a
  // check compiles code on a possibly busy API process, and a test reports its own duration.
  const deps = { ...given, sandbox: given.sandbox ?? createSandboxPool({ threads: 1, timeoutMs: 1000 }) };
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  const registry = deps.registry ?? new Registry();
  const metrics = createIngestMetrics(registry);
  // Built on first use, once every route below is registered.
  // The app's routes, listed once every route is registered (at the first request).
  let routeList: ReturnType<typeof listRoutes> | undefined;
  const routes = () => (routeList ??= listRoutes(app));
  let matchRoute: ReturnType<typeof routeMatcher> | undefined;
  let methodsAt: ReturnType<typeof allowedMethods> | undefined;
  const methodsOf = (path: string) => (methodsAt ??= allowedMethods(routes()))(path);
  // No route takes the request: 404, or for a path the API has, 405 with the methods it does.
  const noRoute = (req: Request, res: Response): ApiError => {
    const allow = methodsOf(req.path);
    if (allow.length === 0) return new ApiError(404, 'not_found', `no route ${req.method} ${req.path}`);
    res.setHeader('allow', allow.join(', '));
    return new ApiError(405, 'method_not_allowed', `${req.path} does not take ${req.method}; it takes ${allow.join(', ')}`);
  };
  app.use(metrics.middleware((method, path) => (matchRoute ??= routeMatcher(routes()))(method, path)));
  app.use(requestLogging(deps.logger, deps.config.logLevels?.request ?? 'info'));
  // Framing HTTP says to refuse, whatever the route: before any route reads a header or the body.
  app.use(checkHostHeader);
  app.use(refuseUnknownTransferCoding);
  app.use(operationsRoutes({ redis: deps.redis, registry, dataLossMonitor: deps.dataLossMonitor }));
  app.use(apiReferenceRoutes());
  // Before the JSON body parser: Bull Board reads its own request bodies.
  mountBullBoard(app, { queues: deps.queues.partitions, adminToken: deps.config.adminToken, readOnly: deps.config.bullBoardReadOnly ?? true });

  // Same origin as the API, so the dashboard needs no CORS and its key never leaves the site.
  app.use('/dashboard', dashboardStatic({ portalFrameAncestors: deps.config.portalFrameAncestors ?? [] }));

  // Credentials before bodies: a caller without a valid API key (or, for POST /v1/orgs and the
  // platform keys, the admin token) gets 401 whatever it sent, and its body is never read. The policies are public.
  app.use('/v1', portalCors);
  app.use('/v1', refuseRepeatedAuthorization);
  app.use(policyRoutes());
  app.use(orgRoutes(deps));
  app.use(portalSessionRoutes(deps));
  app.use(platformKeyRoutes(deps));
  const auditLog = auditLogRoutes(deps);
  app.use(auditLog.platform);
  const lookups = new LookupCache(deps, {
    ttlMs: deps.config.lookupCacheTtlMs ?? DEFAULT_LOOKUP_CACHE_TTL_MS,
    maxEntries: deps.config.lookupCacheMaxEntries ?? DEFAULT_LOOKUP_CACHE_MAX_ENTRIES,
  });
  // An org's API key, or a platform key acting for the org named in `Postern-Org`.
  const credentialCheck = requireApiCredential(deps, lookups);
  app.use('/v1', credentialCheck);
  app.use('/v1', refuseAmbiguousQuery);
  app.use(refuseUnreadQuery());
  // Before the body is read: a request no route takes is 404 (or 405) whatever its body and
  // content type, not 415 or 400 about a body nothing would read. OPTIONS on a path the API has
  // is 204 with `Allow` (its methods and OPTIONS); a browser's CORS preflight was answered above.
  app.use((req, res, next) => {
    if (req.method !== 'OPTIONS') return methodsOf(req.path).includes(req.method) ? next() : next(noRoute(req, res));
    const allow = methodsOf(req.path);
    if (allow.length === 0) return next(noRoute(req, res));
    res.setHeader('allow', [...allow, 'OPTIONS'].join(', '));
    res.status(204).end();
  });
  app.use(jsonBody(deps.config.maxBodyBytes));
  // Events first: POST /v1/events is most of the traffic, and every router it passes tests its paths.
  // One cache of compiled event-data validators per app: each type version compiles once.
  const validators = new EventValidators();
  app.use(eventRoutes(deps, validators));
  app.use(eventBatchRoutes(deps, validators));
  app.use(eventTypeRoutes(deps, validators));
  app.use(portalRoutes(deps));
  app.use(apiKeyRoutes(deps));
  app.use(endpointRoutes(deps));
  app.use(erasureRoutes(deps));
  // Before `/v1/deliveries/:id`, which would take `export` or `stream` for an id.
  app.use(exportRoutes(deps));
  const liveHub = deps.liveHub ?? new LiveHub({ feed: deps.store.liveFeed, redis: deps.redis, connect: () => deps.redis.duplicate() as RedisClient, logger: deps.logger });
  app.use(deliveryStreamRoutes({ ...deps, liveHub }, credentialCheck));
  app.use(deliveryRoutes(deps));
  app.use(redeliveryRoutes(deps));
  app.use(sendNowRoutes(deps));
  app.use(statsRoutes(deps));
  app.use(policyPreviewRoutes(deps));
  app.use(notificationRoutes(deps));
  app.use(orgSettingsRoutes(deps));
  app.use(transformationRoutes(deps));
  app.use(auditLog.org);

  app.use((req, res, next) => next(noRoute(req, res)));
  app.use(errorHandler(deps));
  return app;
}

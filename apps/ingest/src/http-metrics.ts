import type { Request, RequestHandler } from 'express';
import { Counter, Histogram, type Registry } from 'prom-client';

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * Sub-apps mounted on a path (Bull Board, the dashboard's static files): each is one route label,
 * whatever path under it was asked for.
 */
export const MOUNTED_ROUTES: readonly string[] = ['/admin/queues', '/dashboard'];
/** Route label of a request that matched no route (404). */
export const UNMATCHED_ROUTE = 'unmatched';

/** Ingest's Prometheus metrics, all on one per-app registry. */
export interface IngestMetrics {
  readonly registry: Registry;
  /**
   * Counts and times every request by method, route pattern and status. `resolveRoute` names the
   * route of a request that ended before reaching its handler (auth refusal, bad body).
   */
  middleware(resolveRoute: (method: string, path: string) => string | null): RequestHandler;
}

/**
 * Registers ingest's metrics on `registry` (a fresh `new Registry()` per app, never prom-client's
 * global one; `main.ts` adds the default process metrics to it):
 * - `postern_http_requests_total{method, route, status}`: requests answered;
 * - `postern_http_request_duration_seconds{method, route}`: time to the last byte of the answer.
 *
 * Labels are bounded: `route` is the express pattern (`/v1/endpoints/:id`), the mount path for
 * Bull Board (`/admin/queues`) and the dashboard (`/dashboard`), or `unmatched`; `method` is one of the standard methods or `OTHER`.
 * Throws when `registry` already holds these metrics.
 */
export function createIngestMetrics(registry: Registry): IngestMetrics {
  const requests = new Counter({
    name: 'postern_http_requests_total',
    help: 'HTTP requests answered by ingest, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'postern_http_request_duration_seconds',
    help: 'Time from request to the end of the answer, by method and route pattern.',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });

  return {
    registry,
    middleware(resolveRoute) {
      const routeOf = (req: Request): string => {
        const mounted = MOUNTED_ROUTES.find((m) => req.originalUrl === m || req.originalUrl.startsWith(`${m}/`) || req.originalUrl.startsWith(`${m}?`));
        if (mounted) return mounted;
        const matched = (req.route as { path?: unknown } | undefined)?.path;
        if (typeof matched === 'string') return matched;
        const path = req.originalUrl.split('?', 1)[0] ?? '/';
        return resolveRoute(req.method, path) ?? UNMATCHED_ROUTE;
      };
      return (req, res, next) => {
        const started = process.hrtime.bigint();
        res.once('finish', () => {
          const method = METHODS.has(req.method) ? req.method : 'OTHER';
          const route = routeOf(req);
          requests.inc({ method, route, status: String(res.statusCode) });
          duration.observe({ method, route }, Number(process.hrtime.bigint() - started) / 1e9);
        });
        next();
      };
    },
  };
}

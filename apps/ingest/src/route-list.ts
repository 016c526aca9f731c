import type { Express } from 'express';

/** One route the app answers: an HTTP method (upper case) and an express path pattern. */
export interface RouteEntry {
  method: string;
  /** Express pattern, e.g. `/v1/endpoints/:id`. */
  path: string;
}

interface StackLayer {
  route?: { path: unknown; methods: Record<string, boolean> };
  handle?: { stack?: StackLayer[] };
  /** The path a router was mounted on (`app.use('/x', router)`); router 2.x keeps it here. */
  rawPath?: unknown;
}

/**
 * Every route registered on an express 5 app, found by walking its router stack (routers are
 * descended into, their mount path prefixed; sub-apps such as Bull Board's are not).
 * The OpenAPI test compares this with the document, and the HTTP metrics use it to name the route
 * of a request that never reached its handler (a 401 from the auth middleware, say).
 */
export function listRoutes(app: Express): RouteEntry[] {
  const routes: RouteEntry[] = [];
  const walk = (stack: readonly StackLayer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
        for (const path of paths) {
          if (typeof path !== 'string') continue;
          for (const [method, on] of Object.entries(layer.route.methods)) {
            if (on && method !== '_all') routes.push({ method: method.toUpperCase(), path: prefix + path });
          }
        }
      } else if (Array.isArray(layer.handle?.stack)) {
        const mount = typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : '';
        walk(layer.handle.stack, prefix + mount);
      }
    }
  };
  walk((app as unknown as { router: { stack: StackLayer[] } }).router.stack, '');
  return routes;
}

/**
 * A matcher from a concrete path to the pattern of the route that owns it (`/v1/endpoints/ep_1` →
 * `/v1/endpoints/:id`), or null. Patterns are plain `:param` segments, as all of Postern's are.
 */
export function routeMatcher(routes: readonly RouteEntry[]): (method: string, path: string) => string | null {
  const compiled = routes.map((r) => ({
    method: r.method,
    path: r.path,
    regex: pathPattern(r.path),
  }));
  return (method, path) => {
    let samePathOtherMethod: string | null = null;
    for (const r of compiled) {
      if (!r.regex.test(path)) continue;
      if (r.method === method) return r.path;
      samePathOtherMethod ??= r.path;
    }
    return samePathOtherMethod;
  };
}

/**
 * For a 405's `Allow` header: a function giving the methods `routes` take at a path (HEAD beside
 * GET, as Express answers it), sorted; empty when no route has that path. Patterns compile once.
 */
export function allowedMethods(routes: readonly RouteEntry[]): (path: string) => string[] {
  const compiled = routes.map((r) => ({ method: r.method, regex: pathPattern(r.path) }));
  return (path) => {
    const methods = new Set<string>();
    for (const r of compiled) {
      if (!r.regex.test(path)) continue;
      methods.add(r.method);
      if (r.method === 'GET') methods.add('HEAD');
    }
    return [...methods].sort();
  };
}

/**
 * For refusing a query string no route reads: a function telling, for a method and a concrete
 * path, whether a route of `routes` with that method and path reads a query (`takesQuery`): true
 * when any does, false when such routes exist and none does, null when no route has that method
 * and path (a 404 or 405 is answered elsewhere). HEAD asks as GET. Patterns compile once.
 */
export function queryTaken(routes: readonly (RouteEntry & { takesQuery: boolean })[]): (method: string, path: string) => boolean | null {
  const compiled = routes.map((r) => ({ method: r.method.toUpperCase(), regex: pathPattern(r.path), takesQuery: r.takesQuery }));
  return (method, path) => {
    const asked = method === 'HEAD' ? 'GET' : method;
    let found: boolean | null = null;
    for (const r of compiled) {
      if (r.method !== asked || !r.regex.test(path)) continue;
      // Overlapping patterns (`/v1/deliveries/export`, `/v1/deliveries/:id`): any that reads one decides.
      if (r.takesQuery) return true;
      found = false;
    }
    return found;
  };
}

/**
 * An express path pattern (`/v1/endpoints/:id`) as a regular expression over request paths,
 * matching as express does by default: any case, a trailing slash or not.
 */
function pathPattern(pattern: string): RegExp {
  return new RegExp(`^${pattern.split('/').map((s) => (s.startsWith(':') ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')}/?$`, 'i');
}

import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Router, type RequestHandler } from 'express';
import { ApiError } from './api-error.js';

/** Where ingest serves the API reference: a web page that renders `/openapi.json`. */
export const API_REFERENCE_PATH = '/docs/api';

/**
 * The page: Redoc's standalone bundle renders the document this ingest serves. Its scripts are
 * relative to the page (`/docs/api` → `/docs/api/…`), so it works behind a proxy that adds a path
 * prefix; nothing loads from another origin, fonts included.
 */
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Postern API reference</title>
<link rel="icon" href="data:,">
<style>body { margin: 0; }</style>
</head>
<body>
<noscript>This page renders the OpenAPI document at /openapi.json with JavaScript. The same reference is in Markdown in the repository, under docs/api/.</noscript>
<div id="reference"></div>
<script src="api/redoc.standalone.js"></script>
<script src="api/reference.js"></script>
</body>
</html>
`;

/**
 * Starts Redoc on the page. The document's URL is resolved against the page's, so a path prefix
 * added by a proxy carries over. Redoc's default fonts would come from Google: the system's are used.
 */
const START_SCRIPT = `(function () {
  var spec = new URL('../openapi.json', document.baseURI).href;
  var fonts = 'system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif';
  Redoc.init(spec, {
    expandResponses: '200,201,202',
    jsonSampleExpandLevel: 3,
    hideDownloadButton: false,
    theme: { typography: { fontFamily: fonts, headings: { fontFamily: fonts }, code: { fontFamily: 'ui-monospace, Menlo, Consolas, monospace' } } }
  }, document.getElementById('reference'));
})();
`;

/**
 * Redoc builds its styles at run time (inline `<style>`), shows small images as `data:` URLs and
 * runs its search index in a worker made from a `blob:` URL; everything else comes from this
 * origin. Its sidebar names its maker with a logo from redoc.ly's CDN: `img-src` refuses it, so
 * the browser never asks. No other site may frame the page.
 */
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self'; worker-src blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

/**
 * Redoc's standalone bundle: the copy `npm run build` puts next to the compiled code
 * (`dist/vendor/`; production images install no devDependencies), else the `redoc` package
 * (a devDependency of this workspace), or null when neither is there.
 */
export function redocBundlePath(): string | null {
  const built = fileURLToPath(new URL('./vendor/redoc.standalone.js', import.meta.url));
  if (existsSync(built)) return built;
  try {
    return createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js');
  } catch {
    return null;
  }
}

/**
 * `GET /docs/api`: the API reference page, rendered in the browser from `/openapi.json` by Redoc
 * (bundled from npm, served from here: the page needs no network beyond this ingest). No auth,
 * like `/openapi.json`: it carries no org data. `/docs/api/` redirects to `/docs/api` so the
 * page's relative URLs resolve. When the bundle is missing (a source checkout installed without
 * devDependencies) the page answers 404 `not_found` saying so.
 *
 * @param bundlePath - Redoc's standalone bundle (default {@link redocBundlePath})
 */
export function apiReferenceRoutes(bundlePath: string | null = redocBundlePath()): Router {
  const router = Router();
  const missing: RequestHandler = (_req, _res, next) => {
    next(new ApiError(404, 'not_found', 'the API reference page is not installed here (its renderer, the redoc package, is missing); /openapi.json has the same content'));
  };
  router.get(API_REFERENCE_PATH, (req, res, next) => {
    if (bundlePath === null) return missing(req, res, next);
    if (req.path.endsWith('/')) return res.redirect(301, '../api');
    res.set(SECURITY_HEADERS).type('html').send(PAGE);
  });
  // Not routes: the page's own files, left out of /openapi.json like the dashboard's.
  router.use(API_REFERENCE_PATH, (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    if (req.path === '/reference.js') return res.set(SECURITY_HEADERS).type('js').send(START_SCRIPT);
    if (req.path !== '/redoc.standalone.js') return next();
    if (bundlePath === null) return missing(req, res, next);
    res.set(SECURITY_HEADERS).sendFile(bundlePath, { etag: true, lastModified: false, cacheControl: false }, (err) => err && next(err));
  });
  return router;
}

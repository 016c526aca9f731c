import { fileURLToPath } from 'node:url';
import express, { Router } from 'express';

/** The folder of the dashboard's static files (HTML, CSS, ES modules; no build step). */
export const DASHBOARD_ROOT = fileURLToPath(new URL('../public/', import.meta.url));

/** The page's Content-Security-Policy, with `frameAncestors` as its `frame-ancestors` sources. */
function contentSecurityPolicy(frameAncestors: readonly string[], logos = false): string {
  const ancestors = frameAncestors.length > 0 ? frameAncestors.join(' ') : "'none'";
  // The portal shows the org's logo, an https URL of the org's choosing; nothing else loads from elsewhere.
  return `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'${logos ? ' https:' : ''}; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors ${ancestors}`;
}

/**
 * Security headers of every dashboard file. The page runs only its own scripts and styles and
 * talks only to its own origin (the v1 API), so an injected script has nowhere to send a key; no
 * other site may frame it.
 */
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': contentSecurityPolicy([]),
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

/** Options of {@link dashboardStatic}. */
export interface DashboardOptions {
  /**
   * Origins allowed to show the customer portal page (`/portal`) in an iframe, e.g.
   * `https://app.example.com` (`PORTAL_FRAME_ANCESTORS`). Empty (default): no site may frame it.
   * The rest of the dashboard is never framed, whatever this says.
   */
  portalFrameAncestors?: readonly string[];
}

/**
 * An express handler serving the dashboard; mount it where it should appear, e.g.
 * `app.use('/dashboard', dashboardStatic())`. `/dashboard` redirects to `/dashboard/` so the page's
 * relative URLs resolve; unknown files fall through to the next handler (the API's JSON 404).
 * `/dashboard/portal` is the same page for a portal session (token in the URL fragment), sent
 * with `frame-ancestors` naming `portalFrameAncestors`.
 */
export function dashboardStatic(options: DashboardOptions = {}): Router {
  const router = Router();
  const portalHeaders = { ...SECURITY_HEADERS, 'content-security-policy': contentSecurityPolicy(options.portalFrameAncestors ?? [], true) };
  router.use((req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    // Public files: a portal framed in a sandbox (an opaque origin) loads its module scripts with CORS.
    res.set('access-control-allow-origin', '*');
    const path = req.originalUrl.split('?')[0] ?? '';
    if (req.path === '/' && !path.endsWith('/')) return res.redirect(301, `${req.baseUrl}/`);
    if (req.path !== '/portal') {
      res.set(SECURITY_HEADERS);
      return next();
    }
    // The same page as the index; its relative URLs resolve under /dashboard/ as the index's do.
    res.set(portalHeaders);
    res.sendFile('index.html', { root: DASHBOARD_ROOT }, (err) => err && next(err));
  });
  router.use(express.static(DASHBOARD_ROOT, { index: 'index.html', redirect: false, dotfiles: 'ignore', etag: true }));
  return router;
}

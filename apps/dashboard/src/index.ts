import { fileURLToPath } from 'node:url';
import express, { Router } from 'express';

/** The folder of the dashboard's static files (HTML, CSS, ES modules; no build step). */
export const DASHBOARD_ROOT = fileURLToPath(new URL('../public/', import.meta.url));

/**
 * Security headers of every dashboard file. The page runs only its own scripts and styles and
 * talks only to its own origin (the v1 API), so an injected script has nowhere to send a key.
 */
const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-cache',
};

/**
 * An express handler serving the dashboard; mount it where it should appear, e.g.
 * `app.use('/dashboard', dashboardStatic())`. `/dashboard` redirects to `/dashboard/` so the page's
 * relative URLs resolve; unknown files fall through to the next handler (the API's JSON 404).
 */
export function dashboardStatic(): Router {
  const router = Router();
  router.use((req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    const path = req.originalUrl.split('?')[0] ?? '';
    if (req.path === '/' && !path.endsWith('/')) return res.redirect(301, `${req.baseUrl}/`);
    res.set(SECURITY_HEADERS);
    next();
  });
  router.use(express.static(DASHBOARD_ROOT, { index: 'index.html', redirect: false, dotfiles: 'ignore', etag: true }));
  return router;
}

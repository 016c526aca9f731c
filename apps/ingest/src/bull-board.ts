import { createHash, timingSafeEqual } from 'node:crypto';
import type { Queue } from 'bullmq';
import express, { type Express, type RequestHandler } from 'express';

/** Where Bull Board is mounted on ingest. */
export const BULL_BOARD_PATH = '/admin/queues';

/**
 * The admin token from `Authorization: Bearer <token>` or HTTP Basic (any user name, the token as
 * password), or null. Basic is there because Bull Board is a browser UI: a browser can only prompt
 * for a user name and password.
 */
export function adminCredential(header: string | undefined): string | null {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  if (bearer) return bearer[1] ?? null;
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!basic) return null;
  const decoded = Buffer.from(basic[1] ?? '', 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : decoded.slice(colon + 1);
}

/**
 * Requires the admin token as Bearer or Basic; otherwise 401 `unauthorized` with
 * `WWW-Authenticate: Basic realm="Postern"`, so a browser asks for it. Compared in constant time.
 */
export function requireAdminForBrowser(adminToken: string): RequestHandler {
  const expected = createHash('sha256').update(adminToken).digest();
  return (req, res, next) => {
    const given = adminCredential(req.headers.authorization);
    if (given !== null && timingSafeEqual(createHash('sha256').update(given).digest(), expected)) return next();
    res.setHeader('www-authenticate', 'Basic realm="Postern"');
    res.status(401).json({ error: { code: 'unauthorized', message: 'admin token required: HTTP Basic (any user, the token as password) or Authorization: Bearer <ADMIN_TOKEN>' } });
  };
}

/**
 * Bull Board for every partition of the deliveries queue at {@link BULL_BOARD_PATH}, behind the
 * admin token (one board entry per partition, named by its prefix).
 * `readOnly` (`BULL_BOARD_READ_ONLY`, default true) hides every action and refuses every request
 * but GET and HEAD (405 `read_only`): retrying, promoting or removing a job by hand bypasses Postern's delivery
 * records, so it is for emergencies only.
 *
 * Bull Board itself (its UI server, templates and schema library: several MB of heap) is loaded on
 * the first request that passes the admin check, not at start: most ingests never serve it.
 */
export function mountBullBoard(app: Express, opts: { queues: readonly Queue[]; adminToken: string; readOnly: boolean }): void {
  const guards: RequestHandler[] = [requireAdminForBrowser(opts.adminToken)];
  if (opts.readOnly) guards.push(refuseChanges);
  // A sub-app of its own whose first layer adds Bull Board's router after it once loaded: express
  // then mounts it as it would at start (views, settings and request prototypes inherited).
  const lazy = express();
  let loaded: Promise<void> | null = null;
  lazy.use((_req, _res, next) => {
    loaded ??= buildBoard(opts).then((board) => void lazy.use(board));
    loaded.then(
      () => next(),
      (err: unknown) => {
        loaded = null;
        next(err);
      },
    );
  });
  // Mounted with app.use so express treats Bull Board as a sub-app (its own views and settings).
  app.use(BULL_BOARD_PATH, ...guards, lazy);
}

/** Loads Bull Board and builds its router for `opts.queues`. */
async function buildBoard(opts: { queues: readonly Queue[]; readOnly: boolean }): Promise<Express> {
  const [{ createBullBoard }, { BullMQAdapter }, { ExpressAdapter }] = await Promise.all([import('@bull-board/api'), import('@bull-board/api/bullMQAdapter'), import('@bull-board/express')]);
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(BULL_BOARD_PATH);
  createBullBoard({
    queues: opts.queues.map(
      (queue, n) =>
        new BullMQAdapter(queue, {
          readOnlyMode: opts.readOnly,
          description: 'One job per delivery attempt chain; the delivery log is the history.',
          // Bull Board tells queues apart by name; the partitions share one, so each gets its number.
          ...(opts.queues.length > 1 ? { prefix: `p${n}-`, displayName: `${queue.name} (partition ${n}, ${queue.opts.prefix ?? ''})` } : {}),
        }),
    ),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Postern queues' } },
  });
  return serverAdapter.getRouter() as Express;
}

/**
 * Read-only mode for every request, not only the queues Bull Board knows to be read-only: its
 * board-wide actions (pause all, resume all) skip read-only queues but still answer 200. Every
 * read is a GET, so anything else is 405 `read_only`.
 */
const refuseChanges: RequestHandler = (req, res, next) => {
  if (req.method === 'GET' || req.method === 'HEAD') return next();
  res.setHeader('allow', 'GET, HEAD');
  res.status(405).json({ error: { code: 'read_only', message: 'Bull Board is read-only (BULL_BOARD_READ_ONLY); use redelivery instead of changing jobs by hand' } });
};

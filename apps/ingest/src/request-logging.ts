import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import type { Logger } from 'pino';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,100}$/;
const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);
const REQUEST_ID_KEY = Symbol('postern.requestId');

/**
 * A logger for lines about one request (the error handler's): a child of `logger` with the
 * request's `requestId`, made on demand; `logger` itself for a request {@link requestLogging} did
 * not see.
 */
export function requestLogger(req: Request, logger: Logger): Logger {
  const requestId = (req as unknown as Record<symbol, string | undefined>)[REQUEST_ID_KEY];
  return requestId === undefined ? logger : logger.child({ requestId });
}

/** The request's id as {@link requestLogging} chose it (`X-Request-Id`); undefined for a request it did not see. */
export function requestIdOf(req: Request): string | undefined {
  return (req as unknown as Record<symbol, string | undefined>)[REQUEST_ID_KEY];
}

/** Query parameters whose values are not logged: a client that puts a key or secret in a URL must not leak it. */
const SECRET_PARAM = /key|secret|token|pass|auth|sig/i;

/**
 * The request URL as logged: the values of query parameters whose names look like credentials
 * (`api_key`, `secret`, `token`, `password`, `auth…`, `sig…`) replaced by `[redacted]`.
 */
export function withoutSecrets(url: string): string {
  const queryAt = url.indexOf('?');
  if (queryAt < 0) return url;
  const query = url
    .slice(queryAt + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      let decoded = name;
      try {
        decoded = decodeURIComponent(name);
      } catch {
        // An undecodable name is matched as written.
      }
      return eq >= 0 && SECRET_PARAM.test(decoded) ? `${name}=[redacted]` : pair;
    })
    .join('&');
  return `${url.slice(0, queryAt)}?${query}`;
}

/**
 * One JSON log line per API request, keyed by a request id: the caller's `X-Request-Id` when it
 * is 1–100 safe characters, else a fresh `req_<uuid>`. The id is echoed in the `X-Request-Id`
 * answer header and is `requestId` on the request's line and on every line logged through
 * {@link requestLogger} (a child logger made only when something logs about the request, such as
 * the error handler; none is made per request).
 *
 * The line is `{requestId, req: {method, url}, res: {statusCode}, responseTime}` (ms), plus
 * `orgId` once a credential named the org and `platformKeyId` when a platform key acted for it, with the
 * message `request completed`, `request aborted` or, for answers ≥ 500, `request errored`: never
 * headers (API keys, the admin token) or bodies (payloads, secrets); the root logger's redaction
 * is the second guard. Probes and scrapes (`/healthz`, `/readyz`, `/metrics`) are not logged. 503
 * (Redis unavailable) logs at `warn`, other answers ≥ 500 at `error`, without a stack: the error
 * handler logs the cause under the same request id. Other answers log at `level` (`info`; `debug`
 * in development's readable logs, `logPlanOf`).
 */
export function requestLogging(logger: Logger, level: 'info' | 'debug' = 'info'): RequestHandler {
  return (req, res, next) => {
    const given = req.headers['x-request-id'];
    const requestId = typeof given === 'string' && REQUEST_ID.test(given) ? given : `req_${randomUUID()}`;
    res.setHeader('x-request-id', requestId);
    (req as unknown as Record<symbol, string>)[REQUEST_ID_KEY] = requestId;

    // Read now: routers rewrite req.url for what they mount.
    const { method } = req;
    const url = withoutSecrets(req.url);
    const queryAt = url.indexOf('?');
    if (QUIET_PATHS.has(queryAt < 0 ? url : url.slice(0, queryAt))) return next();
    const startedMs = Date.now();
    const done = () => {
      res.removeListener('finish', done);
      res.removeListener('close', done);
      const statusCode = res.statusCode;
      const line: Record<string, unknown> = { requestId, req: { method, url }, res: { statusCode }, responseTime: Date.now() - startedMs };
      // Who acted for which org: set by the credential check, absent before it (or without one).
      if (typeof res.locals.orgId === 'string') line.orgId = res.locals.orgId;
      const platformKey = res.locals.platformKey as { id?: string } | undefined;
      if (platformKey?.id) line.platformKeyId = platformKey.id;
      // 503 (Redis unreachable, retried by the client) and 501 (a transfer coding the client chose
      // and Postern does not take) are not Postern's faults: warn, not error.
      if (statusCode === 503 || statusCode === 501) logger.warn(line, 'request errored');
      else if (statusCode >= 500) logger.error(line, 'request errored');
      else logger[level](line, !req.readableAborted && res.writableEnded ? 'request completed' : 'request aborted');
    };
    res.on('finish', done);
    res.on('close', done);
    next();
  };
}

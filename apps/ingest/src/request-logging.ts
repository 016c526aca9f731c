import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,100}$/;
const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * One JSON log line per API request (pino-http), keyed by a request id: the caller's
 * `X-Request-Id` when it is 1–100 safe characters, else a fresh `req_<uuid>`. The id is echoed in
 * the `X-Request-Id` answer header and is `requestId` on every line logged through `req.log`.
 *
 * Only method, URL and status are logged: never headers (API keys, the admin token) or bodies
 * (payloads, secrets); the root logger's redaction is the second guard. Probes and scrapes
 * (`/healthz`, `/readyz`, `/metrics`) are not logged. 503 (Redis unavailable) logs at `warn`,
 * other answers ≥ 500 at `error`, without a stack: the error handler logs the cause.
 */
export function requestLogging(logger: Logger): RequestHandler {
  const middleware = pinoHttp({
    logger,
    genReqId(req: IncomingMessage, res: ServerResponse) {
      const given = req.headers['x-request-id'];
      const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : `req_${randomUUID()}`;
      res.setHeader('x-request-id', id);
      return id;
    },
    // req.log is a child with just the request id (not the whole request) as `requestId`.
    quietReqLogger: true,
    customAttributeKeys: { reqId: 'requestId' },
    serializers: {
      req: (req: { method?: string; url?: string }) => ({ method: req.method, url: req.url }),
      res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
    },
    autoLogging: { ignore: (req) => QUIET_PATHS.has((req.url ?? '').split('?', 1)[0] ?? '') },
    customLogLevel: (_req, res, err) => (res.statusCode === 503 ? 'warn' : err || res.statusCode >= 500 ? 'error' : 'info'),
    // For a 5xx pino-http would attach a made-up "failed with status code" error and its stack;
    // the error handler has already logged the real cause under the same request id.
    customErrorObject: (_req, _res, _err, val: Record<string, unknown>) => ({ res: val.res, responseTime: val.responseTime }),
  });
  return middleware as unknown as RequestHandler;
}

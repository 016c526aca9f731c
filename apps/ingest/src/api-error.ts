import type { ErrorRequestHandler } from 'express';
import { issuePath, plainIssue, type InputSource } from '@postern/shared';
import type { RedisClient } from '@postern/store';
import type { Logger } from 'pino';
import { requestLogger } from './request-logging.js';
import type { z } from 'zod';

/**
 * An error the API answers as `{"error":{"code","message"}}` with `status`. Codes are snake_case
 * and stable; messages are for people and never carry internals.
 */
export class ApiError extends Error {
  /**
   * @param extra - more fields of the error object, e.g. `{line}` for a transformation's syntax error, or `{details: [{path, message}]}` for
   *   `event_invalid` (JSON pointers into `data`).
   * @param retryAfterS - the `Retry-After` header, s (a 503 without one gets 5).
   */
  constructor(readonly status: number, readonly code: string, message: string, readonly extra?: Record<string, unknown>, readonly retryAfterS?: number) {
    super(message);
    this.name = 'ApiError';
  }
}

/** 404 that does not say whether the id exists in another org (docs/architecture.md: never 403). */
export function notFound(what: string): ApiError {
  return new ApiError(404, 'not_found', `${what} not found`);
}

/**
 * 400 naming the first bad field of a zod failure in plain words (`plainIssue`), e.g.
 * `url: url is required (a string)`; never zod's own phrasing. A field the schema does not know
 * reads `body: unknown field "colour"` (for a query string, `source: 'query'`:
 * `query: unknown parameter "colour"`), the wording every route uses. `prefix` goes before the
 * field's path (`events.3`).
 */
export function invalidRequest(error: z.ZodError, prefix = '', source: InputSource = 'body'): ApiError {
  const first = error.issues[0];
  const { path, message } = first ? plainIssue(first, source) : { path: [], message: 'is not valid' };
  return new ApiError(400, 'invalid_request', `${issuePath(path, prefix) || source}: ${message}`);
}

/**
 * Whether `err` means Redis could not be reached. ioredis may still say `ready` for a moment
 * after its socket broke (a write fails with EPIPE before the close is seen), so the error itself
 * counts too: the fail-fast refusal, a connection error code, Redis still loading its data,
 * Redis full (`maxmemory` with `noeviction`: it refuses writes rather than drop data), or a Redis
 * Cluster between a master's death and its replica's promotion (`CLUSTERDOWN`, `TRYAGAIN`, the
 * client's redirections or slot refreshes running out: scripts/failover-report.ts saw ingest answer
 * 500 for these before), or a primary refusing writes without an in-sync replica
 * (`min-replicas-to-write`: `NOREPLICAS`), or a node that was demoted to replica (`READONLY`) or
 * lost its primary (`MASTERDOWN`) answering before the client saw the new topology, or a command
 * in flight when its node's connection closed (ioredis's `AbortError`, seen in the cluster soak
 * during a failover).
 */
export function isRedisUnreachable(err: unknown, redis: RedisClient): boolean {
  if (redis.status !== 'ready') return true;
  const e = err as { name?: string; message?: string; code?: string };
  return (
    e.name === 'MaxRetriesPerRequestError' ||
    e.name === 'ClusterAllFailedError' ||
    ['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'ETIMEDOUT'].includes(e.code ?? '') ||
    /^(Stream isn't writeable|Connection is closed|Command aborted due to connection close|LOADING |OOM |CLUSTERDOWN |TRYAGAIN |NOREPLICAS |READONLY |MASTERDOWN |Too many Cluster redirections|Failed to refresh slots cache)/.test(e.message ?? '')
  );
}

/**
 * The answer to an error that was not an {@link ApiError}: 503 `service_unavailable` when Redis is
 * unreachable (logged as a warning), else 500 `internal_error` (logged with the error) — never
 * internals. An ApiError is returned as it is.
 */
export function toApiError(err: unknown, redis: RedisClient, logger: Logger, context: Record<string, unknown> = {}): ApiError {
  if (err instanceof ApiError) return err;
  if (isRedisUnreachable(err, redis)) {
    logger.warn({ err: (err as { message?: string }).message, ...context }, 'redis unavailable');
    return new ApiError(503, 'service_unavailable', 'storage is unavailable; nothing was stored, retry later');
  }
  logger.error({ err, ...context }, 'unexpected error');
  return new ApiError(500, 'internal_error', 'internal error');
}

/**
 * The last handler: ApiErrors as they are; body-parser's 413, 415 and other 4xx; a malformed
 * path as 400; anything else is logged and answered 503 when Redis is unreachable, else 500 —
 * never a stack trace.
 */
export function errorHandler(deps: { redis: RedisClient; logger: Logger; config?: { maxBodyBytes?: number } }): ErrorRequestHandler {
  const limit = deps.config?.maxBodyBytes;
  const tooLarge = limit === undefined ? 'request body is larger than the limit (MAX_BODY_BYTES)' : `request body is larger than the limit of ${limit} bytes (MAX_BODY_BYTES)`;
  return (err: unknown, req, res, _next) => {
    const e = err as { type?: string; status?: number; message?: string };
    let apiError: ApiError;
    if (err instanceof ApiError) apiError = err;
    else if (e.type === 'entity.too.large') apiError = new ApiError(413, 'payload_too_large', tooLarge);
    else if (e.type === 'encoding.unsupported') apiError = new ApiError(415, 'unsupported_media_type', 'content-encoding must be one of identity, gzip, deflate or br, applied once');
    else if (e.type === 'charset.unsupported') apiError = new ApiError(415, 'unsupported_media_type', 'body must be UTF-8 JSON');
    else if (e.type === 'request.aborted') apiError = new ApiError(400, 'request_aborted', 'request body was not received in full');
    // Express's own 4xx: a path parameter with bad percent-encoding, a body that fails to inflate.
    else if (err instanceof URIError) apiError = new ApiError(400, 'invalid_request', 'path: a percent-escape that is malformed or does not decode to UTF-8');
    else if (typeof e.status === 'number' && e.status >= 400 && e.status < 500) {
      apiError = new ApiError(e.status, 'invalid_request', 'body: could not be read (check content-encoding and content-length)');
    } else apiError = toApiError(err, deps.redis, requestLogger(req, deps.logger), { path: req.path });
    if (res.headersSent) return;
    if (apiError.retryAfterS !== undefined) res.setHeader('retry-after', String(apiError.retryAfterS));
    else if (apiError.status === 503) res.setHeader('retry-after', '5');
    res.status(apiError.status).json({ error: { code: apiError.code, message: apiError.message, ...apiError.extra } });
  };
}

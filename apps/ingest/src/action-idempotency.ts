import { createHash } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from './api-error.js';
import type { AppDeps } from './app-deps.js';

/** How long a call waits for a concurrent call with the same key to answer, ms. */
export const IDEMPOTENCY_WAIT_MS = 15_000;
const POLL_MS = 20;

/**
 * The request's `Idempotency-Key` header, or undefined without one. Sent twice, Node would join the
 * two values with a comma into a key nobody chose: that is 400, naming the problem.
 *
 * @throws ApiError 400 `invalid_request` when the header is sent more than once
 */
export function idempotencyKeyHeader(req: Request<unknown>): string | undefined {
  const values = req.headersDistinct['idempotency-key'];
  if (values && values.length > 1) throw new ApiError(400, 'invalid_request', 'Idempotency-Key: send the header once');
  return values?.[0];
}

/**
 * `Idempotency-Key` for an action route (redeliver, redeliver-failed, recover, pause, resume,
 * rotate-secret, test). Mount it after authentication and the body parser, before the handler:
 *
 * - without the header, the request goes through unchanged;
 * - the first call with a key claims it (one Redis `SET NX`, scoped to the org and `route`), runs
 *   the action and stores its answer (status and JSON body) for 24 h before sending it;
 * - a later or concurrent call with the same key and the same request (same target id and body)
 *   gets that answer again, with `Idempotent-Replayed: true`, and nothing runs a second time;
 *   a concurrent one waits for the first to answer (at most {@link IDEMPOTENCY_WAIT_MS}, then 409
 *   `idempotency_key_in_use`);
 * - the same key with a different request is 409 `idempotency_key_reused`;
 * - a 5xx answer (Redis unreachable, a bug) is not stored: the key is released so a retry runs.
 *
 * The key must be 1–200 characters (else 400); it is stored hashed. The handler is generic in the
 * route's params, so express still types the next handler's `req.params` from the route path.
 */
export function actionIdempotency(deps: AppDeps, route: string): <Params>(req: Request<Params>, res: Response, next: NextFunction) => Promise<void> {
  return async <Params>(req: Request<Params>, res: Response, next: NextFunction): Promise<void> => {
    const key = idempotencyKeyHeader(req);
    if (key === undefined) return next();
    // Header bytes arrive as Latin-1: a non-ASCII key would be stored garbled and never match again.
    if (key !== undefined && !/^[\x20-\x7e]*$/.test(key)) {
      throw new ApiError(400, 'invalid_request', 'Idempotency-Key: header must be printable ASCII');
    }
    if (key.length < 1 || key.length > 200) throw new ApiError(400, 'invalid_request', 'Idempotency-Key: header must be 1 to 200 characters');
    const orgId = res.locals.orgId as string;
    const keyHash = createHash('sha256').update(key).digest('hex');
    const fingerprint = createHash('sha256')
      .update(req.method)
      .update('\0')
      .update(req.originalUrl.split('?', 1)[0] ?? '')
      .update('\0')
      .update(JSON.stringify(req.body ?? {}))
      .digest('hex');
    const repo = deps.store.actionIdempotency;

    const deadline = Date.now() + IDEMPOTENCY_WAIT_MS;
    for (;;) {
      const claim = await repo.claim(orgId, route, keyHash, fingerprint);
      if (claim.claimed) break;
      const record = claim.record;
      // Released or expired between our SET and GET: try to claim it again.
      if (record === null) continue;
      if (record.fingerprint !== fingerprint) {
        throw new ApiError(409, 'idempotency_key_reused', 'this Idempotency-Key was used in the last 24 h for a different request');
      }
      if (record.state === 'done') {
        res.setHeader('idempotent-replayed', 'true');
        res.status(record.status).json(record.body);
        return;
      }
      if (Date.now() > deadline) {
        throw new ApiError(409, 'idempotency_key_in_use', 'a request with this Idempotency-Key is still running; retry shortly');
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }

    // This call holds the key: the answer is stored before it is sent, so whoever sees the
    // answer also finds it stored.
    const send = res.json.bind(res);
    res.json = (body: unknown) => {
      const status = res.statusCode;
      const settle = status >= 500 ? repo.release(orgId, route, keyHash) : repo.complete(orgId, route, keyHash, { state: 'done', fingerprint, status, body });
      settle.then(
        () => send(body),
        (err: unknown) => {
          deps.logger.warn({ err: (err as Error).message, route }, 'idempotency answer not stored');
          send(body);
        },
      );
      return res;
    };
    next();
  };
}

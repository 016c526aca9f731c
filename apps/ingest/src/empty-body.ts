import type { NextFunction, Request, Response } from 'express';
import { ApiError } from './api-error.js';

/**
 * For actions that take no input (pause, resume, test, redeliver, redeliver-failed): no body, or
 * `{}`, and nothing else. A field sent anyway (a typo, an option that does not exist) is refused
 * with 400 `invalid_request` rather than silently ignored. Generic in the route's params so that
 * express still types the next handler's `req.params` from the route path.
 */
export function requireEmptyBody<Params>(req: Request<Params>, _res: Response, next: NextFunction): void {
  const body = req.body as unknown;
  if (body === undefined) return next();
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return next(new ApiError(400, 'invalid_request', 'body: must be empty or {}; this action takes no fields'));
  }
  const [field] = Object.keys(body);
  if (field !== undefined) return next(new ApiError(400, 'invalid_request', `body: unknown field "${field}"; this action takes no fields`));
  next();
}

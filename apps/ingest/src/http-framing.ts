import type { RequestHandler } from 'express';
import { ApiError } from './api-error.js';

/**
 * An HTTP/1.1 request without a `Host` header: 400 `missing_host`, connection closed (RFC 9112
 * §3.2). Node answers this itself with a bare 400 and no body unless the server is created with
 * `requireHostHeader: false` ({@link createIngestServer} does), so the API answers it in its own
 * error shape. HTTP/1.0 needs no `Host`; an empty one is valid (a target without an authority).
 */
export const refuseMissingHost: RequestHandler = (req, res, next) => {
  if (req.httpVersionMajor !== 1 || req.httpVersionMinor !== 1 || req.headers.host !== undefined) return next();
  res.setHeader('connection', 'close');
  next(new ApiError(400, 'missing_host', 'an HTTP/1.1 request must carry a Host header'));
};

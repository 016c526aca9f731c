import express, { type RequestHandler } from 'express';
import { ApiError } from './api-error.js';

/**
 * Reads request bodies as raw bytes (at most `maxBytes`, else 413), requires
 * `application/json` when there is a body (else 415), parses it (else 400 `invalid_json`), and
 * keeps the exact text in `res.locals.rawBody` so an event's `data` can be stored byte for byte.
 */
export function jsonBody(maxBytes: number): RequestHandler[] {
  const raw = express.raw({ type: () => true, limit: maxBytes });
  const parse: RequestHandler = (req, res, next) => {
    const body = req.body as unknown;
    const bytes = Buffer.isBuffer(body) ? body : Buffer.alloc(0);
    if (bytes.length === 0) {
      req.body = undefined;
      res.locals.rawBody = '';
      return next();
    }
    const type = req.headers['content-type'] ?? '';
    if (!/^application\/(.+\+)?json\s*(;|$)/i.test(type)) {
      return next(new ApiError(415, 'unsupported_media_type', 'content-type must be application/json'));
    }
    const text = bytes.toString('utf8');
    try {
      req.body = JSON.parse(text) as unknown;
    } catch {
      return next(new ApiError(400, 'invalid_json', 'body is not valid JSON'));
    }
    res.locals.rawBody = text;
    next();
  };
  return [raw, parse];
}

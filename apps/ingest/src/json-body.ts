import express, { type RequestHandler } from 'express';
import { ApiError } from './api-error.js';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Deepest nesting of arrays and objects a body may have: deeper JSON cannot be served back safely. */
export const MAX_JSON_DEPTH = 128;

/** Nesting depth of JSON text (brackets outside strings), stopping early past `limit`. */
function jsonDepthExceeds(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 /* [ */ || c === 123 /* { */) {
      if (++depth > limit) return true;
    } else if (c === 93 /* ] */ || c === 125 /* } */) depth--;
  }
  return false;
}

/** How many Content-Type headers a request has (`rawHeaders`: name, value, name, value, …). */
function contentTypeCount(rawHeaders: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === 'content-type') n++;
  return n;
}

/**
 * Reads request bodies as raw bytes (at most `maxBytes`, else 413), requires UTF-8
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
    // Node keeps the first of several Content-Type headers and drops the rest: a body whose type
    // is ambiguous is refused instead of being read as the first one says.
    if (contentTypeCount(req.rawHeaders) > 1) {
      return next(new ApiError(400, 'invalid_request', 'content-type: given more than once; send one'));
    }
    const type = req.headers['content-type'] ?? '';
    if (!/^application\/(.+\+)?json\s*(;|$)/i.test(type)) {
      return next(new ApiError(415, 'unsupported_media_type', 'content-type must be application/json'));
    }
    const charset = /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(type)?.[1];
    if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
      return next(new ApiError(415, 'unsupported_media_type', 'body must be UTF-8 JSON (charset=utf-8)'));
    }
    let text: string;
    try {
      // Invalid UTF-8 would otherwise become U+FFFD silently, and `data` would not be byte for byte.
      text = utf8.decode(bytes);
    } catch {
      return next(new ApiError(400, 'invalid_json', 'body is not valid UTF-8'));
    }
    // RFC 8259 §8.1: JSON sent over a network carries no byte order mark. Refused by name, so the
    // producer learns what to drop (`data` is kept byte for byte, so it is not stripped silently).
    if (text.charCodeAt(0) === 0xfeff) {
      return next(new ApiError(400, 'invalid_json', 'body starts with a byte order mark (U+FEFF): send the JSON without it'));
    }
    if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) {
      return next(new ApiError(400, 'invalid_json', `body is nested deeper than ${MAX_JSON_DEPTH} levels`));
    }
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

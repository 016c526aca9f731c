import type { RequestHandler } from 'express';
import { ApiError } from './api-error.js';

/**
 * The `Host` header (RFC 9112 §3.2):
 * - an HTTP/1.1 request without one: 400 `missing_host`. Node answers this itself with a bare 400
 *   and no body unless the server is created with `requireHostHeader: false`
 *   ({@link createIngestServer} does), so the API answers it in its own error shape. HTTP/1.0 needs
 *   no `Host`; an empty one is valid (a target without an authority);
 * - a request with more than one: 400 `bad_request` (Node keeps the first and drops the rest, so a
 *   proxy in front that read the last one would have routed a different request than this one).
 *
 * Either way the connection is closed.
 */
export const checkHostHeader: RequestHandler = (req, res, next) => {
  let hosts = 0;
  // rawHeaders alternates names and values; a request has few headers.
  for (let i = 0; i < req.rawHeaders.length; i += 2) if (req.rawHeaders[i]!.length === 4 && req.rawHeaders[i]!.toLowerCase() === 'host') hosts++;
  if (hosts > 1) {
    res.setHeader('connection', 'close');
    return next(new ApiError(400, 'bad_request', 'the request is not valid HTTP/1.1: it carries more than one Host header'));
  }
  if (req.httpVersionMajor !== 1 || req.httpVersionMinor !== 1 || req.headers.host !== undefined) return next();
  res.setHeader('connection', 'close');
  next(new ApiError(400, 'missing_host', 'an HTTP/1.1 request must carry a Host header'));
};

/**
 * A transfer coding other than `chunked` (`Transfer-Encoding: gzip, chunked`): 501
 * `transfer_encoding_not_supported`, connection closed (RFC 9112 §6.1: a server that does not
 * understand a transfer coding answers 501). Compression goes in `Content-Encoding`.
 * `chunked` not last (`Transfer-Encoding: gzip`) leaves the body's length unknown: 400
 * `bad_request`, as Node's parser answers it when it meets the body first (RFC 9112 §6.3).
 */
export const refuseUnknownTransferCoding: RequestHandler = (req, res, next) => {
  const header = req.headers['transfer-encoding'];
  if (header === undefined) return next();
  const codings = header
    .split(',')
    .map((coding) => coding.trim().toLowerCase())
    .filter((coding) => coding !== '');
  const unknown = codings.filter((coding) => coding !== 'chunked');
  if (unknown.length === 0) return next();
  res.setHeader('connection', 'close');
  if (codings.at(-1) !== 'chunked') return next(new ApiError(400, 'bad_request', 'the request is not valid HTTP/1.1: Transfer-Encoding must end with chunked'));
  next(
    new ApiError(501, 'transfer_encoding_not_supported', `Transfer-Encoding ${unknown.join(', ')} is not supported: send the body with Transfer-Encoding: chunked alone or a Content-Length, and compress it with Content-Encoding`),
  );
};

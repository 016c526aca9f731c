import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

/** What a request that never reached a route is told, by the parser's error code. */
function answerFor(code: string | undefined): { status: number; code: string; message: string } {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') return { status: 408, code: 'request_timeout', message: 'the request was not received in time (HTTP_HEADERS_TIMEOUT_MS / HTTP_REQUEST_TIMEOUT_MS)' };
  if (code === 'HPE_HEADER_OVERFLOW') return { status: 431, code: 'headers_too_large', message: 'the request headers are too large' };
  return { status: 400, code: 'bad_request', message: 'the request is not valid HTTP/1.1 (e.g. both Content-Length and Transfer-Encoding, or a body longer than its Content-Length)' };
}

/**
 * The HTTP server's `clientError` handler: a request Node's parser refused, or one that timed out
 * before it was whole, is answered in the API's error shape (`{"error":{"code","message"}}`: 400
 * `bad_request`, 408 `request_timeout`, 431 `headers_too_large`) and its connection closed,
 * instead of Node's bare status line. A connection already answering, or gone, is only closed.
 */
export function answerClientError(err: Error & { code?: string }, socket: Duplex): void {
  const inProgress = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || inProgress?.headersSent) {
    socket.destroy();
    return;
  }
  const answer = answerFor(err.code);
  const body = JSON.stringify({ error: { code: answer.code, message: answer.message } });
  socket.end(
    `HTTP/1.1 ${answer.status} ${STATUS_CODES[answer.status]}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
}

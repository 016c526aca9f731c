import { unsafeAddressReason } from './address-guard.js';
import { proxyErrorCode } from './proxy-agents.js';

/**
 * Maps a failed HTTP request to Postern's closed set of error codes, never to a message: a
 * message can carry an internal address. Node/OpenSSL codes are kept after a colon
 * (`connection_failed:ECONNREFUSED`) because receivers use them to debug. custral's code table.
 */
const CONNECTION_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED', 'EADDRNOTAVAIL', 'ENETDOWN', 'EHOSTDOWN',
  'UND_ERR_SOCKET', 'ERR_STREAM_PREMATURE_CLOSE',
]);
/**
 * Node's HTTP parser (llhttp) refusing the answer: `HPE_INVALID_STATUS`, `HPE_INVALID_CONSTANT`
 * (not HTTP at all), `HPE_HEADER_OVERFLOW` (headers over Node's 16 KB), … The receiver did answer,
 * but not in HTTP Postern can read; the parser's code says how.
 */
const PARSER_CODE = /^HPE_[A-Z_]+$/;
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME', 'ESERVFAIL', 'ENODATA']);
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT']);

interface ErrorLike {
  name?: string;
  code?: string;
  message?: string;
  cause?: unknown;
}

/**
 * The error code for a request that produced no usable response.
 * - A failure on the way through the egress proxy (`proxy-agents.ts`) → `proxy_error:<code>`.
 * - The connect-time guard's refusal (`address-guard.ts`) → `unsafe_url:<its reason>`, the same
 *   reason the pre-send check gives for that address.
 * - request-filtering-agent's own refusal (its second line, reported only in a message) →
 *   `unsafe_url:<blockedAddressReason(address)>`, or `unsafe_url:blocked_address`.
 * - Then `timeout`, `too_many_redirects`, `unsafe_url:redirect_scheme` (a redirect to a scheme other
 *   than http or https, or to a UNIX socket), `dns_lookup_failed:<ECODE>`,
 *   `connection_failed:<ECODE>` (an answer Node's parser refused too: `connection_failed:HPE_…`),
 *   `tls_error:<ECODE>`, else `delivery_failed`.
 * @param err what got (or the socket) threw
 * @param blockedAddressReason classifies an address request-filtering-agent refused (returns
 *   e.g. `loopback`, or null)
 */
export function classifyNetworkError(err: unknown, blockedAddressReason: (address: string) => string | null): string {
  const e = (err ?? {}) as ErrorLike;
  const cause = (e.cause ?? {}) as ErrorLike;
  const code = e.code && e.code !== 'ERR_GOT_REQUEST_ERROR' ? e.code : (cause.code ?? e.code ?? '');
  const message = `${e.message ?? ''} ${cause.message ?? ''}`;

  const proxy = proxyErrorCode(err);
  if (proxy) return `proxy_error:${proxy}`;
  const refused = unsafeAddressReason(err);
  if (refused) return `unsafe_url:${refused}`;
  const blocked = /DNS lookup (\S+?)\(family:[^)]*\) is not allowed/.exec(message);
  if (blocked) {
    const reason = blockedAddressReason(blocked[1] ?? '') ?? 'blocked_address';
    return `unsafe_url:${reason}`;
  }
  if (e.name === 'TimeoutError' || cause.name === 'TimeoutError' || TIMEOUT_CODES.has(code)) return 'timeout';
  if (e.name === 'MaxRedirectsError' || code === 'ERR_TOO_MANY_REDIRECTS') return 'too_many_redirects';
  // got refuses a redirect to anything but http(s) (`file:`, `ftp:`, `data:`…) or to a UNIX socket.
  if (code === 'ERR_UNSUPPORTED_PROTOCOL' || /Cannot redirect to UNIX socket/.test(message)) return 'unsafe_url:redirect_scheme';
  if (DNS_CODES.has(code)) return `dns_lookup_failed:${code}`;
  if (CONNECTION_CODES.has(code) || PARSER_CODE.test(code)) return `connection_failed:${code}`;
  if (isTlsCode(code)) return `tls_error:${code}`;
  return 'delivery_failed';
}

function isTlsCode(code: string): boolean {
  return (
    code.startsWith('ERR_SSL_') ||
    code.startsWith('ERR_TLS_') ||
    code.startsWith('CERT_') ||
    code === 'EPROTO' ||
    code === 'DEPTH_ZERO_SELF_SIGNED_CERT' ||
    code === 'SELF_SIGNED_CERT_IN_CHAIN' ||
    code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' ||
    code === 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY' ||
    code === 'UNABLE_TO_GET_ISSUER_CERT'
  );
}

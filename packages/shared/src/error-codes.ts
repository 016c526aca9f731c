import type { Policy } from './policy.js';

/**
 * A failed attempt's error code: one of the closed set below, never a message
 * or an address (docs/architecture.md, "Error codes"). Shapes:
 * `http_<status>` · `redirect_not_followed` · `too_many_redirects` · `timeout` ·
 * `connection_failed[:<ECODE>]` · `tls_error[:<CODE>]` ·
 * `dns_lookup_failed[:<ECODE>]` · `unsafe_url:<reason>` · `auth_failed:<reason>` ·
 * `proxy_error:<code>` · `transformation_failed:<reason>` · `payload_too_large` ·
 * `endpoint_inactive` · `endpoint_deleted` · `org_suspended` ·
 * `internal:<reason>` · `delivery_failed`.
 * Details after the colon match `[A-Za-z0-9_]+`.
 */
export type ErrorCode = string;

/** The part of an error code before any detail; `http` stands for every `http_<status>`. */
export type ErrorFamily =
  | 'http'
  | 'redirect_not_followed'
  | 'too_many_redirects'
  | 'timeout'
  | 'connection_failed'
  | 'tls_error'
  | 'dns_lookup_failed'
  | 'unsafe_url'
  | 'auth_failed'
  | 'proxy_error'
  | 'transformation_failed'
  | 'payload_too_large'
  | 'endpoint_inactive'
  | 'endpoint_deleted'
  | 'org_suspended'
  | 'internal'
  | 'delivery_failed';

/**
 * `yes`, `no`, `policy` when a field of the endpoint's policy decides, or `reason` when the detail
 * after the colon decides (`transformation_failed`: `timeout` and `memory` are retried).
 */
export type ErrorRule = 'yes' | 'no' | 'policy' | 'reason';

/** One row of the error code table. */
export interface ErrorCodeInfo {
  /** The code as documented, e.g. `http_<status>` or `connection_failed[:<ECODE>]`. */
  code: string;
  family: ErrorFamily;
  /** What happened, in a sentence a receiver's developer understands. */
  meaning: string;
  /**
   * Whether another attempt follows (while attempts remain). Apart from the
   * permanent codes, a `webhook.test` delivery is not retried when the
   * policy's `retryTestEvents` is false (vestiarion).
   */
  retried: ErrorRule;
  /** Whether the failure extends the endpoint's failure streak (the breaker's count). */
  countsAgainstEndpoint: ErrorRule;
}

/**
 * The one table of delivery error codes: meaning, retried, counted against
 * the endpoint. README's table is checked against it. `policy` in
 * `countsAgainstEndpoint` means: counted, except that a breaker with
 * `of: '4xx'` counts only `http_4xx` (tourical), and `unsafe_url` counts only
 * with `unsafeUrlCountsAgainstEndpoint` (vestiarion).
 */
export const ERROR_CODES: readonly ErrorCodeInfo[] = Object.freeze(
  (
    [
      ['http_<status>', 'http', 'The endpoint answered with this non-2xx status.', 'yes', 'policy'],
      ['redirect_not_followed', 'redirect_not_followed', 'The endpoint answered 3xx and the policy does not follow redirects.', 'yes', 'policy'],
      ['too_many_redirects', 'too_many_redirects', 'Redirects looped or went past the policy\'s hop limit.', 'yes', 'policy'],
      ['timeout', 'timeout', 'No complete answer within the policy\'s timeout.', 'yes', 'policy'],
      ['connection_failed[:<ECODE>]', 'connection_failed', 'No connection could be opened, it dropped before an answer (refused, reset, unreachable), or the answer was not HTTP that Node\'s parser reads (`HPE_…`, e.g. `HPE_HEADER_OVERFLOW`: headers over 16 KB); the code follows the colon.', 'yes', 'policy'],
      ['tls_error[:<CODE>]', 'tls_error', 'TLS could not be negotiated, or the certificate was not trusted; the OpenSSL or Node code follows the colon.', 'yes', 'policy'],
      ['dns_lookup_failed[:<ECODE>]', 'dns_lookup_failed', 'DNS gave no usable address for the endpoint\'s host name; the resolver code follows the colon.', 'yes', 'policy'],
      ['unsafe_url:<reason>', 'unsafe_url', 'The URL, or an address its hostname resolved to, is not a public destination (the reason follows the colon, e.g. `loopback`, `private`; `redirect_scheme`: a redirect pointed at a scheme other than http or https, such as `file:`, or at a UNIX socket, and was not followed).', 'policy', 'policy'],
      ['auth_failed:<reason>', 'auth_failed', 'The endpoint\'s OAuth 2.0 token endpoint gave no token, so nothing was sent (or, when the receiver answered 401 to a cached token and no new one came, nothing was sent again: the 401 is the attempt\'s response): `token_http_<status>` (it answered that status), `token_timeout` (no answer in time), `token_bad_answer` (no usable token in the answer), `token_<code>` for a connection, TLS, DNS or address failure (e.g. `token_connection_failed_ECONNREFUSED`).', 'yes', 'policy'],
      ['proxy_error:<code>', 'proxy_error', 'The egress proxy could not be used: unreachable, refused the tunnel (`status_<status>`, e.g. `status_407` for bad proxy credentials), timed out, or its address is not allowed; the code follows the colon.', 'yes', 'policy'],
      ['transformation_failed:<reason>', 'transformation_failed', 'The endpoint\'s transformation did not give a request to send, so nothing was sent: `timeout` or `memory` (over its caps; retried on the policy\'s schedule, as it may pass), `error` (it threw, or defines no handler), `bad_result` (its answer is not a request) or `unsafe_url` (it chose a URL that is not a public destination); these three fail the delivery at once. Never held against the endpoint: it is the endpoint\'s configuration, not the receiver\'s health.', 'reason', 'no'],
      ['payload_too_large', 'payload_too_large', 'The envelope is larger than the policy allows, so it was never sent.', 'no', 'no'],
      ['endpoint_inactive', 'endpoint_inactive', 'The endpoint was paused or disabled before the attempt.', 'no', 'no'],
      ['endpoint_deleted', 'endpoint_deleted', 'The endpoint was deleted before the attempt.', 'no', 'no'],
      ['org_suspended', 'org_suspended', 'The organisation was suspended before the attempt.', 'no', 'no'],
      ['internal:<reason>', 'internal', 'A fault inside Postern, not the endpoint; it is retried and never held against the endpoint.', 'yes', 'no'],
      ['delivery_failed', 'delivery_failed', 'A failure that fits none of the codes above.', 'yes', 'policy'],
    ] as const
  ).map(([code, family, meaning, retried, countsAgainstEndpoint]) =>
    Object.freeze({ code, family, meaning, retried, countsAgainstEndpoint }),
  ),
);

const DETAIL = '[A-Za-z0-9_]+';
const VALID = new RegExp(
  '^(?:http_[1-9][0-9]{2}' +
    '|redirect_not_followed|too_many_redirects|timeout|payload_too_large' +
    '|endpoint_inactive|endpoint_deleted|org_suspended|delivery_failed' +
    `|(?:connection_failed|tls_error|dns_lookup_failed)(?::${DETAIL})?` +
    `|(?:unsafe_url|internal|auth_failed|proxy_error):${DETAIL}` +
    '|transformation_failed:(?:error|timeout|memory|bad_result|unsafe_url))$',
);

/**
 * Whether `code` belongs to the closed set: `http_` takes a 3-digit status
 * 100..999, details are `[A-Za-z0-9_]+`, and `unsafe_url`, `internal`,
 * `auth_failed` and `proxy_error` require one; `transformation_failed` takes one of
 * `error`, `timeout`, `memory`, `bad_result`, `unsafe_url`.
 */
export function isValidErrorCode(code: string): boolean {
  return typeof code === 'string' && VALID.test(code);
}

/**
 * The family of a concrete code: `http_503` → `http`,
 * `connection_failed:ECONNREFUSED` → `connection_failed`. Anything not in the
 * closed set → `delivery_failed`.
 */
export function errorFamily(code: string): ErrorFamily {
  if (!isValidErrorCode(code)) return 'delivery_failed';
  if (code.startsWith('http_')) return 'http';
  const colon = code.indexOf(':');
  return (colon < 0 ? code : code.slice(0, colon)) as ErrorFamily;
}

/**
 * The code for an HTTP answer: `http_<status>`.
 *
 * @param status - integer 100..999.
 * @throws RangeError for anything else.
 */
export function httpStatusCode(status: number): string {
  if (!Number.isInteger(status) || status < 100 || status > 999) {
    throw new RangeError(`HTTP status must be an integer from 100 to 999, got ${status}`);
  }
  return `http_${status}`;
}

const NEVER_RETRIED: ReadonlySet<ErrorFamily> = new Set([
  'payload_too_large',
  'endpoint_inactive',
  'endpoint_deleted',
  'org_suspended',
]);

/** Options of {@link isRetried} and {@link countsAgainstEndpoint}. */
export interface ErrorRuleOptions {
  /** The delivery is a `webhook.test` event. */
  isTestEvent: boolean;
}

/**
 * Whether a failed attempt with this code gets another attempt (if any
 * remain under `maxAttempts`).
 *
 * In order: `payload_too_large`, `endpoint_inactive`, `endpoint_deleted` and
 * `org_suspended` never; a test event never when `retryTestEvents` is false
 * (vestiarion); `unsafe_url:*` only when `unsafeUrl` is `retry` (custral
 * fails it at once; 001 to 004 retry); everything else, `internal:*`
 * included, yes. `transformation_failed:timeout` and `:memory` yes (a busy process or a large
 * event may pass); `:error`, `:bad_result` and `:unsafe_url` never (the same code on the same
 * event fails the same way).
 */
export function isRetried(code: string, policy: Policy, opts: ErrorRuleOptions): boolean {
  const family = errorFamily(code);
  if (NEVER_RETRIED.has(family)) return false;
  if (opts.isTestEvent && !policy.retryTestEvents) return false;
  if (family === 'unsafe_url') return policy.unsafeUrl === 'retry';
  if (family === 'transformation_failed') return code === 'transformation_failed:timeout' || code === 'transformation_failed:memory';
  return true;
}

/**
 * Whether a failed attempt with this code extends the endpoint's failure
 * streak.
 *
 * Never for `internal:*` (Postern's fault; vestiarion), `transformation_failed:*` (the endpoint's
 * own configuration, not the receiver's health) or for
 * `payload_too_large`, `endpoint_inactive`, `endpoint_deleted` and
 * `org_suspended`. With a breaker whose `of` is `4xx`, only `http_4xx` counts
 * (tourical). `unsafe_url:*` counts only when `unsafeUrlCountsAgainstEndpoint`
 * (vestiarion). A test event counts only when the breaker's `countTestEvents`
 * is set (vestiarion), and never without a breaker. Everything else counts.
 *
 * @param opts - optional; without it the attempt is not a test event.
 */
export function countsAgainstEndpoint(code: string, policy: Policy, opts?: Partial<ErrorRuleOptions>): boolean {
  const family = errorFamily(code);
  if (family === 'internal' || family === 'transformation_failed' || NEVER_RETRIED.has(family)) return false;
  if (opts?.isTestEvent && !policy.breaker?.countTestEvents) return false;
  if (policy.breaker?.of === '4xx') {
    const status = family === 'http' ? Number(code.slice('http_'.length)) : 0;
    return status >= 400 && status <= 499;
  }
  if (family === 'unsafe_url') return policy.unsafeUrlCountsAgainstEndpoint;
  return true;
}

/**
 * An endpoint's request settings: static headers, authentication and an egress proxy, as pure
 * rules. What is secret (a secret header's value, a password, a token, a client secret, a private
 * key, a proxy password) lives apart from the settings, in {@link RequestSecrets}, so it is stored
 * through one seam (packages/store `request-secrets.ts`) and never shown: reads show
 * {@link MASKED} in its place.
 */

/** What a read shows in place of a secret value. */
export const MASKED = '••••';

/** Most static headers an endpoint may have. */
export const MAX_STATIC_HEADERS = 20;

/** Longest static header value, bytes of UTF-8 (most servers refuse header lines past 8 KB). */
export const MAX_HEADER_VALUE_BYTES = 4096;

/**
 * Most bytes all of an endpoint's static headers may add up to, names and values: they go with
 * every attempt (and its record in the delivery log), and receivers refuse header blocks past a
 * few KB (Node's default limit is 16 KB for the whole block).
 */
export const MAX_STATIC_HEADER_BYTES = 8192;

/**
 * Header names Postern owns, compared lower-case: the Standard Webhooks and Postern headers
 * (`webhook-*`, a prefix), what describes the body or the connection (`content-type`,
 * `content-length`, `host`, `user-agent`, `traceparent`), and the hop-by-hop headers of RFC 9110
 * §7.6.1 (`connection`, `keep-alive`, `proxy-*`, `te`, `trailer`, `transfer-encoding`, `upgrade`).
 * `authorization` is the `auth` setting's.
 */
export const RESERVED_HEADER_NAMES: readonly string[] = Object.freeze([
  'content-type',
  'content-length',
  'host',
  'user-agent',
  'traceparent',
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'authorization',
]);
const RESERVED_PREFIXES = ['webhook-', 'proxy-'];

/** RFC 9110 §5.6.2 `token`: 1*tchar. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/**
 * Why a static header name is refused, or null when it may be used: `not_a_token` (RFC 9110
 * §5.6.2), `reserved` (Postern's own or hop-by-hop, {@link RESERVED_HEADER_NAMES}; `webhook-*`,
 * `proxy-*`), `use_auth` (`authorization`: the `auth` setting sends it).
 */
export function headerNameProblem(name: string): 'not_a_token' | 'reserved' | 'use_auth' | null {
  if (!TOKEN.test(name)) return 'not_a_token';
  const lower = name.toLowerCase();
  if (lower === 'authorization') return 'use_auth';
  if (RESERVED_HEADER_NAMES.includes(lower) || RESERVED_PREFIXES.some((p) => lower.startsWith(p))) return 'reserved';
  return null;
}

/**
 * Whether a header value can be sent as written: RFC 9110 §5.5 field-value (visible ASCII, space
 * and tab inside, no CR, LF or NUL), no space at either end (HTTP trims it), at most
 * {@link MAX_HEADER_VALUE_BYTES} bytes. Empty is allowed.
 */
export function isValidHeaderValue(value: string): boolean {
  return /^(?:[\x21-\x7e](?:[\x20-\x7e\t]*[\x21-\x7e])?)?$/.test(value) && value.length <= MAX_HEADER_VALUE_BYTES;
}

/** One static header: a non-secret one carries its value here; a secret one's is in {@link RequestSecrets.headers}. */
export interface StaticHeader {
  name: string;
  secret: boolean;
  /** The value of a non-secret header; absent for a secret one. */
  value?: string;
}

/** How a client authenticates to the OAuth 2.0 token endpoint (RFC 6749 §2.3.1): HTTP Basic (default) or form fields. */
export type ClientAuthentication = 'client_secret_basic' | 'client_secret_post';

/** The non-secret part of an endpoint's `auth`. */
export type AuthSettings =
  | { type: 'basic'; username: string }
  | { type: 'bearer' }
  | {
      type: 'oauth2_client_credentials';
      tokenUrl: string;
      clientId: string;
      scope: string | null;
      audience: string | null;
      /** More form fields of the token request, name → value (not secret). */
      extraParams: Record<string, string>;
      clientAuthentication: ClientAuthentication;
    }
  | { type: 'mtls'; certificate: string; ca: string | null };

/** An endpoint's egress proxy: its URL without credentials, and the user name when it has one. */
export interface ProxySettings {
  /** `http://host:port` or `https://host:port`. */
  url: string;
  username: string | null;
}

/** An endpoint's request settings without their secrets (endpoint hash field `request`). */
export interface RequestSettings {
  headers: StaticHeader[];
  auth: AuthSettings | null;
  proxy: ProxySettings | null;
}

/** The secrets of an endpoint's request settings (endpoint hash field `requestSecrets`). */
export interface RequestSecrets {
  /** Values of the secret static headers, by name as written. */
  headers?: Record<string, string>;
  /** `basic` */
  password?: string;
  /** `bearer` */
  token?: string;
  /** `oauth2_client_credentials` */
  clientSecret?: string;
  /** `mtls`, PEM */
  privateKey?: string;
  /** The proxy's password. */
  proxyPassword?: string;
}

/** No headers, no auth, no proxy: what an endpoint has until it sets any. */
export const NO_REQUEST_SETTINGS: RequestSettings = Object.freeze({ headers: [], auth: null, proxy: null }) as RequestSettings;

/** Whether the settings' auth sends an `authorization` header (basic, bearer, OAuth 2.0). */
export function sendsAuthorization(auth: AuthSettings | null): boolean {
  return auth !== null && auth.type !== 'mtls';
}

/**
 * The headers the delivery log shows besides Postern's own: static headers (names lower-case,
 * secret values as {@link MASKED}) and `authorization: "••••"` when the auth sends one. Never a
 * secret value.
 */
export function shownRequestHeaders(settings: RequestSettings): Record<string, string> {
  const shown: Record<string, string> = {};
  for (const h of settings.headers) shown[h.name.toLowerCase()] = h.secret ? MASKED : (h.value ?? '');
  if (sendsAuthorization(settings.auth)) shown.authorization = MASKED;
  return shown;
}

/**
 * The headers sent besides Postern's own: each static header with its value (a secret one's from
 * `secrets`), then `authorization` when given (the auth's, built by the sender).
 */
export function addedRequestHeaders(settings: RequestSettings, secrets: RequestSecrets, authorization: string | null): Record<string, string> {
  const added: Record<string, string> = {};
  for (const h of settings.headers) {
    const value = h.secret ? secrets.headers?.[h.name] : h.value;
    if (value !== undefined) added[h.name] = value;
  }
  if (authorization !== null) added.authorization = authorization;
  return added;
}

/** `Basic <base64(user:password)>` (RFC 7617), UTF-8. */
export function basicAuthorization(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

/**
 * Client authentication of a token request by HTTP Basic (RFC 6749 §2.3.1): the client id and
 * secret are each form-urlencoded first, then joined and base64-encoded.
 */
export function clientSecretBasic(clientId: string, clientSecret: string): string {
  const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${enc(clientId)}:${enc(clientSecret)}`, 'utf8').toString('base64')}`;
}

/**
 * The form body of a client-credentials token request (RFC 6749 §4.4.2): `grant_type`, then
 * `scope`, `audience`, the extra parameters, and with `client_secret_post` the client id and secret.
 */
export function tokenRequestForm(auth: Extract<AuthSettings, { type: 'oauth2_client_credentials' }>, clientSecret: string): string {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (auth.scope) form.set('scope', auth.scope);
  if (auth.audience) form.set('audience', auth.audience);
  for (const [k, v] of Object.entries(auth.extraParams)) if (!form.has(k)) form.set(k, v);
  if (auth.clientAuthentication === 'client_secret_post') {
    form.set('client_id', auth.clientId);
    form.set('client_secret', clientSecret);
  }
  return form.toString();
}

/** A token's lifetime when the token endpoint gives no `expires_in`, s. */
export const DEFAULT_TOKEN_LIFETIME_S = 300;
/** A cached token is dropped this long before it expires at most, ms (10 % of a shorter lifetime). */
export const TOKEN_EXPIRY_MARGIN_MS = 60_000;

/**
 * How long a token is cached, ms: its lifetime less a margin (10 % of it, at most
 * {@link TOKEN_EXPIRY_MARGIN_MS}), so no attempt sends one about to expire; at least 1 ms.
 */
export function tokenCacheTtlMs(expiresInS: number): number {
  const lifetimeMs = expiresInS * 1000;
  return Math.max(1, Math.floor(lifetimeMs - Math.min(TOKEN_EXPIRY_MARGIN_MS, lifetimeMs / 10)));
}

/**
 * Reads a token endpoint's answer (RFC 6749 §5.1): a 200 JSON object with a string `access_token`,
 * `token_type` `bearer` (any case) or absent, and `expires_in` a positive number or absent
 * ({@link DEFAULT_TOKEN_LIFETIME_S}). Reasons: `token_http_<status>` for any other status,
 * `token_bad_answer` for anything else.
 */
export function parseTokenAnswer(status: number, body: string): { ok: true; accessToken: string; expiresInS: number } | { ok: false; reason: string } {
  if (status !== 200) return { ok: false, reason: `token_http_${status}` };
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { ok: false, reason: 'token_bad_answer' };
  }
  if (typeof value !== 'object' || value === null) return { ok: false, reason: 'token_bad_answer' };
  const { access_token: token, token_type: type, expires_in: expiresIn } = value as Record<string, unknown>;
  if (typeof token !== 'string' || token === '' || !/^[\x21-\x7e]+$/.test(token)) return { ok: false, reason: 'token_bad_answer' };
  if (type !== undefined && (typeof type !== 'string' || type.toLowerCase() !== 'bearer')) return { ok: false, reason: 'token_bad_answer' };
  const seconds = typeof expiresIn === 'string' && /^[0-9]+$/.test(expiresIn) ? Number(expiresIn) : expiresIn;
  if (seconds !== undefined && (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0)) return { ok: false, reason: 'token_bad_answer' };
  return { ok: true, accessToken: token, expiresInS: (seconds as number | undefined) ?? DEFAULT_TOKEN_LIFETIME_S };
}

/**
 * Whether `host` is matched by a NO_PROXY-style list (`EGRESS_PROXY_BYPASS`): entries are host
 * names (`example.com` also matches its subdomains; a leading `.` or `*.` means the same), IP
 * addresses, or `*` for every host; compared lower-case, ports ignored.
 */
export function bypassesProxy(host: string, bypass: readonly string[]): boolean {
  const h = host.toLowerCase().replace(/^\[|\]$/g, '');
  return bypass.some((raw) => {
    const entry = raw.trim().toLowerCase().replace(/^\*?\./, '').replace(/:\d+$/, '').replace(/^\[|\]$/g, '');
    if (entry === '') return false;
    if (entry === '*') return true;
    return h === entry || h.endsWith(`.${entry}`);
  });
}

/**
 * The proxy a request goes through: the endpoint's own when it has one (with its credentials),
 * else the global `EGRESS_PROXY_URL` unless the target host is in `EGRESS_PROXY_BYPASS`, else none.
 */
export function proxyForRequest(input: { targetHost: string; endpointProxy: ProxySettings | null; proxyPassword: string | undefined; globalProxyUrl: string | null; bypass: readonly string[] }): string | null {
  if (input.endpointProxy) {
    const url = new URL(input.endpointProxy.url);
    if (input.endpointProxy.username !== null) {
      url.username = encodeURIComponent(input.endpointProxy.username);
      url.password = encodeURIComponent(input.proxyPassword ?? '');
    }
    return url.toString();
  }
  if (input.globalProxyUrl === null || bypassesProxy(input.targetHost, input.bypass)) return null;
  return input.globalProxyUrl;
}

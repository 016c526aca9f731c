import { createPrivateKey, X509Certificate } from 'node:crypto';
import {
  MASKED,
  MAX_HEADER_VALUE_BYTES,
  MAX_STATIC_HEADER_BYTES,
  MAX_STATIC_HEADERS,
  NO_REQUEST_SETTINGS,
  classifyAddress,
  headerNameProblem,
  hostAddress,
  isValidHeaderValue,
  type AuthSettings,
  type ProxySettings,
  type RequestSecrets,
  type RequestSettings,
  type StaticHeader,
} from '@postern/shared';
import { z } from 'zod';
import { ApiError } from './api-error.js';

/**
 * The request settings of `POST`/`PATCH /v1/endpoints` (`headers`, `auth`, `proxy`): their zod
 * shapes, and {@link resolveRequestSettings}, which checks what zod cannot (header names, PEM,
 * URLs) and splits the input into settings and secrets.
 */

const text = (field: string, max: number) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? `${field} is required (a string of at most ${max} characters)` : `${field} must be a string of at most ${max} characters`) })
    .max(max, `${field} must be a string of at most ${max} characters`)
    .regex(/^[^\u0000-\u001f\u007f]*$/, `${field} must not contain control characters`);

/** One static header: `{name, value, secret?}`; on PATCH a secret header without `value` keeps its stored value. */
const headerInput = z.strictObject(
  {
    name: z.string({ error: 'name must be a string' }).min(1, 'name must be 1 to 256 characters').max(256, 'name must be 1 to 256 characters'),
    value: z.string({ error: 'value must be a string' }).optional(),
    secret: z.boolean({ error: 'secret must be true or false' }).optional(),
  },
  { error: 'each header must be an object {name, value, secret?}' },
);

/** `headers`: up to {@link MAX_STATIC_HEADERS} static headers sent with every attempt. */
export const headersField = z
  .array(headerInput, { error: `headers must be a list of at most ${MAX_STATIC_HEADERS} {name, value, secret?} objects` })
  .max(MAX_STATIC_HEADERS, `headers must be a list of at most ${MAX_STATIC_HEADERS} {name, value, secret?} objects`);

const PEM_MAX = 65_536;
const pem = (field: string) => z.string({ error: `${field} must be a PEM string` }).min(1, `${field} must be a PEM string`).max(PEM_MAX, `${field} must be at most ${PEM_MAX} characters`);

/** `auth`: one of four shapes, or null to remove it. Secret fields are optional only on PATCH of the same type. */
export const authField = z
  .discriminatedUnion(
    'type',
    [
      z.strictObject({ type: z.literal('basic'), username: text('auth.username', 256).min(1, 'auth.username must be 1 to 256 characters'), password: text('auth.password', 1024).optional() }),
      z.strictObject({ type: z.literal('bearer'), token: z.string({ error: 'auth.token must be a string' }).optional() }),
      z.strictObject({
        type: z.literal('oauth2_client_credentials'),
        tokenUrl: z.string({ error: 'auth.tokenUrl must be a string' }).max(2048, 'auth.tokenUrl must be at most 2048 characters'),
        clientId: text('auth.clientId', 256).min(1, 'auth.clientId must be 1 to 256 characters'),
        clientSecret: text('auth.clientSecret', 1024).min(1, 'auth.clientSecret must be 1 to 1024 characters').optional(),
        scope: text('auth.scope', 1024).nullable().optional(),
        audience: text('auth.audience', 2048).nullable().optional(),
        extraParams: z
          .record(z.string(), text('auth.extraParams values', 1024), { error: 'auth.extraParams must be an object of string values' })
          .optional(),
        clientAuthentication: z.enum(['client_secret_basic', 'client_secret_post'], { error: 'auth.clientAuthentication must be "client_secret_basic" or "client_secret_post"' }).optional(),
      }),
      z.strictObject({ type: z.literal('mtls'), certificate: pem('auth.certificate'), privateKey: pem('auth.privateKey').optional(), ca: pem('auth.ca').nullable().optional() }),
    ],
    { error: 'auth must be null or an object whose type is "basic", "bearer", "oauth2_client_credentials" or "mtls"' },
  )
  .nullable();

/** `proxy`: an `http://` or `https://` proxy URL, optionally with `user:password@`, or null to remove it. */
export const proxyField = z.string({ error: 'proxy must be a string (an http:// or https:// URL) or null' }).max(2048, 'proxy must be at most 2048 characters').nullable();

type HeadersInput = z.infer<typeof headersField>;
type AuthInput = z.infer<typeof authField>;

/** What an endpoint has now (PATCH) or nothing (POST). */
export interface CurrentRequestSettings {
  request: RequestSettings;
  requestSecrets: RequestSecrets;
}

const bad = (field: string, message: string) => new ApiError(400, 'invalid_request', `${field}: ${message}`);

const EXTRA_PARAM_RESERVED = new Set(['grant_type', 'client_id', 'client_secret', 'scope', 'audience']);

/**
 * Applies the request-settings fields of a body to what the endpoint has (`current`; none on
 * POST). A field left out keeps its value; `auth: null` and `proxy: null` remove it; `headers`
 * replaces the whole list. Secret values are write-only: on PATCH a secret header given without
 * `value`, or an auth of the same type without its secret, keeps the stored one.
 *
 * @param checkUrl the endpoint-URL check (`checkUrl` of the endpoint routes), for `auth.tokenUrl`
 * @param targetUrl the endpoint's URL after this request (mTLS needs `https:`)
 * @throws ApiError 400 `invalid_request` naming the field (`headers.2.name`, `auth.privateKey`,
 *   `proxy`), or `unsafe_url` for a token URL or proxy at a literal non-public address
 */
export function resolveRequestSettings(
  body: { headers?: HeadersInput; auth?: AuthInput; proxy?: string | null },
  current: CurrentRequestSettings | null,
  opts: { allowList: readonly string[]; checkUrl: (raw: string, allowList: readonly string[], field: string) => string; targetUrl: string },
): CurrentRequestSettings | null {
  if (body.headers === undefined && body.auth === undefined && body.proxy === undefined) {
    if (current && current.request.auth?.type === 'mtls' && !opts.targetUrl.startsWith('https:')) throw bad('url', 'must be https:// while auth is mtls (the client certificate is presented on the TLS handshake)');
    return null;
  }
  const was = current ?? { request: NO_REQUEST_SETTINGS, requestSecrets: {} };
  const secrets: RequestSecrets = { ...was.requestSecrets };
  const request: RequestSettings = { ...was.request };

  if (body.headers !== undefined) {
    const { headers, values } = resolveHeaders(body.headers, was);
    request.headers = headers;
    if (Object.keys(values).length > 0) secrets.headers = values;
    else delete secrets.headers;
  }
  if (body.auth !== undefined) {
    for (const k of ['password', 'token', 'clientSecret', 'privateKey'] as const) delete secrets[k];
    request.auth = body.auth === null ? null : resolveAuth(body.auth, was, secrets, opts);
  }
  if (request.auth?.type === 'mtls' && !opts.targetUrl.startsWith('https:')) throw bad('auth', 'mtls needs an https:// endpoint url (the client certificate is presented on the TLS handshake)');
  if (body.proxy !== undefined) {
    delete secrets.proxyPassword;
    request.proxy = body.proxy === null ? null : resolveProxy(body.proxy, secrets, opts.allowList);
  }
  return { request, requestSecrets: secrets };
}

function resolveHeaders(input: HeadersInput, was: CurrentRequestSettings): { headers: StaticHeader[]; values: Record<string, string> } {
  const seen = new Set<string>();
  const headers: StaticHeader[] = [];
  const values: Record<string, string> = {};
  let total = 0;
  for (const [i, h] of input.entries()) {
    const field = `headers.${i}`;
    const problem = headerNameProblem(h.name);
    if (problem === 'not_a_token') throw bad(`${field}.name`, `"${h.name}" is not a valid header name (RFC 9110 token: letters, digits and !#$%&'*+-.^_\`|~)`);
    if (problem === 'use_auth') throw bad(`${field}.name`, '"authorization" is sent by the auth setting: use auth {type: "basic" | "bearer" | …}');
    if (problem === 'reserved') throw bad(`${field}.name`, `"${h.name}" is set by Postern (webhook-*, content-type, content-length, host, user-agent, traceparent) or is hop-by-hop (connection, keep-alive, proxy-*, te, trailer, transfer-encoding, upgrade), so it cannot be set`);
    const lower = h.name.toLowerCase();
    if (seen.has(lower)) throw bad(`${field}.name`, `"${h.name}" is given twice (header names are case-insensitive)`);
    seen.add(lower);
    const secret = h.secret === true;
    // The mask reads show stands for the stored value, as a value left out does.
    let value = h.value === MASKED && secret ? undefined : h.value;
    if (value === undefined && secret) {
      // PATCH: a secret header named again without its value keeps the stored one.
      const stored = was.request.headers.find((s) => s.secret && s.name.toLowerCase() === lower);
      value = stored ? was.requestSecrets.headers?.[stored.name] : undefined;
    }
    if (value === undefined) throw bad(`${field}.value`, 'value is required (a secret header keeps its stored value only when it already has one)');
    if (!isValidHeaderValue(value)) throw bad(`${field}.value`, `must be printable ASCII (space and tab inside), no line breaks, no space at either end, at most ${MAX_HEADER_VALUE_BYTES} bytes`);
    total += Buffer.byteLength(h.name) + Buffer.byteLength(value);
    if (total > MAX_STATIC_HEADER_BYTES) throw bad('headers', `names and values must add up to at most ${MAX_STATIC_HEADER_BYTES} bytes (every attempt carries them, and receivers refuse large header blocks)`);
    if (secret) {
      headers.push({ name: h.name, secret: true });
      values[h.name] = value;
    } else headers.push({ name: h.name, secret: false, value });
  }
  return { headers, values };
}

function resolveAuth(input: NonNullable<AuthInput>, was: CurrentRequestSettings, secrets: RequestSecrets, opts: Parameters<typeof resolveRequestSettings>[2]): AuthSettings {
  const sameType = was.request.auth?.type === input.type;
  const keep = <K extends keyof RequestSecrets>(key: K, given: string | undefined, field: string): string => {
    // The mask that reads show, sent back by a client that read, edited and wrote the endpoint:
    // the stored secret is kept, never replaced by the mask.
    const value = given !== undefined && given !== MASKED ? given : sameType ? was.requestSecrets[key] : undefined;
    if (value === undefined) throw bad(field, given === MASKED ? `${field}: "${MASKED}" is the mask reads show and nothing is stored to keep: send the secret itself` : `${field} is required`);
    return value as string;
  };
  switch (input.type) {
    case 'basic':
      if (input.username.includes(':')) throw bad('auth.username', 'must not contain ":" (RFC 7617)');
      secrets.password = keep('password', input.password, 'auth.password');
      return { type: 'basic', username: input.username };
    case 'bearer': {
      const token = keep('token', input.token, 'auth.token');
      if (!/^[\x21-\x7e]{1,4096}$/.test(token)) throw bad('auth.token', 'must be 1 to 4096 printable ASCII characters without spaces');
      secrets.token = token;
      return { type: 'bearer' };
    }
    case 'oauth2_client_credentials': {
      const tokenUrl = opts.checkUrl(input.tokenUrl, opts.allowList, 'auth.tokenUrl');
      const extraParams = input.extraParams ?? {};
      const names = Object.keys(extraParams);
      if (names.length > 20) throw bad('auth.extraParams', 'at most 20 parameters');
      for (const name of names) {
        if (EXTRA_PARAM_RESERVED.has(name)) throw bad(`auth.extraParams.${name}`, `"${name}" is set by Postern from the other auth fields`);
        if (!/^[\x21-\x7e]{1,256}$/.test(name)) throw bad(`auth.extraParams.${name}`, 'parameter names must be 1 to 256 printable ASCII characters');
      }
      secrets.clientSecret = keep('clientSecret', input.clientSecret, 'auth.clientSecret');
      return {
        type: 'oauth2_client_credentials',
        tokenUrl,
        clientId: input.clientId,
        scope: input.scope ?? null,
        audience: input.audience ?? null,
        extraParams,
        clientAuthentication: input.clientAuthentication ?? 'client_secret_basic',
      };
    }
    case 'mtls': {
      const certificate = parseCertificates(input.certificate, 'auth.certificate')[0]!;
      const privateKeyPem = keep('privateKey', input.privateKey, 'auth.privateKey');
      let key;
      try {
        if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(privateKeyPem)) throw new Error('not PEM');
        key = createPrivateKey({ key: privateKeyPem, format: 'pem' });
      } catch {
        throw bad('auth.privateKey', 'must be an unencrypted PEM private key (-----BEGIN PRIVATE KEY----- …)');
      }
      if (!certificate.checkPrivateKey(key)) throw bad('auth.privateKey', 'does not match auth.certificate');
      if (input.ca) parseCertificates(input.ca, 'auth.ca');
      secrets.privateKey = privateKeyPem;
      return { type: 'mtls', certificate: input.certificate, ca: input.ca ?? null };
    }
  }
}

/** Every certificate of a PEM bundle; 400 naming `field` when there is none or one does not parse. */
function parseCertificates(raw: string, field: string): X509Certificate[] {
  const blocks = raw.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g);
  if (!blocks) throw bad(field, 'must be PEM: one or more -----BEGIN CERTIFICATE----- blocks');
  return blocks.map((block) => {
    try {
      return new X509Certificate(block);
    } catch {
      throw bad(field, 'holds a certificate that does not parse (PEM X.509 expected)');
    }
  });
}

function resolveProxy(raw: string, secrets: RequestSecrets, allowList: readonly string[]): ProxySettings {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw bad('proxy', 'must be an absolute URL, e.g. http://proxy.internal:3128');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw bad('proxy', 'must use http:// or https://');
  if (url.hostname === '') throw bad('proxy', 'must name a host');
  if ((url.pathname !== '' && url.pathname !== '/') || url.search !== '' || url.hash !== '') throw bad('proxy', 'must be scheme://[user:password@]host[:port] with no path, query or fragment');
  const address = hostAddress(url);
  if (address) {
    const reason = classifyAddress(address, allowList);
    if (reason) throw new ApiError(400, 'unsafe_url', `proxy: points at a non-public address (${reason}) that ALLOWED_ADDRESSES does not allow`);
  }
  let username: string | null = null;
  if (url.username !== '' || url.password !== '') {
    try {
      username = decodeURIComponent(url.username);
      secrets.proxyPassword = decodeURIComponent(url.password);
    } catch {
      throw bad('proxy', 'credentials must be percent-encoded UTF-8');
    }
  }
  return { url: `${url.protocol}//${url.host}`, username };
}

/**
 * An endpoint's request settings as the API shows them: every secret as {@link MASKED}, never
 * its value (README, "Request settings"). An OAuth 2.0 auth also shows `tokenFetchedAt`, when the
 * sender last fetched its token (`tokenFetchedAtMs`, epoch ms; null = never) as ISO 8601.
 */
export function requestSettingsJson(request: RequestSettings | undefined, tokenFetchedAtMs: number | null = null) {
  const r = request ?? NO_REQUEST_SETTINGS;
  return {
    headers: r.headers.map((h) => ({ name: h.name, value: h.secret ? MASKED : (h.value ?? ''), secret: h.secret })),
    auth: authJson(r.auth, tokenFetchedAtMs),
    proxy: r.proxy ? { url: r.proxy.url, username: r.proxy.username, password: r.proxy.username !== null ? MASKED : null } as const : null,
  };
}

function authJson(auth: AuthSettings | null, tokenFetchedAtMs: number | null) {
  if (auth === null) return null;
  switch (auth.type) {
    case 'basic':
      return { type: auth.type, username: auth.username, password: MASKED } as const;
    case 'bearer':
      return { type: auth.type, token: MASKED } as const;
    case 'oauth2_client_credentials':
      return { ...auth, clientSecret: MASKED, tokenFetchedAt: tokenFetchedAtMs === null ? null : new Date(tokenFetchedAtMs).toISOString() } as const;
    case 'mtls':
      return { type: auth.type, certificate: auth.certificate, privateKey: MASKED, ca: auth.ca } as const;
  }
}

import { API_KEY_SCOPES, SIGNATURE_SCHEMES, eventTypeFilterSchema, eventTypeSchema, isPrintableText, notPrintableMessage } from '@postern/shared';
import { DELIVERY_STATUSES } from '@postern/store';
import { z } from 'zod';
import { ApiError, invalidRequest } from './api-error.js';
import { authField, headersField, proxyField } from './request-settings-input.js';
import { transformationField } from './transformation-input.js';

/** A zod error message that says `<field> is required` when the field is absent, else `otherwise`. */
export function requiredOr(field: string, otherwise: string) {
  return (issue: { input?: unknown }) => (issue.input === undefined ? `${field} is required` : otherwise);
}

/** `POST /v1/orgs` body. The name is trimmed, and must be printable text (`isPrintableText`). */
export const createOrgBody = z.strictObject({
  name: z
    .string({ error: requiredOr('name', 'name must be a string of 1 to 200 characters') })
    .refine((v) => isPrintableText(v), notPrintableMessage('name'))
    .trim()
    .min(1, 'name must be a string of 1 to 200 characters')
    .max(200, 'name must be a string of 1 to 200 characters'),
});

const urlField = z.string({ error: requiredOr('url', 'url must be a string') }).max(2048, 'url must be at most 2048 characters');
const descriptionField = z
  .string({ error: 'description must be a string' })
  .max(500, 'description must be at most 500 characters')
  .refine((v) => isPrintableText(v, { multiline: true }), notPrintableMessage('description', { multiline: true }));

/**
 * How the endpoint's requests are signed (Standard Webhooks): `hmac-sha256` (`v1`, `whsec_`
 * secret; the default) or `ed25519` (`v1a`, `whsk_` secret key, `whpk_` public key).
 */
export const signatureSchemeField = z.enum(SIGNATURE_SCHEMES as [string, ...string[]], { error: `signatureScheme must be one of ${SIGNATURE_SCHEMES.map((s) => `"${s}"`).join(', ')}` });

/**
 * `POST /v1/endpoints` body. `policy` is checked separately by `resolvePolicy`; `secret` (optional,
 * one is generated otherwise) is checked against `signatureScheme`, which defaults to the scheme
 * of the secret's prefix, else `hmac-sha256`.
 */
export const createEndpointBody = z.strictObject({
  url: urlField,
  eventTypes: eventTypeFilterSchema.optional(),
  policy: z.unknown().optional(),
  description: descriptionField.optional(),
  secret: z.string({ error: 'secret must be a string' }).optional(),
  signatureScheme: signatureSchemeField.optional(),
  headers: headersField.optional(),
  auth: authField.optional(),
  proxy: proxyField.optional(),
  transformation: transformationField.optional(),
});

/** `POST /v1/endpoints/:id/rotate-secret` body: none, `{}`, or the scheme of the new key (default: the current one's). */
export const rotateSecretBody = z.strictObject({
  signatureScheme: signatureSchemeField.optional(),
});

/** `PATCH /v1/endpoints/:id` body: any subset of the endpoint's settable fields. */
export const updateEndpointBody = z.strictObject({
  url: urlField.optional(),
  eventTypes: eventTypeFilterSchema.optional(),
  policy: z.unknown().optional(),
  description: descriptionField.optional(),
  headers: headersField.optional(),
  auth: authField.optional(),
  proxy: proxyField.optional(),
  transformation: transformationField.optional(),
});

/**
 * An event's idempotency key as the body field `idempotencyKey` takes it: 1 to 200 printable
 * characters (any Unicode text, no control character); the header carries printable ASCII only.
 */
export const idempotencyKeyField = z
  .string({ error: 'idempotencyKey must be a string' })
  .min(1, 'idempotencyKey must be 1 to 200 characters')
  .max(200, 'idempotencyKey must be 1 to 200 characters')
  .refine((v) => isPrintableText(v), notPrintableMessage('idempotencyKey'));

/** `POST /v1/events` body. `data` is any JSON value and is kept byte for byte. */
export const createEventBody = z.strictObject({
  type: eventTypeSchema,
  data: z.unknown().refine((v) => v !== undefined, 'data is required (any JSON value)'),
  idempotencyKey: idempotencyKeyField.optional(),
  /** Events with the same key reach a `per-key` endpoint one at a time, in acceptance order (issue 13). */
  orderingKey: z
    .string({ error: 'orderingKey must be a string' })
    .min(1, 'orderingKey must be 1 to 256 characters')
    .max(256, 'orderingKey must be 1 to 256 characters')
    // It travels in the `webhook-ordering-key` header, so it must be a valid header value as it is:
    // printable ASCII, and no space at either end (HTTP trims those, so "x " would arrive as "x").
    .regex(/^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/, 'orderingKey must be printable ASCII (space to ~), without a space at either end')
    .optional(),
});

/**
 * Paging query: `limit` 1..100 (default 50), `cursor` the last id of the previous page. Strict, as
 * bodies are: an unknown parameter (`?status=paused` on a list that has no such filter) is 400
 * `query: unknown parameter "status"` rather than a list that silently ignores it.
 */
export const pageQuery = z.strictObject({
  limit: z.coerce.number({ error: 'limit must be an integer from 1 to 100' }).int('limit must be an integer from 1 to 100').min(1, 'limit must be an integer from 1 to 100').max(100, 'limit must be an integer from 1 to 100').default(50),
  cursor: z.string().regex(/^[a-z]+_[0-9A-Za-z]+$/, 'cursor must be an id from a previous page').optional(),
});

/** `GET /v1/endpoints/:id/deliveries` query. */
export const deliveryListQuery = pageQuery.extend({
  status: z.enum(DELIVERY_STATUSES as [string, ...string[]], { error: `status must be one of ${DELIVERY_STATUSES.join(', ')}` }).optional(),
});

/**
 * Parses a list route's query with `schema` ({@link pageQuery} or an extension of it), stricter
 * than the schema alone: `limit` must be written as plain decimal digits (`10`, not `1e1` or
 * `0x10`), and `cursor` must be an id of the listed kind (`cursorKind`, e.g. `ep` for endpoints),
 * since a cursor is the last id of the previous page of the same list.
 *
 * @throws ApiError 400 `invalid_request` naming `limit`, `cursor` or the schema's first bad field.
 */
export function parseListQuery<S extends typeof pageQuery>(schema: S, query: unknown, cursorKind: 'ep' | 'dlv' | 'key' | 'ntf' | 'pfk'): z.infer<S> {
  const raw = (query ?? {}) as Record<string, unknown>;
  if (raw.limit !== undefined && !(typeof raw.limit === 'string' && /^[0-9]+$/.test(raw.limit))) {
    throw new ApiError(400, 'invalid_request', 'limit: limit must be an integer from 1 to 100');
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw invalidRequest(parsed.error, '', 'query');
  const cursor = parsed.data.cursor;
  if (cursor !== undefined && !cursor.startsWith(`${cursorKind}_`)) {
    throw new ApiError(400, 'invalid_request', `cursor: cursor must be an id from a previous page of this list (${cursorKind}_…)`);
  }
  return parsed.data as z.infer<S>;
}

const SCOPES_MESSAGE = `scopes must be a non-empty list of ${API_KEY_SCOPES.join(', ')}`;

/** `POST /v1/api-keys` body: a name for people (printable text, trimmed) and the scopes the key holds. */
export const createApiKeyBody = z.strictObject({
  name: z.string({ error: requiredOr('name', 'name must be a string of 1 to 100 characters') }).refine((v) => isPrintableText(v), notPrintableMessage('name')).trim().min(1, 'name must be a string of 1 to 100 characters').max(100, 'name must be a string of 1 to 100 characters'),
  scopes: z
    .array(z.enum(API_KEY_SCOPES as [string, ...string[]], { error: SCOPES_MESSAGE }), { error: requiredOr('scopes', SCOPES_MESSAGE) })
    .min(1, SCOPES_MESSAGE)
    .transform((scopes) => API_KEY_SCOPES.filter((s) => scopes.includes(s))),
});

/** Default lifetime of a portal session, s: an hour. */
export const DEFAULT_PORTAL_SESSION_TTL_S = 3600;
/** Longest lifetime of a portal session, s: a day. Shortest: 60 s. */
export const MAX_PORTAL_SESSION_TTL_S = 86_400;
/** Scopes a portal session may hold: reading and managing the org's endpoints and deliveries, never posting events. */
export const PORTAL_SESSION_SCOPES = ['webhooks:read', 'webhooks:write'] as const;
const TTL_MESSAGE = `ttlSeconds must be an integer from 60 to ${MAX_PORTAL_SESSION_TTL_S}`;
const PORTAL_SCOPES_MESSAGE = `scopes must be a non-empty list of ${PORTAL_SESSION_SCOPES.join(', ')}`;

/**
 * `POST /v1/orgs/:id/portal-sessions` body: `ttlSeconds` 60..86 400 (default 3 600), `scopes`
 * (default `["webhooks:read"]`: read-only). Duplicate scopes are merged.
 */
export const createPortalSessionBody = z.strictObject({
  ttlSeconds: z.number({ error: TTL_MESSAGE }).int(TTL_MESSAGE).min(60, TTL_MESSAGE).max(MAX_PORTAL_SESSION_TTL_S, TTL_MESSAGE).default(DEFAULT_PORTAL_SESSION_TTL_S),
  scopes: z
    .array(z.enum(PORTAL_SESSION_SCOPES, { error: PORTAL_SCOPES_MESSAGE }), { error: PORTAL_SCOPES_MESSAGE })
    .min(1, PORTAL_SCOPES_MESSAGE)
    .transform((scopes) => PORTAL_SESSION_SCOPES.filter((s) => scopes.includes(s)))
    .default(['webhooks:read']),
  mode: z.enum(['customer', 'operator'], { error: 'mode must be customer (default: plain words, the org\'s policy choices only) or operator (the full console)' }).default('customer'),
});

/** `POST /v1/platform-keys` body: the same name and scope rules as an API key's. */
export const createPlatformKeyBody = createApiKeyBody;

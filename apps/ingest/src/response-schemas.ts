import { API_KEY_SCOPES, PRESET_NAMES, SIGNATURE_SCHEMES, policySchema } from '@postern/shared';
import { DELIVERY_STATUSES } from '@postern/store';
import { z } from 'zod';

/**
 * The zod schemas of every JSON answer of the v1 API. The serializers' return types are inferred
 * from them (`serializers.ts`), routes that build an answer inline check it with `satisfies`, and
 * `/openapi.json` documents each response as the JSON Schema of the same schema, so the document
 * cannot drift from the code; a test validates real answers against the document.
 */

const isoTime = z.iso.datetime().describe('ISO 8601 date-time, UTC');
const nullableTime = isoTime.nullable();
const id = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[0-9A-Za-z]+$`)).describe(`\`${prefix}_…\` id`);
const scopes = z.array(z.enum(API_KEY_SCOPES as [string, ...string[]]));
const cursor = z.string().nullable().describe('pass as `cursor` for the next page; null on the last page');

/** `{data, nextCursor}`: one page of a list, newest first. */
export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), nextCursor: cursor });
}

/** `{error: {code, message}}`, the body of every 4xx and 5xx answer. */
export const errorResponse = z
  .object({
    error: z.object({
      code: z.string().describe('snake_case, stable'),
      message: z.string().describe('for people; never internals'),
      line: z.number().int().nullable().optional().describe("only on a transformation's code errors: the line of the code it points at, or null"),
      details: z.array(z.object({ path: z.string(), message: z.string() })).optional().describe('where the request went wrong, when the error can say: `path` is a JSON pointer (for `event_invalid`, into `data`)'),
    }),
  });

const portalBranding = z.object({
  displayName: z.string().nullable(),
  logoUrl: z.string().nullable(),
  accentColor: z.string().nullable().describe('`#rrggbb`, at least 4.5:1 on white (WCAG AA)'),
  supportUrl: z.string().nullable(),
});
const portalPolicies = z.object({ presets: z.array(z.string()).describe('presets portal customers may pick'), fields: z.array(z.enum(['maxAttempts', 'timeoutMs'])).describe('policy fields they may set on top') });

/** How an endpoint signs: its scheme, and for `ed25519` the `whpk_` public key receivers verify with. */
const signing = {
  signatureScheme: z.enum(SIGNATURE_SCHEMES as unknown as [string, ...string[]]),
  publicKey: z.string().nullable().describe('`whpk_…` for `ed25519`; null for `hmac-sha256`'),
};

/** A resolved policy, as stored on an endpoint (`packages/shared/src/policy.ts`). */
export const policyResponse = policySchema;

/** One attempt time of a policy timeline, ms after the first attempt. */
export const timelineEntryResponse = z.object({ attempt: z.number().int().min(1), earliestMs: z.number(), latestMs: z.number() });

const masked = z.literal('••••').describe('a secret: written once, never shown');
/** An endpoint's `auth` as shown: its type and non-secret fields, each secret as `"••••"`. */
const authResponse = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('basic'), username: z.string(), password: masked }),
    z.object({ type: z.literal('bearer'), token: masked }),
    z.object({
      type: z.literal('oauth2_client_credentials'),
      tokenUrl: z.string(),
      clientId: z.string(),
      clientSecret: masked,
      scope: z.string().nullable(),
      audience: z.string().nullable(),
      extraParams: z.record(z.string(), z.string()),
      clientAuthentication: z.enum(['client_secret_basic', 'client_secret_post']),
      tokenFetchedAt: nullableTime.describe('when a sender last fetched a token from `tokenUrl`; null = not yet'),
    }),
    z.object({ type: z.literal('mtls'), certificate: z.string().describe('PEM'), privateKey: masked, ca: z.string().nullable().describe('PEM; the CAs trusted for the receiver\'s certificate instead of the default ones') }),
  ])
  .nullable()
  .describe('how each attempt authenticates to the receiver; null = not at all');
/** The request settings of an endpoint as every answer shows them. */
const requestSettings = {
  headers: z.array(z.object({ name: z.string(), value: z.string().describe('`"••••"` for a secret header'), secret: z.boolean() })).describe('static headers sent with every attempt'),
  auth: authResponse,
  proxy: z
    .object({ url: z.string().describe('`http://host:port` or `https://host:port`'), username: z.string().nullable(), password: masked.nullable() })
    .nullable()
    .describe("the endpoint's egress proxy; null = the sender's EGRESS_PROXY_URL, if any"),
};

/** An endpoint (no secrets): its settings and health. */
export const endpointResponse = z.object({
  id: id('ep'),
  url: z.string(),
  description: z.string(),
  eventTypes: z.array(z.string()),
  status: z.enum(['active', 'paused', 'disabled']),
  policyName: z.string().nullable().describe('the preset the policy came from, or null for a custom policy'),
  policy: policyResponse,
  ...signing,
  ...requestSettings,
  createdAt: isoTime,
  updatedAt: isoTime,
  consecutiveFailures: z.number().int(),
  failureStreakStartedAt: nullableTime,
  lastSuccessAt: nullableTime.describe('the latest successful attempt, to within a second: under a steady stream of successes it is rewritten at most once a second'),
  lastFailureAt: nullableTime,
  failedAttempts: z.number().int(),
  consecutiveFailedAttempts: z.number().int(),
  disabledAt: nullableTime,
  disabledReason: z.string().nullable(),
  pace: z
    .object({ perSecond: z.number().nullable().describe('requests/s allowed now; null = no rate bound'), concurrency: z.number().int().min(1) })
    .nullable()
    .describe('under `pacing: "adaptive"`: what the sender allows the endpoint now; else null'),
  pausedUntil: nullableTime.describe('under `pacing: "adaptive"`: the end of the last Retry-After pause (a past time: not paused); else null'),
  transformation: z
    .object({
      code: z.string().describe('JavaScript defining `function handler(webhook)`'),
      enabled: z.boolean(),
      version: z.number().int().min(1).describe('1 for the first code, +1 each time the code changes'),
      updatedAt: isoTime,
    })
    .nullable()
    .describe("the endpoint's transformation (docs/transformations.md); null = none"),
});

/** `POST /v1/endpoints` 201: the endpoint with its secret (shown here and by `GET …/secret`) and policy warnings. */
export const createdEndpointResponse = endpointResponse.extend({ secret: z.string().describe('`whsec_…`'), warnings: z.array(z.string()) });
/** `PATCH /v1/endpoints/:id`: the endpoint with policy warnings. */
export const updatedEndpointResponse = endpointResponse.extend({ warnings: z.array(z.string()) });
/** `POST /v1/endpoints/:id/resume`: the endpoint and how many held deliveries were re-queued. */
export const resumedEndpointResponse = endpointResponse.extend({ requeued: z.number().int().min(0) });
/** `GET /v1/endpoints/:id/secret`. */
export const endpointSecretResponse = z.object({ secret: z.string().nullable(), ...signing, previous: z.number().int().min(0).describe('rotated-out secrets still signing') });
/** `POST /v1/endpoints/:id/rotate-secret`. */
export const rotatedSecretResponse = z.object({ secret: z.string(), ...signing, previousSecretValidUntil: isoTime });
/** `GET /v1/endpoints/:id/timeline`. */
export const endpointTimelineResponse = z.object({ endpointId: id('ep'), policyName: z.string().nullable(), attempts: z.array(timelineEntryResponse) });

/** A delivery, as every answer shows it. */
export const deliveryResponse = z.object({
  id: id('dlv'),
  eventId: id('evt'),
  eventType: z.string(),
  endpointId: id('ep'),
  status: z.enum(DELIVERY_STATUSES as unknown as [string, ...string[]]),
  attemptCount: z.number().int().min(0),
  nextAttemptAt: nullableTime,
  held: z.boolean(),
  lastResponseStatus: z.number().int().nullable(),
  lastError: z.string().nullable().describe('an error code (README, "Error codes")'),
  lastDurationMs: z.number().nullable(),
  deliveredAt: nullableTime,
  createdAt: isoTime,
  finishedAt: nullableTime,
  redeliveredFromId: id('dlv').nullable(),
  cancelReason: z.string().nullable(),
  isTest: z.boolean(),
  waitingForNextAttempt: z.boolean(),
  orderingKey: z.string().nullable().describe("the event's `orderingKey`, or null"),
  sequence: z.number().int().min(1).nullable().describe('its `webhook-sequence` under a `per-key` policy, or null'),
  dataErased: z.boolean().describe("true once its event's payload was erased (`DELETE /v1/events/:id/data`): its body and stored responses are gone, the log's metadata kept"),
});

/** One attempt of a delivery. */
export const attemptResponse = z.object({
  number: z.number().int().min(1),
  startedAt: isoTime,
  durationMs: z.number().nullable(),
  responseStatus: z.number().int().nullable(),
  error: z.string().nullable(),
  requestHeaders: z.record(z.string(), z.string()).nullable(),
  response: z
    .object({ headers: z.record(z.string(), z.string()), headersTruncated: z.boolean(), body: z.string(), bodyTruncated: z.boolean() })
    .nullable(),
  cancelReason: z.string().optional().describe('`check:<reason>` or `transformation:cancel`: only on an attempt the org’s pre-attempt check or the transformation cancelled'),
  transformation: z
    .object({
      version: z.number().int().min(1).describe('the transformation version that ran at this attempt'),
      request: z
        .object({
          method: z.string(),
          url: z.string(),
          contentType: z.string(),
          headers: z.record(z.string(), z.string()).describe("the transformation's own headers (also in `requestHeaders`)"),
          body: z.string().describe('the first 2048 bytes of the body sent'),
          bodyTruncated: z.boolean(),
        })
        .nullable()
        .describe('the request it made; null when it sent nothing (failed or cancelled)'),
    })
    .optional()
    .describe("only on an attempt the endpoint's transformation ran at"),
});

/** `GET /v1/transformations/templates`. */
export const transformationTemplatesResponse = z.object({
  data: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      description: z.string(),
      reference: z.string().describe("the target's documented format ('' for generic templates)"),
      code: z.string(),
      sample: z.object({ eventType: z.string(), payload: z.unknown() }),
    }),
  ),
});

/** `POST /v1/transformations/test`: the request that would be sent (nothing is), or why none would. */
export const transformationTestResponse = z.object({
  result: z
    .union([
      z.object({ cancel: z.literal(false), method: z.string(), url: z.string(), headers: z.record(z.string(), z.string()).describe('content-type and the transformation\'s headers (Postern adds its webhook-* headers)'), body: z.string() }),
      z.object({ cancel: z.literal(true) }),
    ])
    .nullable(),
  error: z.object({ code: z.string().describe('`transformation_failed:<reason>`'), message: z.string(), line: z.number().int().nullable() }).nullable(),
  logs: z.array(z.string()).describe('console.log lines, at most 50 of 500 characters'),
  durationMs: z.number(),
});

/** `GET /v1/deliveries/:id`: the delivery with its attempts, and the body the org's check froze for it, if any. */
export const deliveryWithAttemptsResponse = deliveryResponse.extend({
  frozenEnvelope: z.string().optional().describe('the body this delivery sends instead of the event’s envelope (pre-attempt check)'),
  attempts: z.array(attemptResponse),
});
/** A one-delivery action's 202 (redeliver, send-now). */
export const deliveryActionResponse = z.object({ delivery: deliveryResponse });
/** A bulk redelivery's 202. */
export const bulkRedeliveryResponse = z.object({ count: z.number().int().min(0), remaining: z.number().int().min(0) });

/** `POST /v1/events` (and `POST /v1/endpoints/:id/test`) 202: the event id and its deliveries. */
const schemaIssue = z.object({ path: z.string().describe('JSON pointer into `data`; empty for the whole value'), message: z.string() });
export const acceptedEventResponse = z.object({
  id: id('evt'),
  deliveries: z.array(z.object({ id: id('dlv'), endpointId: id('ep') })),
  warnings: z.array(schemaIssue).optional().describe('where `data` fails its type\'s schema (org `eventValidation: "warn"`), or that the type is deprecated; absent when there is nothing to say'),
});
/** One event's result in `POST /v1/events/batch`'s 207: what `POST /v1/events` would have answered for it, with its status. */
export const batchEventResultResponse = z.union([
  acceptedEventResponse.extend({
    status: z.literal(202).describe('accepted: stored and queued, as `POST /v1/events` answers 202'),
    idempotentReplayed: z.literal(true).optional().describe('the first answer under this `idempotencyKey`, given again (the `Idempotent-Replayed` header of `POST /v1/events`); absent otherwise'),
  }),
  z.object({
    status: z.union([z.literal(400), z.literal(409), z.literal(422), z.literal(500), z.literal(503)]).describe('the status `POST /v1/events` would have answered for this event'),
    error: errorResponse.shape.error,
  }),
]);
/** `POST /v1/events/batch` 207: one result per event, in request order. */
export const eventBatchResponse = z.object({ results: z.array(batchEventResultResponse) });
/** An event as `GET /v1/events` lists it. */
export const eventSummaryResponse = z.object({ id: id('evt'), type: z.string(), createdAt: isoTime, idempotencyKey: z.string().nullable(), deliveryCount: z.number().int().min(0) });
/** `GET /v1/events/:id`. `data` is the producer's JSON, byte for byte. */
export const eventResponse = z.object({
  id: id('evt'),
  type: z.string(),
  timestamp: isoTime,
  data: z.unknown().describe('the producer’s JSON value, byte for byte; null once erased'),
  createdAt: isoTime,
  idempotencyKey: z.string().nullable(),
  envelope: z.string().nullable().describe('the exact body every delivery sent; null once erased'),
  dataErased: z.boolean().describe('true once the payload was erased (`DELETE /v1/events/:id/data`)'),
  dataErasedAt: nullableTime,
  deliveryIds: z.array(id('dlv')),
  deliveries: z.array(deliveryResponse),
});

/** An API key as listed (prefix only). */
export const apiKeyResponse = z.object({ id: id('key'), name: z.string(), prefix: z.string(), scopes, createdAt: isoTime, revokedAt: nullableTime });
/** `POST /v1/api-keys` 201: the record with the key, shown once. */
export const createdApiKeyResponse = apiKeyResponse.extend({ apiKey: z.string().describe('`pk_…`, shown once') });
/** A platform key as listed (prefix only). */
export const platformKeyResponse = z.object({ id: id('pfk'), name: z.string(), prefix: z.string(), scopes, createdAt: isoTime, revokedAt: nullableTime });
/** `POST /v1/platform-keys` 201: the record with the key, shown once. */
export const createdPlatformKeyResponse = platformKeyResponse.extend({ key: z.string().describe('`ppk_…`, shown once') });
/** `GET /v1/me`. */
export const meResponse = z.object({
  orgId: id('org'),
  keyId: z.string().nullable().describe('null for a portal session'),
  name: z.string(),
  prefix: z.string().nullable().describe('null for a portal session'),
  scopes,
  credential: z.enum(['api_key', 'platform_key', 'portal_session']),
  portalSession: z.object({ id: z.string(), expiresAt: isoTime, mode: z.enum(['customer', 'operator']) }).nullable().describe('the portal session this token is, or null for a key'),
});

/** `POST /v1/orgs` 201: the org and its first API key, shown once. */
export const createdOrgResponse = z.object({ id: id('org'), name: z.string(), createdAt: isoTime, apiKey: z.string().describe('`pk_…`, shown once') });
/** `GET /v1/org` and `PATCH /v1/org`: the calling org's settings (never the check secret). */
export const orgSettingsResponse = z.object({
  id: id('org'),
  name: z.string(),
  status: z.enum(['active', 'suspended']),
  createdAt: isoTime,
  disabledEventTypes: z.array(z.string()),
  preAttemptCheckUrl: z.string().nullable(),
  eventValidation: z.enum(['off', 'warn', 'reject']).describe('what happens to an event whose `data` fails its type\'s schema'),
  requireKnownEventTypes: z.boolean().describe('events of types outside the catalog are refused (422 `event_type_unknown`)'),
  portal: portalBranding,
  portalPolicies: portalPolicies,
});

/** `GET /v1/portal`: what the customer portal shows for the calling org and credential. */
export const portalResponse = z.object({
  mode: z.enum(['customer', 'operator']).describe('`customer` for a portal session minted so (the default), `operator` for API keys and operator sessions'),
  branding: portalBranding.extend({ accentText: z.string().nullable().describe('text colour on the accent (WCAG AA), null without an accent') }),
  policies: z.array(z.object({ name: z.string(), label: z.string().describe('the choice in plain words, no preset id') })).describe('the policy choices offered to customers'),
  fields: z.array(z.enum(['maxAttempts', 'timeoutMs'])),
});

/** One entry of the event catalog. */
export const eventTypeResponse = z.object({
  name: z.string(),
  description: z.string(),
  group: z.string().nullable(),
  schema: z.union([z.record(z.string(), z.unknown()), z.boolean()]).nullable().describe('JSON Schema 2020-12 of `data`; null = any'),
  examples: z.array(z.unknown()).describe('example `data` values, at most 5, each valid against `schema`'),
  deprecated: z.boolean(),
  archived: z.boolean(),
  version: z.number().int().min(1).describe('1 on creation, +1 on each change'),
  createdAt: isoTime,
  updatedAt: isoTime,
});
/** `GET /v1/event-types/asyncapi.json`: an AsyncAPI 3.0 document. */
export const asyncApiDocumentResponse = z.object({ asyncapi: z.literal('3.0.0'), info: z.object({ title: z.string(), version: z.string() }).loose(), channels: z.record(z.string(), z.unknown()), operations: z.record(z.string(), z.unknown()), components: z.record(z.string(), z.unknown()) }).loose();

/** An endpoint in customer mode's words: state, what waits, what can be done, the last 24 h. */
export const endpointSummaryResponse = z.object({
  endpointId: id('ep'),
  policyLabel: z.string().describe('e.g. "Retries for up to 1 day (8 attempts) · Switched off after repeated failures"'),
  state: z.object({
    tone: z.enum(['ok', 'warn', 'error']),
    headline: z.string(),
    since: nullableTime,
    waiting: z.number().int().min(0).nullable().describe('deliveries held until the endpoint is back'),
    meanwhile: z.string().nullable(),
    actions: z.array(z.enum(['pause', 'resume', 'recreate', 'send_test'])).describe('what the API accepts in this state'),
  }),
  last24h: z.object({
    attempts: z.number().int().min(0),
    succeeded: z.number().int().min(0),
    successRate: z.number().min(0).max(1).nullable(),
    hourly: z.array(z.object({ startAt: isoTime, succeeded: z.number().int().min(0), failed: z.number().int().min(0) })).describe('24 hourly buckets, oldest first (the sparkline)'),
  }),
});
/** `GET /v1/org/check-secret`: the secret that signs pre-attempt check requests; null before a check URL was set. */
export const checkSecretResponse = z.object({ secret: z.string().nullable() });
/** An org's status change. */
/** A customer portal session as the platform sees it: never its token (shown once) nor the token's hash. */
export const portalSessionResponse = z.object({
  id: id('ps'),
  orgId: id('org'),
  scopes: z.array(z.enum(['webhooks:read', 'webhooks:write'])),
  mode: z.enum(['customer', 'operator']).describe('`customer`: plain words and the org\'s policy choices only; `operator`: the full console'),
  createdAt: isoTime,
  expiresAt: isoTime,
  revokedAt: isoTime.nullable(),
});
/** `POST /v1/orgs/:id/portal-sessions` 201: the session with its token (shown once) and the dashboard URL that signs in with it. */
export const createdPortalSessionResponse = portalSessionResponse.extend({
  token: z.string().describe('`pst_…`, a bearer credential of this org within `scopes` until `expiresAt`; shown once'),
  url: z.string().describe('the dashboard page that opens signed in with the token (in the fragment)'),
});
export const orgResponse = z.object({ id: id('org'), name: z.string(), status: z.enum(['active', 'suspended']), createdAt: isoTime });

/** A breaker notification. */
export const notificationResponse = z.object({
  id: id('ntf'),
  kind: z.enum(['endpoint.paused', 'endpoint.disabled']),
  endpointId: id('ep'),
  endpointUrl: z.string(),
  reason: z.string(),
  consecutiveFailures: z.number().int(),
  deliveriesAffected: z.number().int(),
  createdAt: isoTime,
});

/** `GET /v1/stats`. */
export const statsResponse = z.object({
  scope: z.union([z.object({ endpointId: id('ep') }), z.object({ orgId: id('org') })]),
  window: z.enum(['hour', 'day']),
  bucketMs: z.number().int(),
  totals: z.object({ attempts: z.number().int(), succeeded: z.number().int(), failed: z.number().int(), successRate: z.number().min(0).max(1).nullable() }),
  buckets: z.array(z.object({ startAt: isoTime, attempts: z.number().int(), succeeded: z.number().int(), failed: z.number().int() })),
  errors: z.array(z.object({ code: z.string(), count: z.number().int() })),
});

/** `GET /v1/policies`. */
export const presetListResponse = z.object({
  data: z.array(z.object({ name: z.enum(PRESET_NAMES as unknown as [string, ...string[]]), seed: z.string().nullable(), summary: z.string(), assumptions: z.array(z.string()), policy: policyResponse })),
});
/** `GET /v1/policies/:name/timeline`. */
export const presetTimelineResponse = z.object({ name: z.enum(PRESET_NAMES as unknown as [string, ...string[]]), attempts: z.array(timelineEntryResponse) });
/** `POST /v1/policies/preview`. */
export const policyPreviewResponse = z.object({ policyName: z.string().nullable(), policy: policyResponse, attempts: z.array(timelineEntryResponse) });

/** `GET /healthz`. */
export const healthResponse = z.object({ status: z.literal('ok') });
/** `GET /readyz`, 200 and 503. */
export const readinessResponse = z.object({
  status: z.enum(['ok', 'unavailable']),
  failing: z.array(z.string()).optional(),
  checks: z.record(z.string(), z.enum(['ok', 'failing', 'unknown'])),
});
/** `GET /openapi.json`: an OpenAPI 3.1 document. */
export const openApiDocumentResponse = z.object({ openapi: z.string(), info: z.object({ title: z.string(), version: z.string() }).loose(), paths: z.record(z.string(), z.unknown()) }).loose();

/** The JSON type of an answer described by `S`. */
export type Json<S extends z.ZodType> = z.output<S>;

/** One entry of the audit log (docs/audit-log.md). */
export const auditEntryResponse = z.object({
  id: id('aud'),
  at: isoTime,
  actor: z.object({ kind: z.enum(['api_key', 'platform_key', 'portal_session', 'admin']), id: z.string().describe('`key_…`, `pfk_…`, `ps_…` or `admin`'), name: z.string() }),
  action: z.string().describe('e.g. `endpoint.updated` (docs/audit-log.md lists them)'),
  target: z.object({ type: z.enum(['org', 'api_key', 'platform_key', 'portal_session', 'endpoint', 'delivery', 'event']), id: z.string() }),
  changes: z.array(z.string()).describe('names of the fields changed, never their values'),
  requestId: z.string().describe('the request’s `X-Request-Id`'),
});

/** One event's erasure (`DELETE /v1/events/:id/data`). */
export const eventErasureResponse = z.object({
  eventId: id('evt'),
  dataErased: z.literal(true),
  dataErasedAt: isoTime.describe('when it was first erased (erasing again changes nothing)'),
  cancelledDeliveries: z.number().int().min(0).describe('pending deliveries of the event this call cancelled with `data_erased`'),
});

/** `DELETE /v1/events/data?idempotencyKey=…`: every event of the org accepted under that key, erased. */
export const eventErasuresResponse = z.object({ data: z.array(eventErasureResponse) });

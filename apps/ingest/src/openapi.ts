import { PRESET_NAMES, policySchema } from '@postern/shared';
import { z } from 'zod';
import { errorResponse as errorResponse_, pageOf, checkSecretResponse, orgSettingsResponse, acceptedEventResponse, eventBatchResponse, apiKeyResponse, bulkRedeliveryResponse, createdApiKeyResponse, createdEndpointResponse, createdOrgResponse, createdPlatformKeyResponse, deliveryActionResponse, deliveryResponse, deliveryWithAttemptsResponse, endpointResponse, endpointSecretResponse, endpointTimelineResponse, eventResponse, eventSummaryResponse, healthResponse, meResponse, notificationResponse, openApiDocumentResponse, orgResponse, platformKeyResponse, portalSessionResponse, createdPortalSessionResponse, policyPreviewResponse, presetListResponse, presetTimelineResponse, readinessResponse, resumedEndpointResponse, rotatedSecretResponse, statsResponse, transformationTemplatesResponse, transformationTestResponse, updatedEndpointResponse, auditEntryResponse, eventErasureResponse, eventErasuresResponse, eventTypeResponse, asyncApiDocumentResponse, portalResponse, endpointSummaryResponse } from './response-schemas.js';
import { transformationTestBody } from './routes/transformations.js';
import { auditLogQuery } from './routes/audit-log.js';
import { eraseByKeyQuery } from './routes/erasure.js';
import { deliveryExportQuery } from './routes/export.js';
import { deliveryStreamQuery } from './routes/delivery-stream.js';
import { eventListQuery, sendExampleBody } from './routes/events.js';
import { eventBatchBody } from './routes/event-batch.js';
import { eventTypeListQuery } from './routes/event-types.js';
import { createEventTypeBody, updateEventTypeBody } from '@postern/shared';
import { updateOrgBody } from './routes/org-settings.js';
import { policyPreviewBody } from './routes/policy-preview.js';
import { recoverBody } from './routes/redeliveries.js';
import { statsQuery } from './routes/stats.js';
import { ROUTE_DOCS } from './route-docs/index.js';
import { createApiKeyBody, createPlatformKeyBody, createEndpointBody, createEventBody, createOrgBody, createPortalSessionBody, deliveryListQuery, pageQuery, rotateSecretBody, updateEndpointBody } from './schemas.js';

type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';
type Auth = 'apiKey' | 'admin' | 'adminBrowser' | 'none';

/** One documented route. `path` is the express pattern (`/v1/endpoints/:id`). */
export interface RouteDoc {
  method: Method;
  path: string;
  summary: string;
  tag: string;
  auth: Auth;
  /** API-key scope the route requires. */
  scope?: 'webhooks:read' | 'webhooks:write' | 'events:write';
  /** The zod schema that validates the JSON body. */
  body?: z.ZodType;
  /** The body may be left out (it then means `{}`); default false. */
  bodyOptional?: boolean;
  /** The zod object schema that validates the query string. */
  query?: z.ZodObject;
  /**
   * Status → response, beyond the ones added from `auth`, `body`, `query` and path params. A 2xx
   * JSON answer names the zod schema its body is built from (`response-schemas.ts`); an error is a
   * description whose backquoted snake_case words are its codes (`'`in_flight` or `delivery_pending`'),
   * or a description and its codes.
   */
  responses: Record<number, string | ResponseDoc>;
  /** Content type of a 200 that is not JSON. */
  produces?: string;
}

/** A documented response: a JSON body built from `schema`, or an error answer with `codes`. */
export interface ResponseDoc {
  description: string;
  /** The zod schema the answer's body is built from (its output side is documented). */
  schema?: z.ZodType;
  /** Error codes this status answers with (an error response's `error.code`). */
  codes?: readonly string[];
}

const r = (doc: RouteDoc): RouteDoc => doc;

/**
 * Every route ingest serves, with the zod schemas that validate its input. `/openapi.json` is built
 * from this table and from each route's description and examples (`ROUTE_DOCS`, in route-docs/),
 * and a test checks that it names exactly the routes registered on the app.
 */
export const API_ROUTES: readonly RouteDoc[] = [
  r({ method: 'get', path: '/healthz', tag: 'operations', auth: 'none', summary: 'Process alive', responses: { 200: { description: '`{"status":"ok"}`', schema: healthResponse } } }),
  r({ method: 'get', path: '/readyz', tag: 'operations', auth: 'none', summary: 'Ready: Redis reachable', responses: { 200: { description: 'every check passes', schema: readinessResponse }, 503: { description: '`{"status":"unavailable","failing":["redis"]}`: the failing checks by name', schema: readinessResponse } } }),
  r({ method: 'get', path: '/metrics', tag: 'operations', auth: 'none', summary: 'Prometheus metrics', produces: 'text/plain', responses: { 200: 'Prometheus text exposition format' } }),
  r({ method: 'get', path: '/openapi.json', tag: 'operations', auth: 'none', summary: 'The OpenAPI document', responses: { 200: { description: 'OpenAPI 3.1 document', schema: openApiDocumentResponse } } }),
  r({ method: 'get', path: '/docs/api', tag: 'operations', auth: 'none', summary: 'The API reference page', produces: 'text/html', responses: { 200: 'an HTML page that renders `/openapi.json` in the browser', 404: '`not_found`: the page\'s renderer is not installed on this ingest' } }),
  r({ method: 'get', path: '/admin/queues', tag: 'operations', auth: 'adminBrowser', summary: 'Bull Board (browser UI) for the deliveries queue', produces: 'text/html', responses: { 200: 'the Bull Board page' } }),

  r({ method: 'get', path: '/v1/policies', tag: 'policies', auth: 'none', summary: 'Presets and their rules', responses: { 200: { description: '`{data: [{name, seed, summary, assumptions, policy}]}`', schema: presetListResponse } } }),
  r({ method: 'get', path: '/v1/policies/:name/timeline', tag: 'policies', auth: 'none', summary: "A preset's attempt times for a delivery that always fails", responses: { 200: { description: '`{name, attempts}`', schema: presetTimelineResponse } } }),

  r({ method: 'post', path: '/v1/policies/preview', tag: 'policies', auth: 'apiKey', scope: 'webhooks:read', body: policyPreviewBody, summary: 'Preview a policy and its attempt timeline', responses: { 400: '`invalid_policy` naming the field', 200: { description: '`{policyName, policy, attempts}`', schema: policyPreviewResponse } } }),

  r({ method: 'post', path: '/v1/orgs', tag: 'orgs', auth: 'admin', body: createOrgBody, summary: 'Create an org and its first API key (shown once)', responses: { 201: { description: '`{id, name, createdAt, apiKey}`', schema: createdOrgResponse } } }),
  r({ method: 'post', path: '/v1/orgs/:id/suspend', tag: 'orgs', auth: 'admin', summary: 'Suspend an org', responses: { 200: { description: '`{id, name, status, createdAt}`', schema: orgResponse }, 404: 'no such org' } }),
  r({ method: 'post', path: '/v1/orgs/:id/reactivate', tag: 'orgs', auth: 'admin', summary: 'Reactivate a suspended org', responses: { 200: { description: '`{id, name, status, createdAt}`', schema: orgResponse }, 404: 'no such org' } }),
  r({ method: 'post', path: '/v1/orgs/:id/portal-sessions', tag: 'orgs', auth: 'admin', body: createPortalSessionBody, summary: 'Create a customer portal session', responses: { 201: { description: '`{id, orgId, scopes, createdAt, expiresAt, revokedAt, token, url}` (token shown once)', schema: createdPortalSessionResponse }, 404: 'no such org' } }),
  r({ method: 'get', path: '/v1/orgs/:id/portal-sessions/:sessionId', tag: 'orgs', auth: 'admin', summary: 'A portal session (never its token)', responses: { 200: { description: '`{id, orgId, scopes, createdAt, expiresAt, revokedAt}`', schema: portalSessionResponse }, 404: 'no such session in this org' } }),
  r({ method: 'delete', path: '/v1/orgs/:id/portal-sessions/:sessionId', tag: 'orgs', auth: 'admin', summary: 'Revoke a portal session', responses: { 200: { description: 'the session with `revokedAt`', schema: portalSessionResponse }, 404: 'no such session in this org' } }),

  r({ method: 'get', path: '/v1/platform-audit-log', tag: 'audit log', auth: 'admin', query: auditLogQuery, summary: "The instance's audit log", responses: { 200: { description: '`{data, nextCursor}`', schema: pageOf(auditEntryResponse) } } }),
  r({ method: 'post', path: '/v1/platform-keys', tag: 'platform keys', auth: 'admin', body: createPlatformKeyBody, summary: 'Create a platform key', responses: { 201: { description: 'the key record with `key`', schema: createdPlatformKeyResponse } } }),
  r({ method: 'get', path: '/v1/platform-keys', tag: 'platform keys', auth: 'admin', query: pageQuery, summary: 'Every platform key (prefix only), revoked ones included', responses: { 200: { description: '`{data, nextCursor}`', schema: pageOf(platformKeyResponse) } } }),
  r({ method: 'delete', path: '/v1/platform-keys/:id', tag: 'platform keys', auth: 'admin', summary: 'Revoke a platform key', responses: { 200: { description: 'the revoked key record', schema: platformKeyResponse }, 404: 'no such platform key' } }),

  r({ method: 'get', path: '/v1/org', tag: 'orgs', auth: 'apiKey', scope: 'webhooks:read', summary: "The calling org's settings", responses: { 200: { description: '`{id, name, status, createdAt, disabledEventTypes, preAttemptCheckUrl, eventValidation, requireKnownEventTypes, portal, portalPolicies}`', schema: orgSettingsResponse } } }),
  r({
    method: 'patch',
    path: '/v1/org',
    tag: 'orgs',
    auth: 'apiKey',
    scope: 'webhooks:write',
    body: updateOrgBody,
    summary: "Change the org's settings",
    responses: { 200: { description: 'the org settings, as `GET /v1/org`', schema: orgSettingsResponse }, 400: '`invalid_request` or `unsafe_url`, naming the field' },
  }),
  r({ method: 'get', path: '/v1/org/check-secret', tag: 'orgs', auth: 'apiKey', scope: 'webhooks:write', summary: "The pre-attempt check's signing secret", responses: { 200: { description: '`{secret}` (null before a check URL was set)', schema: checkSecretResponse } } }),

  r({ method: 'get', path: '/v1/me', tag: 'api keys', auth: 'apiKey', summary: 'Who is calling: org, credential and scopes', responses: { 200: { description: '`{orgId, keyId, name, prefix, scopes}`', schema: meResponse } } }),
  r({ method: 'post', path: '/v1/api-keys', tag: 'api keys', auth: 'apiKey', scope: 'webhooks:write', body: createApiKeyBody, summary: 'Create an API key (shown once)', responses: { 201: { description: 'the key record with `apiKey`', schema: createdApiKeyResponse } } }),
  r({ method: 'get', path: '/v1/api-keys', tag: 'api keys', auth: 'apiKey', scope: 'webhooks:read', query: pageQuery, summary: "The org's API keys (prefix only)", responses: { 200: { description: '`{data, nextCursor}`', schema: pageOf(apiKeyResponse) } } }),
  r({ method: 'delete', path: '/v1/api-keys/:id', tag: 'api keys', auth: 'apiKey', scope: 'webhooks:write', summary: 'Revoke an API key', responses: { 200: { description: 'the revoked key record', schema: apiKeyResponse } } }),

  r({ method: 'post', path: '/v1/endpoints', tag: 'endpoints', auth: 'apiKey', scope: 'webhooks:write', body: createEndpointBody, summary: 'Register an endpoint', responses: { 403: '`policy_not_offered`: a portal session in customer mode picked a policy the org does not offer (`portalPolicies`)', 400: '`invalid_request` naming the field (`headers.0.name`, `auth.privateKey`, `proxy`…), `invalid_policy` naming the field, `unsafe_url` for a literal non-public address (url, auth.tokenUrl, proxy); `transformation_too_large`, `transformation_syntax_error` (with `line`), `transformation_handler_missing` or `transformation_invalid` for `transformation.code`', 409: '`endpoint_limit_reached`: the org has `MAX_ENDPOINTS_PER_ORG` endpoints already', 201: { description: 'the endpoint with its `secret` (`whsec_…` or `whsk_…`), `signatureScheme` and `publicKey` (`whpk_…`, null for `hmac-sha256`)', schema: createdEndpointResponse } } }),
  r({ method: 'get', path: '/v1/endpoints', tag: 'endpoints', auth: 'apiKey', scope: 'webhooks:read', query: pageQuery, summary: "The org's endpoints", responses: { 200: { description: '`{data, nextCursor}`', schema: pageOf(endpointResponse) } } }),
  r({ method: 'get', path: '/v1/endpoints/:id', tag: 'endpoints', auth: 'apiKey', scope: 'webhooks:read', summary: 'One endpoint with its health', responses: { 200: { description: 'the endpoint', schema: endpointResponse } } }),
  r({ method: 'patch', path: '/v1/endpoints/:id', tag: 'endpoints', auth: 'apiKey', scope: 'webhooks:write', body: updateEndpointBody, summary: 'Change an endpoint', responses: { 403: '`policy_not_offered`: a portal session in customer mode picked a policy the org does not offer (`portalPolicies`)', 400: '`invalid_request` naming the field, `invalid_policy` naming the field, `unsafe_url` for a literal non-public address (url, auth.tokenUrl, proxy); `transformation_too_large`, `transformation_syntax_error` (with `line`), `transformation_handler_missing` or `transformation_invalid` for `transformation.code`', 200: { description: 'the endpoint', schema: updatedEndpointResponse } } }),
  r({ method: 'delete', path: '/v1/endpoints/:id', tag: 'endpoints', auth: 'apiKey', scope: 'webhooks:write', summary: 'Delete an endpoint', responses: { 204: 'deleted' } }),
  r({ method: 'get', path: '/v1/endpoints/:id/secret', tag: 'endpoints', auth: 'apiKey', scope: 'webhooks:write', summary: 'The current signing secret', responses: { 200: { description: '`{secret, signatureScheme, publicKey, previous}`', schema: endpointSecretResponse } } }),
  r({ method: 'post', path: '/v1/endpoints/:id/rotate-secret', tag: 'endpoints', auth: 'apiKey', scope: 'webhooks:write', body: rotateSecretBody, bodyOptional: true, summary: "Rotate an endpoint's signing secret", responses: { 200: { description: '`{secret, signatureScheme, publicKey, previousSecretValidUntil}`', schema: rotatedSecretResponse } } }),
  r({ method: 'post', path: '/v1/endpoints/:id/pause', tag: 'endpoints', auth: 'apiKey', scope: 'webhooks:write', summary: 'Pause an endpoint', responses: { 409: '`endpoint_disabled`: its breaker disabled it; resume it instead', 200: { description: 'the endpoint', schema: endpointResponse } } }),
  r({ method: 'post', path: '/v1/endpoints/:id/resume', tag: 'endpoints', auth: 'apiKey', scope: 'webhooks:write', summary: 'Resume an endpoint', responses: { 200: { description: 'the endpoint with `requeued`', schema: resumedEndpointResponse }, 409: '`recreate_required`: the policy re-enables only by re-creating' } }),
  r({ method: 'get', path: '/v1/endpoints/:id/timeline', tag: 'endpoints', auth: 'apiKey', scope: 'webhooks:read', summary: "The endpoint's policy as attempt times", responses: { 200: { description: '`{endpointId, policyName, attempts}`', schema: endpointTimelineResponse } } }),
  r({ method: 'post', path: '/v1/endpoints/:id/test', tag: 'events', auth: 'apiKey', scope: 'webhooks:write', summary: 'Send a `webhook.test` event to this endpoint', responses: { 202: { description: '`{id, deliveries}`', schema: acceptedEventResponse }, 409: '`endpoint_inactive`' } }),

  r({ method: 'post', path: '/v1/endpoints/:id/send-example', tag: 'events', auth: 'apiKey', scope: 'webhooks:write', body: sendExampleBody, summary: 'Send a catalog example to an endpoint', responses: { 202: { description: '`{id, deliveries}`', schema: acceptedEventResponse }, 404: '`not_found`: no such endpoint, or no such (live) event type in the catalog', 409: '`endpoint_inactive` or `no_example`' } }),

  r({ method: 'post', path: '/v1/event-types', tag: 'event catalog', auth: 'apiKey', scope: 'webhooks:write', body: createEventTypeBody, summary: 'Add an event type to the catalog', responses: { 201: { description: 'the entry, `version` 1', schema: eventTypeResponse }, 400: '`invalid_request` naming the field (an example that fails the schema: `examples.N`), `invalid_schema`: the schema does not compile', 409: '`event_type_exists`' } }),
  r({ method: 'get', path: '/v1/event-types', tag: 'event catalog', auth: 'apiKey', scope: 'webhooks:read', query: eventTypeListQuery, summary: "The org's event catalog", responses: { 200: { description: '`{data}`', schema: z.object({ data: z.array(eventTypeResponse) }) } } }),
  r({ method: 'get', path: '/v1/event-types/asyncapi.json', tag: 'event catalog', auth: 'apiKey', scope: 'webhooks:read', summary: 'The event catalog as an AsyncAPI document', responses: { 200: { description: 'AsyncAPI 3.0 document', schema: asyncApiDocumentResponse } } }),
  r({ method: 'get', path: '/v1/event-types/:name', tag: 'event catalog', auth: 'apiKey', scope: 'webhooks:read', summary: 'One event type', responses: { 200: { description: 'the entry', schema: eventTypeResponse } } }),
  r({ method: 'patch', path: '/v1/event-types/:name', tag: 'event catalog', auth: 'apiKey', scope: 'webhooks:write', body: updateEventTypeBody, summary: 'Change an event type', responses: { 200: { description: 'the entry', schema: eventTypeResponse }, 400: '`invalid_request` naming the field, `invalid_schema`' } }),
  r({ method: 'delete', path: '/v1/event-types/:name', tag: 'event catalog', auth: 'apiKey', scope: 'webhooks:write', summary: 'Remove an event type', responses: { 204: 'removed' } }),

  r({ method: 'get', path: '/v1/portal', tag: 'portal', auth: 'apiKey', scope: 'webhooks:read', summary: 'What the customer portal shows', responses: { 200: { description: '`{mode, branding, policies, fields}`', schema: portalResponse } } }),
  r({ method: 'get', path: '/v1/endpoints/:id/summary', tag: 'portal', auth: 'apiKey', scope: 'webhooks:read', summary: 'An endpoint in plain words', responses: { 200: { description: '`{endpointId, policyLabel, state, last24h}`', schema: endpointSummaryResponse } } }),

  r({ method: 'post', path: '/v1/events', tag: 'events', auth: 'apiKey', scope: 'events:write', body: createEventBody, summary: 'Send an event to every subscribed endpoint', responses: { 202: { description: '`{id, deliveries: [{id, endpointId}]}`; stored and queued', schema: acceptedEventResponse }, 409: '`idempotency_key_reused`', 422: '`event_invalid`: `data` fails its type\'s schema and the org rejects such events (`error.details`: JSON pointers into `data`); `event_type_unknown`: the type is not in the catalog and the org accepts known types only; `too_many_deliveries`: its fan-out is over `MAX_DELIVERIES_PER_REQUEST`' } }),
  r({
    method: 'post',
    path: '/v1/events/batch',
    tag: 'events',
    auth: 'apiKey',
    scope: 'events:write',
    body: eventBatchBody,
    summary: 'Send up to 100 events in one request',
    responses: {
      207: { description: '`{results: [...]}`, one per event in request order; an event that would take the batch past `MAX_DELIVERIES_PER_REQUEST` deliveries is 422 `too_many_deliveries` on its own', schema: eventBatchResponse },
      400: '`invalid_request`: the body is not `{events: [...]}` with 1 to 100 events, or the request carries an `Idempotency-Key` header',
    },
  }),
  r({ method: 'get', path: '/v1/events', tag: 'events', auth: 'apiKey', scope: 'webhooks:read', query: eventListQuery, summary: "The org's events", responses: { 404: '`not_found`: `endpointId` names no endpoint of your org', 200: { description: '`{data: [{id, type, createdAt, idempotencyKey, deliveryCount}], nextCursor}`; a page may be short when filters match sparsely: follow `nextCursor` until null', schema: pageOf(eventSummaryResponse) } } }),
  r({ method: 'get', path: '/v1/events/:id', tag: 'events', auth: 'apiKey', scope: 'webhooks:read', summary: 'One event with its deliveries', responses: { 200: { description: 'the event with `envelope`, `deliveryIds` and `deliveries`', schema: eventResponse } } }),
  r({ method: 'get', path: '/v1/stats', tag: 'overview', auth: 'apiKey', scope: 'webhooks:read', query: statsQuery, summary: 'Attempt counts over the last hour or day', responses: { 404: '`not_found`: `endpointId` names no endpoint of your org', 200: { description: '`{scope, window, bucketMs, totals: {attempts, succeeded, failed, successRate}, buckets: [{startAt, attempts, succeeded, failed}], errors: [{code, count}]}`', schema: statsResponse } } }),

  r({ method: 'get', path: '/v1/endpoints/:id/deliveries', tag: 'deliveries', auth: 'apiKey', scope: 'webhooks:read', query: deliveryListQuery, summary: "An endpoint's delivery log, newest first", responses: { 200: { description: '`{data, nextCursor}`', schema: pageOf(deliveryResponse) } } }),
  r({ method: 'delete', path: '/v1/events/:id/data', tag: 'events', auth: 'apiKey', scope: 'webhooks:write', summary: "Erase an event's data", responses: { 200: { description: '`{eventId, dataErased, dataErasedAt, cancelledDeliveries}`; erasing again changes nothing', schema: eventErasureResponse }, 404: '`not_found`: no such event in your org', 409: '`in_flight`: a delivery of the event is being attempted right now; nothing was erased, retry (see `Retry-After`)' } }),
  r({ method: 'delete', path: '/v1/events/data', tag: 'events', auth: 'apiKey', scope: 'webhooks:write', query: eraseByKeyQuery, summary: 'Erase the events of an idempotency key', responses: { 200: { description: '`{data: [{eventId, dataErased, dataErasedAt, cancelledDeliveries}]}`', schema: eventErasuresResponse }, 404: '`not_found`: no event of your org has this idempotency key', 409: '`in_flight`: a delivery is being attempted right now; retry' } }),
  r({ method: 'get', path: '/v1/deliveries/export', tag: 'deliveries', auth: 'apiKey', scope: 'webhooks:read', query: deliveryExportQuery, produces: 'application/x-ndjson', summary: 'Export the delivery log as NDJSON', responses: { 200: 'one JSON delivery (as `GET /v1/deliveries/:id`) per line', 404: '`not_found`: `endpointId` names no endpoint of your org, live or deleted with its log still kept' } }),
  r({
    method: 'get',
    path: '/v1/deliveries/stream',
    tag: 'deliveries',
    auth: 'apiKey',
    scope: 'webhooks:read',
    query: deliveryStreamQuery,
    produces: 'text/event-stream',
    summary: 'Live deliveries (Server-Sent Events)',
    responses: {
      200: 'an event stream: `id: <entry id>`, `event: delivery | reset | end`, `data: <JSON>`',
      400: '`invalid_request`: a `Last-Event-ID` that is not an id this stream sent',
      404: '`not_found`: `endpointId` names no endpoint of your org',
      429: '`too_many_streams`: this credential already holds `LIVE_STREAM_MAX_PER_KEY` streams on this process',
    },
  }),
  r({ method: 'get', path: '/v1/deliveries/:id', tag: 'deliveries', auth: 'apiKey', scope: 'webhooks:read', summary: 'One delivery with its attempts', responses: { 200: { description: 'the delivery with `attempts`', schema: deliveryWithAttemptsResponse } } }),
  r({ method: 'post', path: '/v1/deliveries/:id/send-now', tag: 'deliveries', auth: 'apiKey', scope: 'webhooks:write', summary: "Make a delivery's next attempt now", responses: { 202: { description: '`{delivery}`', schema: deliveryActionResponse }, 409: '`in_flight`, `delivery_finished`, `delivery_held`, `endpoint_inactive` (endpoint deleted) or `not_waiting`' } }),
  r({ method: 'post', path: '/v1/deliveries/:id/redeliver', tag: 'deliveries', auth: 'apiKey', scope: 'webhooks:write', summary: 'Redeliver one delivery', responses: { 202: { description: '`{delivery}`', schema: deliveryActionResponse }, 409: '`in_flight`, `delivery_pending`, `endpoint_inactive`, `redelivery_not_offered` or `data_erased` (its event\'s payload was erased)' } }),
  r({ method: 'post', path: '/v1/endpoints/:id/redeliver-failed', tag: 'deliveries', auth: 'apiKey', scope: 'webhooks:write', summary: 'Redeliver every failed delivery (≤ 500 a call)', responses: { 202: { description: '`{count, remaining}`', schema: bulkRedeliveryResponse }, 409: '`redelivery_not_offered` or `endpoint_inactive`: redelivery not allowed' } }),
  r({ method: 'post', path: '/v1/endpoints/:id/recover', tag: 'deliveries', auth: 'apiKey', scope: 'webhooks:write', body: recoverBody, summary: 'Redeliver what failed since a time (≤ 500 a call)', responses: { 202: { description: '`{count, remaining}`', schema: bulkRedeliveryResponse }, 409: '`redelivery_not_offered` or `endpoint_inactive`: redelivery not allowed' } }),

  r({ method: 'get', path: '/v1/transformations/templates', tag: 'transformations', auth: 'apiKey', scope: 'webhooks:read', summary: 'Transformation templates', responses: { 200: { description: '`{data: [{id, name, description, reference, code, sample}]}`', schema: transformationTemplatesResponse } } }),
  r({ method: 'post', path: '/v1/transformations/test', tag: 'transformations', auth: 'apiKey', scope: 'webhooks:write', body: transformationTestBody, summary: 'Test a transformation', responses: { 200: { description: '`{result, error, logs, durationMs}`', schema: transformationTestResponse }, 400: { description: 'the code is refused', codes: ['invalid_request', 'transformation_too_large', 'transformation_syntax_error', 'transformation_handler_missing', 'transformation_invalid'] }, 404: '`not_found`: no such event in the org', 409: '`data_erased`: the event named has had its data erased' } }),

  r({ method: 'get', path: '/v1/audit-log', tag: 'audit log', auth: 'apiKey', scope: 'webhooks:read', query: auditLogQuery, summary: "The org's audit log", responses: { 200: { description: '`{data: [{id, at, actor, action, target, changes, requestId}], nextCursor}`; a page may be short when filters match sparsely: follow `nextCursor` until null', schema: pageOf(auditEntryResponse) } } }),
  r({ method: 'get', path: '/v1/notifications', tag: 'notifications', auth: 'apiKey', scope: 'webhooks:read', query: pageQuery, summary: 'Endpoints paused or disabled by their breaker, newest first', responses: { 200: { description: '`{data, nextCursor}`', schema: pageOf(notificationResponse) } } }),
];

/** Action routes that take `Idempotency-Key` (apps/ingest/src/action-idempotency.ts). */
const IDEMPOTENT_ACTIONS = new Set([
  'post /v1/deliveries/:id/redeliver',
  'post /v1/endpoints/:id/redeliver-failed',
  'post /v1/endpoints/:id/recover',
  'post /v1/endpoints/:id/pause',
  'post /v1/endpoints/:id/resume',
  'post /v1/endpoints/:id/rotate-secret',
  'post /v1/endpoints/:id/test',
  'post /v1/endpoints/:id/send-example',
]);

/** JSON Schema of what a route accepts (zod's input side: defaults optional, coercions as their target). */
function jsonSchema(schema: z.ZodType, io: 'input' | 'output' = 'input'): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12', reused: 'inline' }) as Record<string, unknown>;
  delete out.$schema;
  delete out.id;
  return out;
}

/** `policy` is resolved by `resolvePolicy`, not by the body schema: document its accepted shapes. */
function policyProperty(): Record<string, unknown> {
  const custom = jsonSchema(policySchema);
  delete custom.required;
  return {
    description: 'A preset name, a preset plus overrides (`{"preset": "tourical", "maxAttempts": 3}`), or a custom policy whose missing fields come from `standard`.',
    anyOf: [
      { type: 'string', enum: [...PRESET_NAMES] },
      { ...custom, properties: { preset: { type: 'string', enum: [...PRESET_NAMES] }, ...(custom.properties as object) } },
    ],
  };
}

function bodySchema(schema: z.ZodType): Record<string, unknown> {
  const out = jsonSchema(schema);
  const properties = out.properties as Record<string, unknown> | undefined;
  if (properties && 'policy' in properties) properties.policy = policyProperty();
  return out;
}

function queryParameters(schema: z.ZodObject): Record<string, unknown>[] {
  const out = jsonSchema(schema);
  const required = new Set((out.required as string[] | undefined) ?? []);
  return Object.entries((out.properties ?? {}) as Record<string, unknown>).map(([name, s]) => ({ name, in: 'query', required: required.has(name), schema: s }));
}

/** The error codes an error response documents: given, or the backquoted snake_case words of its description. */
function errorCodes(doc: ResponseDoc): string[] {
  if (doc.codes) return [...doc.codes];
  return [...new Set([...doc.description.matchAll(/`([a-z][a-z0-9_]*)`/g)].map((m) => m[1] as string))];
}

/** The codes of the errors every route may answer, by status, when its own table names none. */
const DEFAULT_ERROR_CODES: Record<number, string[]> = {
  400: ['invalid_request'],
  401: ['unauthorized'],
  403: ['insufficient_scope', 'org_suspended'],
  404: ['not_found'],
  409: ['conflict'],
  413: ['payload_too_large'],
  415: ['unsupported_media_type'],
  503: ['service_unavailable'],
};

/** `error.details`: where a request went wrong (`event_invalid`: JSON pointers into the event's `data`). */
const ERROR_DETAILS = {
  type: 'array',
  description: 'where the request went wrong, when the error can say: `path` is a JSON pointer (for `event_invalid`, into `data`)',
  items: { type: 'object', required: ['path', 'message'], properties: { path: { type: 'string' }, message: { type: 'string' } }, additionalProperties: false },
};

/** An error response: `{error: {code, message}}` with `code` one of the codes it documents. */
function errorResponse(status: number | string, doc: ResponseDoc): Record<string, unknown> {
  const codes = errorCodes(doc);
  const known = codes.length > 0 ? codes : (DEFAULT_ERROR_CODES[Number(status)] ?? []);
  const schema =
    known.length === 0
      ? { $ref: '#/components/schemas/Error' }
      : {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: {
                code: { type: 'string', enum: known, description: 'snake_case, stable' },
                message: { type: 'string', description: 'for people; never internals' },
                ...(known.some((c) => c.startsWith('transformation_')) ? { line: { type: ['integer', 'null'], description: "a transformation's code error: the line it points at, or null" } } : {}),
                details: ERROR_DETAILS,
              },
              additionalProperties: false,
            },
          },
          additionalProperties: false,
        };
  const example = { error: { code: known[0] ?? 'invalid_request', message: doc.description.replace(/`/g, '').slice(0, 120) } };
  return { description: doc.description, content: { 'application/json': { schema, example } } };
}

const asDoc = (value: string | ResponseDoc): ResponseDoc => (typeof value === 'string' ? { description: value } : value);

/** The key of a route in `ROUTE_DOCS` and `IDEMPOTENT_ACTIONS`: `get /v1/endpoints/:id`. */
export function routeKey(route: Pick<RouteDoc, 'method' | 'path'>): string {
  return `${route.method} ${route.path}`;
}

function successResponse(route: RouteDoc, status: number, doc: ResponseDoc, example: unknown): Record<string, unknown> {
  if (status === 204) return { description: doc.description };
  const type = route.produces ?? 'application/json';
  if (type !== 'application/json') {
    const media: Record<string, unknown> = { schema: { type: 'string' } };
    if (example !== undefined) media.example = example;
    return { description: doc.description, content: { [type]: media } };
  }
  if (!doc.schema) throw new Error(`openapi: ${route.method} ${route.path} ${status} has no response schema`);
  const media: Record<string, unknown> = { schema: jsonSchema(doc.schema, 'output') };
  if (example !== undefined) media.example = example;
  return { description: doc.description, content: { 'application/json': media } };
}

function operation(route: RouteDoc): Record<string, unknown> {
  const reference = ROUTE_DOCS[routeKey(route)];
  const pathParams = [...route.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1] as string);
  const successes: Record<string, unknown> = {};
  // Error answers by status: what the route's table says, merged with what every such route answers.
  const errors = new Map<string, { descriptions: string[]; codes: string[] }>();
  const add = (status: number | string, description: string, codes?: readonly string[]) => {
    const entry = errors.get(String(status)) ?? { descriptions: [], codes: [] };
    entry.descriptions.push(description);
    for (const code of codes ?? errorCodes({ description })) if (!entry.codes.includes(code)) entry.codes.push(code);
    errors.set(String(status), entry);
  };
  for (const [status, value] of Object.entries(route.responses)) {
    const code = Number(status);
    const doc = asDoc(value);
    if (code >= 400 && !doc.schema) add(status, doc.description, doc.codes);
    else successes[status] = successResponse(route, code, doc, reference?.responses[code]);
  }
  if (route.body) {
    add(400, '`invalid_request` naming the field, or `invalid_json`');
    add(413, '`payload_too_large`: body over `MAX_BODY_BYTES`');
    add(415, '`unsupported_media_type`: not UTF-8 `application/json`');
    add(501, '`transfer_encoding_not_supported`: a transfer coding other than `chunked` (send a compressed body with `Content-Encoding: gzip`); the connection is closed');
  }
  if (route.query) add(400, '`invalid_request` naming the parameter');
  const idempotent = route.path === '/v1/events' || IDEMPOTENT_ACTIONS.has(routeKey(route));
  if (idempotent) add(409, '`idempotency_key_reused` (same key, different request) or `idempotency_key_in_use` (still running)');
  if (route.auth === 'apiKey') {
    add(400, '`org_required` or `invalid_request`: a platform key without a valid `Postern-Org` header');
    add(401, '`unauthorized`: missing, unknown or revoked API key or platform key; `session_expired` or `session_revoked`: a portal session token past its end or revoked');
    add(403, '`org_suspended`, or `insufficient_scope` when the key lacks the scope');
    if (route.path.startsWith('/v1/api-keys') || (route.path === '/v1/org' && route.method === 'patch') || route.path === '/v1/org/check-secret' || route.path === '/v1/audit-log') add(403, '`api_key_required`: a portal session cannot manage API keys, change org settings or read the audit log');
  }
  if (route.auth === 'admin' || route.auth === 'adminBrowser') add(401, '`unauthorized`: admin token required');
  if (route.path.includes('/portal-sessions')) {
    add(401, '`unauthorized`: admin token or platform key required');
    add(403, '`insufficient_scope`: the platform key lacks `webhooks:read`, or a scope the session would grant');
  }
  if (pathParams.length > 0) add(404, route.auth === 'apiKey' ? '`not_found`: no such resource in your org' : '`not_found`: no such resource');
  if (route.auth === 'apiKey') add(404, '`org_not_found`: the org named in `Postern-Org` does not exist (platform key)');
  if (route.auth === 'apiKey' || route.auth === 'admin') add(503, '`service_unavailable`: Redis unreachable; nothing was stored');
  // Refused before routing, like what the HTTP parser refuses (the 4XX below where nothing else is).
  if (errors.size > 0) add(400, '`missing_host`: an HTTP/1.1 request without a `Host` header; `bad_request`: more than one `Host` header; the connection is closed');

  const responses: Record<string, unknown> = { ...successes };
  for (const [status, { descriptions, codes }] of [...errors].sort(([a], [b]) => a.localeCompare(b))) {
    responses[status] = errorResponse(status, { description: descriptions.join('; '), codes });
  }
  // Whatever the route, a request the HTTP parser refuses never reaches it.
  if (!Object.keys(responses).some((s) => s.startsWith('4'))) {
    responses['4XX'] = errorResponse('4XX', { description: 'the request is not valid HTTP (`bad_request`), its headers are too large (`headers_too_large`) or it has no `Host` header in HTTP/1.1 (`missing_host`) or more than one (`bad_request`)', codes: [] });
  }

  const op: Record<string, unknown> = {
    operationId: `${route.method}${route.path.replace(/[/:-](\w)/g, (_m, c: string) => c.toUpperCase())}`,
    summary: route.summary,
    tags: [route.tag],
    security: route.auth === 'apiKey' ? [{ apiKey: [] }, { platformKey: [], postern_org: [] }] : route.auth === 'admin' ? [{ adminToken: [] }] : route.auth === 'adminBrowser' ? [{ adminToken: [] }, { adminBasic: [] }] : [],
    responses,
  };
  const scopeNote = route.scope ? `Requires an API key (or a platform key) with the \`${route.scope}\` scope.` : undefined;
  const description = [reference?.description, scopeNote].filter((part) => part !== undefined).join('\n\n');
  if (description !== '') op.description = description;
  if (route.scope) op['x-postern-scope'] = route.scope;
  const parameters = [
    ...pathParams.map((name) => ({ name, in: 'path', required: true, description: `the ${name} of the resource`, schema: { type: 'string' } })),
    ...(route.query ? queryParameters(route.query) : []),
  ];
  if (idempotent) {
    parameters.push({ name: 'Idempotency-Key', in: 'header', required: false, description: 'repeats within 24 h get the first answer again', schema: { type: 'string', minLength: 1, maxLength: 200 } as never });
  }
  if (parameters.length > 0) op.parameters = parameters;
  if (route.body) {
    const media: Record<string, unknown> = { schema: bodySchema(route.body) };
    if (reference?.request !== undefined) media.example = reference.request;
    op.requestBody = { required: !route.bodyOptional, content: { 'application/json': media } };
  }
  return op;
}

/** The OpenAPI path for an express pattern: `/v1/endpoints/:id` → `/v1/endpoints/{id}`. */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z_]+)/g, '{$1}');
}

/** Options of {@link buildOpenApiDocument}. */
export interface OpenApiOptions {
  /** The `servers` entry: where the API is (default `/`: the ingest that serves the document). */
  serverUrl?: string;
}

/** One line per tag, in the order the document lists them. */
const TAGS: { name: string; description: string }[] = [
  { name: 'operations', description: 'Health, readiness, metrics, this API reference (as OpenAPI and as a web page) and Bull Board.' },
  { name: 'policies', description: 'Delivery rules: presets, timelines and previews.' },
  { name: 'orgs', description: 'Tenants (admin token).' },
  { name: 'platform keys', description: 'One credential acting for any org named in `Postern-Org` (admin token).' },
  { name: 'api keys', description: "An org's API keys and scopes." },
  { name: 'endpoints', description: 'Where deliveries go, with their secrets, policy and health.' },
  { name: 'events', description: 'What producers send; each fans out to subscribed endpoints.' },
  { name: 'event catalog', description: "The org's event types: descriptions, JSON Schemas, examples; validation of new events; AsyncAPI." },
  { name: 'portal', description: 'What the customer portal shows: branding, policy choices, endpoints in plain words.' },
  { name: 'overview', description: 'Attempt counts over time.' },
  { name: 'deliveries', description: 'The delivery log, attempts and redelivery.' },
  { name: 'notifications', description: 'Endpoints paused or disabled by their breaker.' },
  { name: 'transformations', description: "Endpoints' transformations: templates and a test run (docs/transformations.md)." },
  { name: 'audit log', description: 'Who changed what through the API, kept 90 days.' },
];

/**
 * Builds the OpenAPI 3.1 document of ingest's HTTP API from {@link API_ROUTES}: each route's
 * request body and query are the JSON Schema of the zod schemas that validate them, each JSON
 * answer the JSON Schema of the zod schema it is built from, each error `{error: {code,
 * message}}` with its codes. `npx redocly lint` with the recommended rules passes on it.
 */
export function buildOpenApiDocument(routes: readonly RouteDoc[] = API_ROUTES, options: OpenApiOptions = {}): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    paths[path] ??= {};
    paths[path][route.method] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Postern API',
      version: '1.0.0',
      description: 'Events in, signed webhook deliveries out. Errors are `{"error":{"code","message"}}`.',
      // Postern declares no open-source license; the API description is the project's own.
      license: { name: 'Proprietary', identifier: 'LicenseRef-Postern' },
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    servers: [{ url: options.serverUrl ?? '/', description: 'the ingest that serves this document (`npm start`: http://localhost:3000)' }],
    tags: TAGS,
    paths,
    components: {
      schemas: { Error: jsonSchema(errorResponse_, 'output') },
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: "An org's API key (`pk_…`)." },
        platformKey: { type: 'http', scheme: 'bearer', description: 'A platform key (`ppk_…`, made with the admin token), sent with `Postern-Org` naming the org it acts for.' },
        postern_org: { type: 'apiKey', in: 'header', name: 'Postern-Org', description: 'With a platform key: the id of the org the request acts for (`org_…`).' },
        adminToken: { type: 'http', scheme: 'bearer', description: '`ADMIN_TOKEN`.' },
        adminBasic: { type: 'http', scheme: 'basic', description: 'Any user name, `ADMIN_TOKEN` as the password (for browsers).' },
      },
    },
  };
}

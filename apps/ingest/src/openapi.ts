import { PRESET_NAMES, policySchema } from '@postern/shared';
import { z } from 'zod';
import { eventListQuery } from './routes/events.js';
import { policyPreviewBody } from './routes/policy-preview.js';
import { recoverBody } from './routes/redeliveries.js';
import { statsQuery } from './routes/stats.js';
import { createApiKeyBody, createPlatformKeyBody, createEndpointBody, createEventBody, createOrgBody, deliveryListQuery, pageQuery, updateEndpointBody } from './schemas.js';

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
  /** The zod object schema that validates the query string. */
  query?: z.ZodObject;
  /** Status → description, beyond the ones added from `auth`, `body`, `query` and path params. */
  responses: Record<number, string>;
  /** Content type of a 200 that is not JSON. */
  produces?: string;
}

const r = (doc: RouteDoc): RouteDoc => doc;

/**
 * Every route ingest serves, with the zod schemas that validate its input. `/openapi.json` is built
 * from this table, and a test checks that it names exactly the routes registered on the app.
 */
export const API_ROUTES: readonly RouteDoc[] = [
  r({ method: 'get', path: '/healthz', tag: 'operations', auth: 'none', summary: 'Process alive', responses: { 200: '`{"status":"ok"}`' } }),
  r({ method: 'get', path: '/readyz', tag: 'operations', auth: 'none', summary: 'Ready: Redis reachable', responses: { 200: 'every check passes', 503: '`{"status":"unavailable","failing":["redis"]}`: the failing checks by name' } }),
  r({ method: 'get', path: '/metrics', tag: 'operations', auth: 'none', summary: 'Prometheus metrics', produces: 'text/plain', responses: { 200: 'Prometheus text exposition format' } }),
  r({ method: 'get', path: '/openapi.json', tag: 'operations', auth: 'none', summary: 'This document', responses: { 200: 'OpenAPI 3.1 document' } }),
  r({ method: 'get', path: '/admin/queues', tag: 'operations', auth: 'adminBrowser', summary: 'Bull Board (browser UI) for the deliveries queue', produces: 'text/html', responses: { 200: 'the Bull Board page' } }),

  r({ method: 'get', path: '/v1/policies', tag: 'policies', auth: 'none', summary: 'Presets and their rules', responses: { 200: '`{data: [{name, seed, summary, assumptions, policy}]}`' } }),
  r({ method: 'get', path: '/v1/policies/:name/timeline', tag: 'policies', auth: 'none', summary: "A preset's attempt times for a delivery that always fails", responses: { 200: '`{name, attempts}`' } }),

  r({ method: 'post', path: '/v1/policies/preview', tag: 'policies', auth: 'apiKey', scope: 'webhooks:read', body: policyPreviewBody, summary: 'Resolve a policy as creating an endpoint would, with its attempt timeline (nothing is saved)', responses: { 200: '`{policyName, policy, attempts}`' } }),

  r({ method: 'post', path: '/v1/orgs', tag: 'orgs', auth: 'admin', body: createOrgBody, summary: 'Create an org and its first API key (shown once)', responses: { 201: '`{id, name, createdAt, apiKey}`' } }),
  r({ method: 'post', path: '/v1/orgs/:id/suspend', tag: 'orgs', auth: 'admin', summary: 'Suspend an org: its keys get 403 org_suspended, its deliveries settle as each policy says', responses: { 200: '`{id, name, status, createdAt}`', 404: 'no such org' } }),
  r({ method: 'post', path: '/v1/orgs/:id/reactivate', tag: 'orgs', auth: 'admin', summary: 'Reactivate a suspended org', responses: { 200: '`{id, name, status, createdAt}`', 404: 'no such org' } }),

  r({ method: 'post', path: '/v1/platform-keys', tag: 'platform keys', auth: 'admin', body: createPlatformKeyBody, summary: 'Create a platform key (shown once): one credential that acts for any org named in `Postern-Org`, within its scopes', responses: { 201: 'the key record with `key`' } }),
  r({ method: 'get', path: '/v1/platform-keys', tag: 'platform keys', auth: 'admin', query: pageQuery, summary: 'Every platform key (prefix only), revoked ones included', responses: { 200: '`{data, nextCursor}`' } }),
  r({ method: 'delete', path: '/v1/platform-keys/:id', tag: 'platform keys', auth: 'admin', summary: 'Revoke a platform key: the next request with it gets 401', responses: { 200: 'the revoked key record', 404: 'no such platform key' } }),

  r({ method: 'get', path: '/v1/me', tag: 'api keys', auth: 'apiKey', summary: 'The calling API key: org, name, prefix, scopes', responses: { 200: '`{orgId, keyId, name, prefix, scopes}`' } }),
  r({ method: 'post', path: '/v1/api-keys', tag: 'api keys', auth: 'apiKey', scope: 'webhooks:write', body: createApiKeyBody, summary: 'Create an API key (shown once)', responses: { 201: 'the key record with `apiKey`' } }),
  r({ method: 'get', path: '/v1/api-keys', tag: 'api keys', auth: 'apiKey', scope: 'webhooks:read', query: pageQuery, summary: "The org's API keys (prefix only)", responses: { 200: '`{data, nextCursor}`' } }),
  r({ method: 'delete', path: '/v1/api-keys/:id', tag: 'api keys', auth: 'apiKey', scope: 'webhooks:write', summary: 'Revoke an API key', responses: { 200: 'the revoked key record' } }),

  r({ method: 'post', path: '/v1/endpoints', tag: 'endpoints', auth: 'apiKey', scope: 'webhooks:write', body: createEndpointBody, summary: 'Register an endpoint', responses: { 201: 'the endpoint with its `secret`' } }),
  r({ method: 'get', path: '/v1/endpoints', tag: 'endpoints', auth: 'apiKey', scope: 'webhooks:read', query: pageQuery, summary: "The org's endpoints", responses: { 200: '`{data, nextCursor}`' } }),
  r({ method: 'get', path: '/v1/endpoints/:id', tag: 'endpoints', auth: 'apiKey', scope: 'webhooks:read', summary: 'One endpoint with its health', responses: { 200: 'the endpoint' } }),
  r({ method: 'patch', path: '/v1/endpoints/:id', tag: 'endpoints', auth: 'apiKey', scope: 'webhooks:write', body: updateEndpointBody, summary: 'Change an endpoint', responses: { 200: 'the endpoint' } }),
  r({ method: 'delete', path: '/v1/endpoints/:id', tag: 'endpoints', auth: 'apiKey', scope: 'webhooks:write', summary: 'Delete an endpoint; its queued deliveries end cancelled', responses: { 204: 'deleted' } }),
  r({ method: 'get', path: '/v1/endpoints/:id/secret', tag: 'endpoints', auth: 'apiKey', scope: 'webhooks:write', summary: 'The current signing secret', responses: { 200: '`{secret, previous}`' } }),
  r({ method: 'post', path: '/v1/endpoints/:id/rotate-secret', tag: 'endpoints', auth: 'apiKey', scope: 'webhooks:write', summary: 'New secret; the old one keeps signing for 24 h', responses: { 200: '`{secret, previousSecretValidUntil}`' } }),
  r({ method: 'post', path: '/v1/endpoints/:id/pause', tag: 'endpoints', auth: 'apiKey', scope: 'webhooks:write', summary: 'Pause an endpoint', responses: { 200: 'the endpoint' } }),
  r({ method: 'post', path: '/v1/endpoints/:id/resume', tag: 'endpoints', auth: 'apiKey', scope: 'webhooks:write', summary: 'Resume an endpoint; held deliveries are re-queued oldest first', responses: { 200: 'the endpoint with `requeued`', 409: '`recreate_required`: the policy re-enables only by re-creating' } }),
  r({ method: 'get', path: '/v1/endpoints/:id/timeline', tag: 'endpoints', auth: 'apiKey', scope: 'webhooks:read', summary: "The endpoint's policy as attempt times", responses: { 200: '`{endpointId, policyName, attempts}`' } }),
  r({ method: 'post', path: '/v1/endpoints/:id/test', tag: 'events', auth: 'apiKey', scope: 'webhooks:write', summary: 'Send a `webhook.test` event to this endpoint', responses: { 202: '`{id, deliveries}`', 409: '`endpoint_inactive`' } }),

  r({ method: 'post', path: '/v1/events', tag: 'events', auth: 'apiKey', scope: 'events:write', body: createEventBody, summary: 'Send an event to every subscribed endpoint', responses: { 202: '`{id, deliveries: [{id, endpointId}]}`; stored and queued', 409: '`idempotency_key_reused`' } }),
  r({ method: 'get', path: '/v1/events', tag: 'events', auth: 'apiKey', scope: 'webhooks:read', query: eventListQuery, summary: "The org's events, newest first, filtered by type, idempotency key, endpoint and time", responses: { 200: '`{data: [{id, type, createdAt, idempotencyKey, deliveryCount}], nextCursor}`; a page may be short when filters match sparsely: follow `nextCursor` until null' } }),
  r({ method: 'get', path: '/v1/events/:id', tag: 'events', auth: 'apiKey', scope: 'webhooks:read', summary: 'An event: its data, the exact envelope sent, and every delivery of it, redeliveries included', responses: { 200: 'the event with `envelope`, `deliveryIds` and `deliveries`' } }),
  r({ method: 'get', path: '/v1/stats', tag: 'overview', auth: 'apiKey', scope: 'webhooks:read', query: statsQuery, summary: 'Attempts by minute (last hour) or hour (last day): successes, failures, error codes; the org or one endpoint', responses: { 200: '`{scope, window, bucketMs, totals: {attempts, succeeded, failed, successRate}, buckets: [{startAt, attempts, succeeded, failed}], errors: [{code, count}]}`' } }),

  r({ method: 'get', path: '/v1/endpoints/:id/deliveries', tag: 'deliveries', auth: 'apiKey', scope: 'webhooks:read', query: deliveryListQuery, summary: "An endpoint's delivery log, newest first", responses: { 200: '`{data, nextCursor}`' } }),
  r({ method: 'get', path: '/v1/deliveries/:id', tag: 'deliveries', auth: 'apiKey', scope: 'webhooks:read', summary: 'One delivery with its attempts', responses: { 200: 'the delivery with `attempts`' } }),
  r({ method: 'post', path: '/v1/deliveries/:id/send-now', tag: 'deliveries', auth: 'apiKey', scope: 'webhooks:write', summary: 'Make the next attempt of a delivery waiting for a retry now; the schedule after it is unchanged', responses: { 202: '`{delivery}`', 409: '`in_flight`, `delivery_finished`, `delivery_held` or `not_waiting`' } }),
  r({ method: 'post', path: '/v1/deliveries/:id/redeliver', tag: 'deliveries', auth: 'apiKey', scope: 'webhooks:write', summary: 'Redeliver one delivery', responses: { 202: '`{delivery}`', 409: '`in_flight`, `delivery_pending`, `endpoint_inactive`, …' } }),
  r({ method: 'post', path: '/v1/endpoints/:id/redeliver-failed', tag: 'deliveries', auth: 'apiKey', scope: 'webhooks:write', summary: 'Redeliver every failed delivery (≤ 500 a call)', responses: { 202: '`{count, remaining}`', 409: 'redelivery not allowed' } }),
  r({ method: 'post', path: '/v1/endpoints/:id/recover', tag: 'deliveries', auth: 'apiKey', scope: 'webhooks:write', body: recoverBody, summary: 'Redeliver what failed since a time (≤ 500 a call)', responses: { 202: '`{count, remaining}`', 409: 'redelivery not allowed' } }),

  r({ method: 'get', path: '/v1/notifications', tag: 'notifications', auth: 'apiKey', scope: 'webhooks:read', query: pageQuery, summary: 'Endpoints paused or disabled by their breaker, newest first', responses: { 200: '`{data, nextCursor}`' } }),
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
]);

const ERROR_SCHEMA = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string', description: 'snake_case, stable' }, message: { type: 'string' } },
    },
  },
};

/** JSON Schema of what a route accepts (zod's input side: defaults optional, coercions as their target). */
function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const out = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', target: 'draft-2020-12' }) as Record<string, unknown>;
  delete out.$schema;
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

const errorResponse = (description: string) => ({ description, content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } });

function operation(route: RouteDoc): Record<string, unknown> {
  const pathParams = [...route.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1] as string);
  const responses: Record<string, unknown> = {};
  for (const [status, description] of Object.entries(route.responses)) {
    const code = Number(status);
    if (code >= 400) responses[status] = errorResponse(description);
    else if (code === 204) responses[status] = { description };
    else responses[status] = { description, content: { [route.produces ?? 'application/json']: {} } };
  }
  const add = (status: number, description: string) => {
    responses[String(status)] ??= errorResponse(description);
  };
  if (route.body) {
    add(400, '`invalid_request` naming the field, or `invalid_json`');
    add(413, '`payload_too_large`: body over `MAX_BODY_BYTES`');
    add(415, '`unsupported_media_type`: not UTF-8 `application/json`');
  }
  if (route.query) add(400, '`invalid_request` naming the parameter');
  if (route.auth === 'apiKey') {
    add(401, '`unauthorized`: missing, unknown or revoked API key');
    add(403, '`org_suspended`, or `insufficient_scope` when the key lacks the scope');
  }
  if (route.auth === 'admin' || route.auth === 'adminBrowser') add(401, '`unauthorized`: admin token required');
  if (pathParams.length > 0) add(404, '`not_found`: no such resource in your org');
  if (route.auth === 'apiKey' || route.auth === 'admin') add(503, '`service_unavailable`: Redis unreachable; nothing was stored');

  const op: Record<string, unknown> = {
    operationId: `${route.method}${route.path.replace(/[/:-](\w)/g, (_m, c: string) => c.toUpperCase())}`,
    summary: route.summary,
    tags: [route.tag],
    security: route.auth === 'apiKey' ? [{ apiKey: [] }, { platformKey: [], postern_org: [] }] : route.auth === 'admin' ? [{ adminToken: [] }] : route.auth === 'adminBrowser' ? [{ adminToken: [] }, { adminBasic: [] }] : [],
    responses,
  };
  if (route.scope) {
    op.description = `Requires an API key with the \`${route.scope}\` scope.`;
    op['x-postern-scope'] = route.scope;
  }
  const parameters = [
    ...pathParams.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })),
    ...(route.query ? queryParameters(route.query) : []),
  ];
  if (route.path === '/v1/events' || IDEMPOTENT_ACTIONS.has(`${route.method} ${route.path}`)) {
    parameters.push({ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', minLength: 1, maxLength: 200 } as never });
  }
  if (parameters.length > 0) op.parameters = parameters;
  if (route.body) op.requestBody = { required: true, content: { 'application/json': { schema: bodySchema(route.body) } } };
  return op;
}

/** The OpenAPI path for an express pattern: `/v1/endpoints/:id` → `/v1/endpoints/{id}`. */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z_]+)/g, '{$1}');
}

/**
 * Builds the OpenAPI 3.1 document of ingest's HTTP API from {@link API_ROUTES}: each route's
 * request body and query are the JSON Schema of the zod schemas that validate them.
 */
export function buildOpenApiDocument(routes: readonly RouteDoc[] = API_ROUTES): Record<string, unknown> {
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
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    paths,
    components: {
      schemas: { Error: ERROR_SCHEMA },
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

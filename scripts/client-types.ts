import { buildOpenApiDocument } from '@postern/ingest';

type Schema = Record<string, any>;

/** Named types: the answer (status) or request body (`body`) or query (`query`) of an operation. */
const NAMED: [name: string, method: string, path: string, part: string, doc: string][] = [
  ['ApiErrorBody', 'components', 'Error', '', 'The body of every error answer: `code` is snake_case and stable, `message` is for people.'],
  ['Policy', 'get', '/v1/endpoints/{id}', '200#policy', 'A resolved delivery policy, as stored on an endpoint.'],
  ['PolicyInput', 'post', '/v1/endpoints', 'body#policy', 'A policy as an endpoint takes it: a preset name, a preset plus overrides, or a custom policy.'],
  ['TimelineEntry', 'get', '/v1/endpoints/{id}/timeline', '200#attempts[]', 'When an attempt can start, ms after the first.'],
  ['Endpoint', 'get', '/v1/endpoints/{id}', '200', 'An endpoint (no secrets): its settings and health.'],
  ['CreatedEndpoint', 'post', '/v1/endpoints', '201', 'A new endpoint with its secret and policy warnings.'],
  ['UpdatedEndpoint', 'patch', '/v1/endpoints/{id}', '200', 'A changed endpoint with policy warnings.'],
  ['ResumedEndpoint', 'post', '/v1/endpoints/{id}/resume', '200', 'A resumed endpoint and how many held deliveries were re-queued.'],
  ['EndpointSecret', 'get', '/v1/endpoints/{id}/secret', '200', 'The current signing secret.'],
  ['RotatedSecret', 'post', '/v1/endpoints/{id}/rotate-secret', '200', 'The new secret and until when the old one signs.'],
  ['EndpointTimeline', 'get', '/v1/endpoints/{id}/timeline', '200', "An endpoint's policy as attempt times."],
  ['Delivery', 'get', '/v1/endpoints/{id}/deliveries', '200#data[]', 'One event on its way to one endpoint.'],
  ['Attempt', 'get', '/v1/deliveries/{id}', '200#attempts[]', 'One HTTP request of a delivery.'],
  ['DeliveryWithAttempts', 'get', '/v1/deliveries/{id}', '200', 'A delivery with its attempts.'],
  ['DeliveryAction', 'post', '/v1/deliveries/{id}/redeliver', '202', 'The delivery a redeliver or send-now made or moved.'],
  ['BulkRedelivery', 'post', '/v1/endpoints/{id}/redeliver-failed', '202', 'How many deliveries a bulk redelivery made, and how many remain.'],
  ['AcceptedEvent', 'post', '/v1/events', '202', 'An accepted event and its deliveries.'],
  ['EventSummary', 'get', '/v1/events', '200#data[]', 'An event as listed.'],
  ['EventBatchResult', 'post', '/v1/events/batch', '207#results[]', "One event's result in a batch: accepted (`status` 202), or the status and error `POST /v1/events` would have answered."],
  ['EventBatchResults', 'post', '/v1/events/batch', '207', 'The results of a batch, one per event in request order.'],
  ['Event', 'get', '/v1/events/{id}', '200', 'An event: its data, the exact envelope sent, every delivery.'],
  ['ApiKey', 'get', '/v1/api-keys', '200#data[]', 'An API key (prefix only).'],
  ['CreatedApiKey', 'post', '/v1/api-keys', '201', 'A new API key, shown once.'],
  ['PlatformKey', 'get', '/v1/platform-keys', '200#data[]', 'A platform key (prefix only).'],
  ['CreatedPlatformKey', 'post', '/v1/platform-keys', '201', 'A new platform key, shown once.'],
  ['Me', 'get', '/v1/me', '200', 'The calling key: its org and scopes.'],
  ['CreatedOrg', 'post', '/v1/orgs', '201', 'A new org and its first API key, shown once.'],
  ['Org', 'post', '/v1/orgs/{id}/suspend', '200', 'An org and its status.'],
  ['OrgSettings', 'get', '/v1/org', '200', "The calling org's settings."],
  ['CheckSecret', 'get', '/v1/org/check-secret', '200', 'The secret that signs pre-attempt check requests.'],
  ['Notification', 'get', '/v1/notifications', '200#data[]', 'An endpoint paused or disabled by its breaker.'],
  ['Stats', 'get', '/v1/stats', '200', 'Attempts over the last hour or day.'],
  ['Preset', 'get', '/v1/policies', '200#data[]', 'A named policy.'],
  ['PresetTimeline', 'get', '/v1/policies/{name}/timeline', '200', "A preset's attempt times."],
  ['PolicyPreview', 'post', '/v1/policies/preview', '200', 'A policy resolved as creating an endpoint would, with its timeline.'],
  ['Readiness', 'get', '/readyz', '200', '`/readyz`.'],
  ['EventType', 'get', '/v1/event-types/{name}', '200', 'One entry of the event catalog.'],
  ['AsyncApiDocument', 'get', '/v1/event-types/asyncapi.json', '200', 'The event catalog as an AsyncAPI 3.0 document.'],
  ['PortalSettings', 'get', '/v1/portal', '200', 'What the customer portal shows: mode, branding, policy choices.'],
  ['EndpointSummary', 'get', '/v1/endpoints/{id}/summary', '200', 'An endpoint in plain words, with its last 24 h.'],
  ['CreateEventTypeBody', 'post', '/v1/event-types', 'body', '`POST /v1/event-types` body.'],
  ['UpdateEventTypeBody', 'patch', '/v1/event-types/{name}', 'body', '`PATCH /v1/event-types/:name` body.'],
  ['SendExampleBody', 'post', '/v1/endpoints/{id}/send-example', 'body', '`POST /v1/endpoints/:id/send-example` body.'],
  ['CreateEndpointBody', 'post', '/v1/endpoints', 'body', '`POST /v1/endpoints` body.'],
  ['UpdateEndpointBody', 'patch', '/v1/endpoints/{id}', 'body', '`PATCH /v1/endpoints/:id` body.'],
  ['CreateEventBody', 'post', '/v1/events', 'body', '`POST /v1/events` body.'],
  ['CreateEventBatchBody', 'post', '/v1/events/batch', 'body', '`POST /v1/events/batch` body.'],
  ['CreateApiKeyBody', 'post', '/v1/api-keys', 'body', '`POST /v1/api-keys` body.'],
  ['CreatePlatformKeyBody', 'post', '/v1/platform-keys', 'body', '`POST /v1/platform-keys` body.'],
  ['CreateOrgBody', 'post', '/v1/orgs', 'body', '`POST /v1/orgs` body.'],
  ['UpdateOrgBody', 'patch', '/v1/org', 'body', '`PATCH /v1/org` body.'],
  ['RotateSecretBody', 'post', '/v1/endpoints/{id}/rotate-secret', 'body', '`POST /v1/endpoints/:id/rotate-secret` body.'],
  ['RecoverBody', 'post', '/v1/endpoints/{id}/recover', 'body', '`POST /v1/endpoints/:id/recover` body.'],
  ['PageQuery', 'get', '/v1/endpoints', 'query', 'Paging of a list.'],
  ['DeliveryListQuery', 'get', '/v1/endpoints/{id}/deliveries', 'query', '`GET /v1/endpoints/:id/deliveries` query.'],
  ['EventListQuery', 'get', '/v1/events', 'query', '`GET /v1/events` query.'],
  ['StatsQuery', 'get', '/v1/stats', 'query', '`GET /v1/stats` query.'],
  ['AuditEntry', 'get', '/v1/audit-log', '200#data[]', 'One change made through the API: who, what, when, which fields (never their values).'],
  ['AuditLogQuery', 'get', '/v1/audit-log', 'query', '`GET /v1/audit-log` query.'],
  ['EventErasure', 'delete', '/v1/events/{id}/data', '200', "An event's payload erased."],
  ['EventErasures', 'delete', '/v1/events/data', '200', 'The events erased under one idempotency key.'],
  ['DeliveryExportQuery', 'get', '/v1/deliveries/export', 'query', '`GET /v1/deliveries/export` query.'],
  ['TransformationTemplate', 'get', '/v1/transformations/templates', '200#data[]', 'A transformation template: its code and a sample event to try it on.'],
  ['TransformationTestBody', 'post', '/v1/transformations/test', 'body', '`POST /v1/transformations/test` body: code and a sample event, or code and a stored event id.'],
  ['TransformationTestResult', 'post', '/v1/transformations/test', '200', 'What a transformation would send (nothing is sent), or why it failed, with its logs and time.'],
];

function pick(doc: Schema, method: string, path: string, part: string): Schema {
  if (method === 'components') return doc.components.schemas[path];
  const op = doc.paths[path][method];
  const [head, ...steps] = part.split('#');
  let schema: Schema;
  if (head === 'body') schema = op.requestBody.content['application/json'].schema;
  else if (head === 'query') {
    const params = (op.parameters as Schema[]).filter((p) => p.in === 'query');
    schema = { type: 'object', properties: Object.fromEntries(params.map((p) => [p.name, p.schema])), required: params.filter((p) => p.required).map((p) => p.name) };
  } else schema = op.responses[head!].content['application/json'].schema;
  for (const step of steps.join('#').split('.').filter(Boolean)) {
    const name = step.replace(/\[\]$/, '');
    schema = schema.properties[name];
    if (step.endsWith('[]')) schema = schema.items;
  }
  if (schema.$ref === '#/components/schemas/Error') schema = doc.components.schemas.Error;
  return schema;
}

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** TypeScript for a JSON Schema (the subset zod emits), with named schemas referred to by name. */
function emit(schema: Schema, names: Map<string, string>, self: string, indent: string): string {
  const key = JSON.stringify(schema);
  const named = names.get(key);
  if (named && named !== self) return named;
  if (schema.$ref === '#/components/schemas/Error') return 'ApiErrorBody';
  if ('const' in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return schema.enum.map((v: unknown) => JSON.stringify(v)).join(' | ');
  const union = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(union)) return union.map((s: Schema) => wrap(emit(s, names, self, indent))).join(' | ');
  if (Array.isArray(schema.type)) return schema.type.map((t: string) => wrap(emit({ ...schema, type: t }, names, self, indent))).join(' | ');
  switch (schema.type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array':
      return `${wrap(emit(schema.items ?? {}, names, self, indent))}[]`;
    case 'object': {
      const props = Object.entries((schema.properties ?? {}) as Record<string, Schema>);
      const extra = typeof schema.additionalProperties === 'object' ? emit(schema.additionalProperties, names, self, indent) : schema.additionalProperties === false ? null : 'unknown';
      if (props.length === 0) return `Record<string, ${extra ?? 'never'}>`;
      const required = new Set<string>(schema.required ?? []);
      const inner = `${indent}  `;
      const lines = props.map(([name, s]) => {
        const comment = s.description ? `${inner}/** ${String(s.description).replace(/\*\//g, '*\\/')} */\n` : '';
        return `${comment}${inner}${IDENT.test(name) ? name : JSON.stringify(name)}${required.has(name) ? '' : '?'}: ${emit(s, names, self, inner)};`;
      });
      if (extra && extra !== 'unknown') lines.push(`${inner}[key: string]: ${extra} | undefined;`);
      return `{\n${lines.join('\n')}\n${indent}}`;
    }
    default:
      return 'unknown';
  }
}

const wrap = (t: string) => (/[|&]/.test(t) && !t.startsWith('{') ? `(${t})` : t);

/** The text of `packages/client/src/api-types.ts`, from the current OpenAPI document. */
export function clientTypesSource(): string {
  const doc = buildOpenApiDocument() as Schema;
  const picked = NAMED.map(([name, method, path, part, comment]) => ({ name, comment, schema: pick(doc, method, path, part) }));
  const names = new Map<string, string>();
  // The first name given to a schema is the one used everywhere it recurs.
  for (const { name, schema } of picked) if (!names.has(JSON.stringify(schema))) names.set(JSON.stringify(schema), name);
  const out = [
    '// Generated by scripts/generate-client-types.ts from the OpenAPI document; do not edit.',
    '// Regenerate with `npm run generate:client-types`.',
    '',
  ];
  for (const { name, comment, schema } of picked) {
    const body = emit(schema, names, name, '');
    out.push(`/** ${comment} */`);
    // A union of objects (`{…} | {…}`) starts with `{` too, but only a single object can be an interface.
    const single = body.startsWith('{') && !schema.anyOf && !schema.oneOf;
    out.push(single ? `export interface ${name} ${body}` : `export type ${name} = ${body};`);
    out.push('');
  }
  return out.join('\n');
}

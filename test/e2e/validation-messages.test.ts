import { startPostern, TEST_ADMIN_TOKEN, type TestPostern } from '../support/postern.js';

/**
 * Every 400 a bad body or query gets says which field is wrong and what is accepted, in plain
 * words: never the validation library's own phrasing ("Invalid input: expected string, received
 * undefined", a union's "Invalid input", "Too big: expected …").
 */

/** Wording of zod's default messages and issue codes; none may reach an API user. */
const RAW_PHRASING = /Invalid input|Invalid option|Invalid (string|number|type|union|enum|literal|key|element|value)\b|received (undefined|null|string|number|boolean|object|array|bigint|NaN)|\bExpected\b|\bexpected (string|number|boolean|object|array|one of|nonoptional|record|never|"|\w+ to have)|Too (big|small)|Unrecognized key|invalid_(union|type|value|format|key|element)|too_(big|small)|unrecognized_keys|nonoptional/;

/** A message of the form `<field>: <what is wrong>`, the field being a word, a dotted path, or `body`/`query`. */
const NAMES_A_FIELD = /^[A-Za-z][\w-]*(\.[\w-]+|\[\d+\])*: \S/;

let postern: TestPostern;
let apiKey: string;
let orgId: string;
let endpointId: string;

beforeAll(async () => {
  postern = await startPostern({ sender: false });
  const org = await postern.createOrg();
  apiKey = org.apiKey;
  orgId = org.id;
  endpointId = (await postern.createEndpoint(apiKey, { url: 'https://example.com/hook' })).id;
  const created = await postern.api('POST', '/v1/event-types', { key: apiKey, body: { name: 'invoice.paid', description: 'An invoice was paid' } });
  expect(created.status).toBe(201);
});
afterAll(async () => {
  await postern.close();
});

/** A bad request: method, path, body (or query in the path), and the field its message must name first. */
type Case = [label: string, method: string, path: () => string, body: unknown, field: string];

const cases: Case[] = [
  // POST /v1/events
  ['event without type', 'POST', () => '/v1/events', { data: {} }, 'type'],
  ['event with a numeric type', 'POST', () => '/v1/events', { type: 42, data: {} }, 'type'],
  ['event with an empty type', 'POST', () => '/v1/events', { type: '', data: {} }, 'type'],
  ['event with a type too long', 'POST', () => '/v1/events', { type: 'a'.repeat(201), data: {} }, 'type'],
  ['event without data', 'POST', () => '/v1/events', { type: 'a.b' }, 'data'],
  ['event with a numeric idempotencyKey', 'POST', () => '/v1/events', { type: 'a.b', data: {}, idempotencyKey: 7 }, 'idempotencyKey'],
  ['event with an empty idempotencyKey', 'POST', () => '/v1/events', { type: 'a.b', data: {}, idempotencyKey: '' }, 'idempotencyKey'],
  ['event with an object orderingKey', 'POST', () => '/v1/events', { type: 'a.b', data: {}, orderingKey: {} }, 'orderingKey'],
  ['event with an unknown field', 'POST', () => '/v1/events', { type: 'a.b', data: {}, colour: 'red' }, 'body'],
  // POST /v1/events/batch (the envelope)
  ['batch without events', 'POST', () => '/v1/events/batch', {}, 'events'],
  ['batch with events an object', 'POST', () => '/v1/events/batch', { events: {} }, 'events'],
  ['batch with no events', 'POST', () => '/v1/events/batch', { events: [] }, 'events'],
  ['batch with too many events', 'POST', () => '/v1/events/batch', { events: Array.from({ length: 101 }, () => ({ type: 'a.b', data: {} })) }, 'events'],
  // POST /v1/endpoints
  ['endpoint without url', 'POST', () => '/v1/endpoints', {}, 'url'],
  ['endpoint with a numeric url', 'POST', () => '/v1/endpoints', { url: 5 }, 'url'],
  ['endpoint with eventTypes a string', 'POST', () => '/v1/endpoints', { url: 'https://example.com/a', eventTypes: 'a.b' }, 'eventTypes'],
  ['endpoint with an empty eventTypes', 'POST', () => '/v1/endpoints', { url: 'https://example.com/a', eventTypes: [] }, 'eventTypes'],
  ['endpoint with a bad eventTypes entry', 'POST', () => '/v1/endpoints', { url: 'https://example.com/a', eventTypes: ['a b'] }, 'eventTypes'],
  ['endpoint with a numeric eventTypes entry', 'POST', () => '/v1/endpoints', { url: 'https://example.com/a', eventTypes: [3] }, 'eventTypes'],
  ['endpoint with a numeric description', 'POST', () => '/v1/endpoints', { url: 'https://example.com/a', description: 1 }, 'description'],
  ['endpoint with an unknown signatureScheme', 'POST', () => '/v1/endpoints', { url: 'https://example.com/a', signatureScheme: 'rsa' }, 'signatureScheme'],
  ['endpoint with headers an object', 'POST', () => '/v1/endpoints', { url: 'https://example.com/a', headers: { a: 'b' } }, 'headers'],
  ['endpoint with a header without name', 'POST', () => '/v1/endpoints', { url: 'https://example.com/a', headers: [{ value: 'b' }] }, 'headers'],
  ['endpoint with a header with an unknown field', 'POST', () => '/v1/endpoints', { url: 'https://example.com/a', headers: [{ name: 'x-a', value: 'b', colour: 1 }] }, 'headers'],
  ['endpoint with auth of an unknown type', 'POST', () => '/v1/endpoints', { url: 'https://example.com/a', auth: { type: 'digest' } }, 'auth'],
  ['endpoint with auth without type', 'POST', () => '/v1/endpoints', { url: 'https://example.com/a', auth: { username: 'u' } }, 'auth'],
  ['endpoint with basic auth without username', 'POST', () => '/v1/endpoints', { url: 'https://example.com/a', auth: { type: 'basic', password: 'p' } }, 'auth'],
  ['endpoint with oauth2 auth without tokenUrl', 'POST', () => '/v1/endpoints', { url: 'https://example.com/a', auth: { type: 'oauth2_client_credentials', clientId: 'c', clientSecret: 's' } }, 'auth'],
  ['endpoint with oauth2 extraParams of numbers', 'POST', () => '/v1/endpoints', { url: 'https://example.com/a', auth: { type: 'oauth2_client_credentials', tokenUrl: 'https://example.com/t', clientId: 'c', clientSecret: 's', extraParams: { a: 1 } } }, 'auth'],
  ['endpoint with a numeric proxy', 'POST', () => '/v1/endpoints', { url: 'https://example.com/a', proxy: 1 }, 'proxy'],
  ['endpoint with a transformation without code', 'POST', () => '/v1/endpoints', { url: 'https://example.com/a', transformation: { enabled: true } }, 'transformation'],
  ['endpoint with a transformation a string', 'POST', () => '/v1/endpoints', { url: 'https://example.com/a', transformation: 'x' }, 'transformation'],
  ['endpoint with a policy whose waits are a string', 'POST', () => '/v1/endpoints', { url: 'https://example.com/a', policy: { schedule: { kind: 'fixed', waitsMs: 'soon' } } }, 'policy'],
  ['endpoint with a policy of an unknown schedule kind', 'POST', () => '/v1/endpoints', { url: 'https://example.com/a', policy: { schedule: { kind: 'linear' } } }, 'policy'],
  ['endpoint with a policy with a bad retention', 'POST', () => '/v1/endpoints', { url: 'https://example.com/a', policy: { retention: { weeks: 2 } } }, 'policy'],
  ['endpoint with a policy of a bad type', 'POST', () => '/v1/endpoints', { url: 'https://example.com/a', policy: 42 }, 'policy'],
  ['endpoint with an unknown field', 'POST', () => '/v1/endpoints', { url: 'https://example.com/a', colour: 'red' }, 'body'],
  // PATCH /v1/endpoints/:id
  ['patch with a null url', 'PATCH', () => `/v1/endpoints/${endpointId}`, { url: null }, 'url'],
  ['patch with eventTypes null', 'PATCH', () => `/v1/endpoints/${endpointId}`, { eventTypes: null }, 'eventTypes'],
  ['patch with a numeric description', 'PATCH', () => `/v1/endpoints/${endpointId}`, { description: false }, 'description'],
  ['patch with a header value a number', 'PATCH', () => `/v1/endpoints/${endpointId}`, { headers: [{ name: 'x-a', value: 1 }] }, 'headers'],
  ['patch with mtls auth without certificate', 'PATCH', () => `/v1/endpoints/${endpointId}`, { auth: { type: 'mtls' } }, 'auth'],
  ['patch with a transformation whose enabled is a string', 'PATCH', () => `/v1/endpoints/${endpointId}`, { transformation: { code: 'function handler(w) { return w }', enabled: 'yes' } }, 'transformation'],
  ['patch with an unknown field', 'PATCH', () => `/v1/endpoints/${endpointId}`, { secret: 'x' }, 'body'],
  // POST /v1/event-types, PATCH /v1/event-types/:name
  ['event type without name', 'POST', () => '/v1/event-types', { description: 'd' }, 'name'],
  ['event type without description', 'POST', () => '/v1/event-types', { name: 'a.b' }, 'description'],
  ['event type with a numeric description', 'POST', () => '/v1/event-types', { name: 'a.b', description: 1 }, 'description'],
  ['event type with a numeric group', 'POST', () => '/v1/event-types', { name: 'a.b', description: 'd', group: 1 }, 'group'],
  ['event type with a schema a string', 'POST', () => '/v1/event-types', { name: 'a.b', description: 'd', schema: 'object' }, 'schema'],
  ['event type with examples an object', 'POST', () => '/v1/event-types', { name: 'a.b', description: 'd', examples: {} }, 'examples'],
  ['event type with deprecated a string', 'POST', () => '/v1/event-types', { name: 'a.b', description: 'd', deprecated: 'yes' }, 'deprecated'],
  ['event type with an unknown field', 'POST', () => '/v1/event-types', { name: 'a.b', description: 'd', colour: 1 }, 'body'],
  ['event type patch with a null description', 'PATCH', () => '/v1/event-types/invoice.paid', { description: null }, 'description'],
  ['event type patch with archived a number', 'PATCH', () => '/v1/event-types/invoice.paid', { archived: 1 }, 'archived'],
  // Other bodies and queries
  ['org settings with disabledEventTypes a string', 'PATCH', () => '/v1/org', { disabledEventTypes: 'a.*' }, 'disabledEventTypes'],
  ['org settings with a bad disabledEventTypes entry', 'PATCH', () => '/v1/org', { disabledEventTypes: [1] }, 'disabledEventTypes'],
  ['org settings with eventValidation unknown', 'PATCH', () => '/v1/org', { eventValidation: 'sometimes' }, 'eventValidation'],
  ['api key without scopes', 'POST', () => '/v1/api-keys', { name: 'k' }, 'scopes'],
  ['api key with an unknown scope', 'POST', () => '/v1/api-keys', { name: 'k', scopes: ['everything'] }, 'scopes'],
  ['send-example without eventType', 'POST', () => `/v1/endpoints/${endpointId}/send-example`, {}, 'eventType'],
  ['recover without since', 'POST', () => `/v1/endpoints/${endpointId}/recover`, {}, 'since'],
  ['transformation test without code', 'POST', () => '/v1/transformations/test', { eventType: 'a.b', payload: {} }, 'code'],
  ['transformation test with neither eventType nor eventId', 'POST', () => '/v1/transformations/test', { code: 'function handler(w) { return w }' }, 'eventType'],
  ['transformation test with a body that is a list', 'POST', () => '/v1/transformations/test', [], 'body'],
  ['transformation test with a numeric eventId', 'POST', () => '/v1/transformations/test', { code: 'function handler(w) { return w }', eventId: 5 }, 'eventId'],
  ['policy preview with a bad policy', 'POST', () => '/v1/policies/preview', { policy: { maxAttempts: 'many' } }, 'policy'],
  ['event list with a bad since', 'GET', () => '/v1/events?since=yesterday', undefined, 'since'],
  ['delivery list with a bad status', 'GET', () => `/v1/endpoints/${endpointId}/deliveries?status=lost`, undefined, 'status'],
  ['export with a bad endpointId', 'GET', () => '/v1/deliveries/export?endpointId=42', undefined, 'endpointId'],
  ['stats with a bad window', 'GET', () => '/v1/stats?window=forever', undefined, 'window'],
  // A query parameter given twice arrives as a list where one value is taken.
  ['endpoint list with cursor given twice', 'GET', () => '/v1/endpoints?cursor=ep_a&cursor=ep_b', undefined, 'cursor'],
  ['event list with idempotencyKey given twice', 'GET', () => '/v1/events?idempotencyKey=a&idempotencyKey=b', undefined, 'idempotencyKey'],
  ['event list with endpointId given twice', 'GET', () => `/v1/events?endpointId=${endpointId}&endpointId=${endpointId}`, undefined, 'endpointId'],
  ['export with endpointId given twice', 'GET', () => `/v1/deliveries/export?endpointId=${endpointId}&endpointId=${endpointId}`, undefined, 'endpointId'],
  ['stats with endpointId given twice', 'GET', () => `/v1/stats?endpointId=${endpointId}&endpointId=${endpointId}`, undefined, 'endpointId'],
  ['audit log with target given twice', 'GET', () => '/v1/audit-log?target=ep_a&target=ep_b', undefined, 'target'],
  ['audit log with cursor given twice', 'GET', () => '/v1/audit-log?cursor=a&cursor=b', undefined, 'cursor'],
  ['erasure by key with the key given twice', 'DELETE', () => '/v1/events/data?idempotencyKey=a&idempotencyKey=b', undefined, 'idempotencyKey'],
  ['delivery list with limit given twice', 'GET', () => `/v1/endpoints/${endpointId}/deliveries?limit=10&limit=20`, undefined, 'limit'],
  ['delivery list with status given twice', 'GET', () => `/v1/endpoints/${endpointId}/deliveries?status=failed&status=failed`, undefined, 'status'],
  ['live stream with an empty eventType', 'GET', () => '/v1/deliveries/stream?eventType=', undefined, 'eventType'],
];

test.each(cases)('%s: 400 naming the field in plain words', async (_label, method, path, body, field) => {
  const r = await postern.api(method, path(), { key: apiKey, ...(body === undefined ? {} : { body }) });
  const message = String(r.body?.error?.message);
  expect({ status: r.status, message }).toEqual({ status: 400, message: expect.stringMatching(NAMES_A_FIELD) });
  expect(message.startsWith(`${field}`)).toBe(true);
  expect(message).not.toMatch(RAW_PHRASING);
  if (_label.includes('given twice')) expect(message).toBe(`${field}: ${field} must be given once`);
});

test('each bad event of a batch gets its own 400 naming its field in plain words', async () => {
  const events = [
    { data: {} },
    { type: 7, data: {} },
    { type: 'a.b' },
    { type: 'a.b', data: {}, idempotencyKey: 3 },
    { type: 'a.b', data: {}, orderingKey: [] },
    { type: 'a.b', data: {}, extra: true },
    'not an object',
    { type: 'a.b', data: {} },
  ];
  const r = await postern.api('POST', '/v1/events/batch', { key: apiKey, body: { events } });
  expect(r.status).toBe(207);
  const results = r.body.results as { status: number; error?: { code: string; message: string } }[];
  expect(results.map((x) => x.status)).toEqual([400, 400, 400, 400, 400, 400, 400, 202]);
  // Named under the event's place in the batch; a body that is not an object is the event itself.
  const fields = ['events[0].type', 'events[1].type', 'events[2].data', 'events[3].idempotencyKey', 'events[4].orderingKey', 'events[5]', 'events[6]'];
  results.slice(0, 7).forEach((x, i) => {
    expect(x.error!.message).toMatch(NAMES_A_FIELD);
    expect([i, x.error!.message.split(': ')[0]]).toEqual([i, fields[i]]);
    expect(x.error!.message).not.toMatch(RAW_PHRASING);
  });
});

test('the admin routes answer in the same words (orgs, portal sessions)', async () => {
  for (const [path, body, field] of [
    ['/v1/orgs', {}, 'name'],
    ['/v1/orgs', { name: ['a'] }, 'name'],
    [`/v1/orgs/${orgId}/portal-sessions`, { ttlSeconds: '60' }, 'ttlSeconds'],
    [`/v1/orgs/${orgId}/portal-sessions`, { mode: 'admin' }, 'mode'],
  ] as const) {
    const r = await postern.api('POST', path, { key: TEST_ADMIN_TOKEN, body });
    expect({ status: r.status, message: r.body.error?.message }).toEqual({ status: 400, message: expect.stringMatching(new RegExp(`^${field}: `)) });
    expect(r.body.error.message).not.toMatch(RAW_PHRASING);
  }
});

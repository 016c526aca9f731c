import { API_ROUTES } from '@postern/ingest';
import { fastPolicy, startPostern, TEST_ADMIN_TOKEN, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { openApiValidator, operationKey } from '../support/openapi-validator.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Issue 15, item 1: the answers the code builds are the ones `/openapi.json` documents. Every
 * documented operation is called here (successes and typical errors), and each answer's status
 * and body are validated against the document the running ingest serves.
 */

let postern: TestPostern;
let receiver: TestReceiver;
let spec: ReturnType<typeof openApiValidator>;
const checkedSuccess = new Set<string>();
const problems: string[] = [];

beforeAll(async () => {
  postern = await startPostern();
  receiver = await startReceiver(() => 500);
  spec = openApiValidator(await (await fetch(`${postern.baseUrl}/openapi.json`)).json());
});

afterAll(async () => {
  await postern.close();
  await receiver.close();
});

/** Calls the API and checks the answer against the document; returns the answer. */
async function call(method: string, path: string, opts: { key?: string; body?: unknown; headers?: Record<string, string> } = {}) {
  const r = await postern.api(method, path, opts);
  const result = spec.check(method, path, r.status, r.body, r.headers.get('content-type'));
  problems.push(...result.problems);
  if (r.status < 300 && result.operation) checkedSuccess.add(result.operation);
  return r;
}

/** Opens an event stream, checks its status and content type against the document, and closes it. */
async function callStream(path: string, key: string) {
  const controller = new AbortController();
  const res = await fetch(`${postern.baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` }, signal: controller.signal });
  const result = spec.check('GET', path, res.status, '', res.headers.get('content-type'));
  controller.abort();
  problems.push(...result.problems);
  if (res.status < 300 && result.operation) checkedSuccess.add(result.operation);
}

test('every answer of every documented operation validates against the document', async () => {
  await call('GET', '/healthz');
  await call('GET', '/readyz');
  await call('GET', '/metrics');
  await call('GET', '/openapi.json');
  await call('GET', '/docs/api');
  await call('GET', '/admin/queues', { key: TEST_ADMIN_TOKEN });
  await call('GET', '/admin/queues');
  await call('GET', '/v1/policies');
  await call('GET', '/v1/policies/tourical/timeline');
  await call('GET', '/v1/policies/nope/timeline');

  const org = (await call('POST', '/v1/orgs', { key: TEST_ADMIN_TOKEN, body: { name: 'spec' } })).body;
  await call('POST', '/v1/orgs', { key: TEST_ADMIN_TOKEN, body: {} });
  await call('POST', '/v1/orgs', { body: { name: 'x' } });
  const key = org.apiKey as string;
  await call('POST', `/v1/orgs/${org.id}/suspend`, { key: TEST_ADMIN_TOKEN });
  await call('GET', '/v1/me', { key });
  await call('POST', `/v1/orgs/${org.id}/reactivate`, { key: TEST_ADMIN_TOKEN });
  await call('POST', '/v1/orgs/org_nope/reactivate', { key: TEST_ADMIN_TOKEN });

  const platform = (await call('POST', '/v1/platform-keys', { key: TEST_ADMIN_TOKEN, body: { name: 'p', scopes: ['webhooks:read'] } })).body;
  await call('GET', '/v1/platform-keys', { key: TEST_ADMIN_TOKEN });
  await call('GET', '/v1/me', { key: platform.key, headers: { 'postern-org': org.id } });
  await call('GET', '/v1/me', { key: platform.key });
  await call('POST', '/v1/endpoints', { key: platform.key, headers: { 'postern-org': org.id }, body: { url: receiver.url } });
  const session = (await call('POST', `/v1/orgs/${org.id}/portal-sessions`, { key: TEST_ADMIN_TOKEN, body: { ttlSeconds: 600 } })).body;
  await call('POST', `/v1/orgs/${org.id}/portal-sessions`, { key: platform.key, body: { scopes: ['webhooks:write'] } });
  await call('POST', `/v1/orgs/${org.id}/portal-sessions`, { key: TEST_ADMIN_TOKEN, body: { ttlSeconds: 1 } });
  await call('POST', '/v1/orgs/org_nope/portal-sessions', { key: TEST_ADMIN_TOKEN, body: {} });
  await call('GET', `/v1/orgs/${org.id}/portal-sessions/${session.id}`, { key: TEST_ADMIN_TOKEN });
  await call('GET', '/v1/me', { key: session.token });
  await call('GET', '/v1/api-keys', { key: session.token });
  await call('DELETE', `/v1/orgs/${org.id}/portal-sessions/${session.id}`, { key: TEST_ADMIN_TOKEN });
  await call('GET', '/v1/endpoints', { key: session.token });
  await call('DELETE', `/v1/orgs/${org.id}/portal-sessions/ps_nope`, { key: TEST_ADMIN_TOKEN });
  await call('DELETE', `/v1/platform-keys/${platform.id}`, { key: TEST_ADMIN_TOKEN });
  await call('DELETE', '/v1/platform-keys/pfk_nope', { key: TEST_ADMIN_TOKEN });

  await call('GET', '/v1/me', { key });
  await call('GET', '/v1/org', { key });
  await call('PATCH', '/v1/org', { key, body: { disabledEventTypes: ['legacy.*'] } });
  await call('PATCH', '/v1/org', { key, body: { preAttemptCheckUrl: 'ftp://x' } });
  await call('PATCH', '/v1/org', { key, body: { disabledEventTypes: [] } });
  await call('GET', '/v1/org/check-secret', { key });
  const made = (await call('POST', '/v1/api-keys', { key, body: { name: 'reader', scopes: ['webhooks:read'] } })).body;
  await call('GET', '/v1/api-keys?limit=1', { key });
  await call('GET', '/v1/api-keys?limit=0', { key });
  await call('DELETE', `/v1/api-keys/${made.id}`, { key });
  await call('GET', '/v1/endpoints', { key: 'pk_nope' });

  await call('POST', '/v1/policies/preview', { key, body: { policy: { preset: 'tourical', maxAttempts: 3 } } });
  await call('POST', '/v1/policies/preview', { key, body: { policy: { maxAttempts: 0 } } });

  // Fails once, then waits a minute: long enough to be "waiting for its next attempt".
  const endpoint = (await call('POST', '/v1/endpoints', { key, body: { url: receiver.url, policy: fastPolicy(2, 60_000), description: 'spec' } })).body;
  await call('POST', '/v1/endpoints', { key, body: { url: 'ftp://x' } });
  await call('GET', '/v1/endpoints', { key });
  await call('GET', `/v1/endpoints/${endpoint.id}`, { key });
  await call('GET', '/v1/endpoints/ep_nope', { key });
  await call('PATCH', `/v1/endpoints/${endpoint.id}`, { key, body: { description: 'changed' } });
  await call('GET', `/v1/endpoints/${endpoint.id}/secret`, { key });
  await call('POST', `/v1/endpoints/${endpoint.id}/rotate-secret`, { key });
  await call('POST', `/v1/endpoints/${endpoint.id}/rotate-secret`, { key, body: { signatureScheme: 'ed25519' } });
  await call('GET', `/v1/endpoints/${endpoint.id}/secret`, { key });
  await call('GET', `/v1/endpoints/${endpoint.id}/timeline`, { key });

  // The event catalog, its validation and the portal's own reads.
  await call('POST', '/v1/event-types', { key, body: { name: 'order.placed', description: 'An order was placed.', group: 'orders', schema: { type: 'object', required: ['n'] }, examples: [{ n: 1 }] } });
  await call('POST', '/v1/event-types', { key, body: { name: 'order.placed', description: 'again' } });
  await call('POST', '/v1/event-types', { key, body: { name: 'x.y', description: 'x', schema: { type: 'nope' } } });
  await call('GET', '/v1/event-types', { key });
  await call('GET', '/v1/event-types/order.placed', { key });
  await call('GET', '/v1/event-types/nope.none', { key });
  await call('PATCH', '/v1/event-types/order.placed', { key, body: { deprecated: false } });
  await call('GET', '/v1/event-types/asyncapi.json', { key });
  await call('PATCH', '/v1/org', { key, body: { eventValidation: 'reject', portal: { accentColor: '#ffcc00' } } });
  await call('POST', '/v1/events', { key, body: { type: 'order.placed', data: { m: 1 } } });
  await call('PATCH', '/v1/org', { key, body: { eventValidation: 'warn' } });
  await call('POST', '/v1/events', { key, body: { type: 'order.placed', data: { m: 1 } } });
  await call('PATCH', '/v1/org', { key, body: { eventValidation: 'off', portal: { displayName: 'Spec', accentColor: '#1d4ed8' } } });
  await call('GET', '/v1/portal', { key });
  await call('GET', `/v1/endpoints/${endpoint.id}/summary`, { key });
  await call('POST', `/v1/endpoints/${endpoint.id}/send-example`, { key, body: { eventType: 'order.placed' } });
  await call('POST', `/v1/endpoints/${endpoint.id}/send-example`, { key, body: { eventType: 'order.placed', example: 2 } });
  await call('DELETE', '/v1/event-types/order.placed', { key });

  const event = (await call('POST', '/v1/events', { key, body: { type: 'invoice.paid', data: { n: 1 }, idempotencyKey: 'spec-1' } })).body;
  await call('POST', '/v1/events', { key, body: { type: 'invoice.paid', data: { n: 2 }, idempotencyKey: 'spec-1' } });
  await call('POST', '/v1/events/batch', { key, body: { events: [{ type: 'invoice.paid', data: { n: 1 }, idempotencyKey: 'spec-1' }, { type: 'invoice.paid', data: { n: 3 } }, { type: 'webhook.test', data: {} }] } });
  await call('POST', '/v1/events/batch', { key, body: { events: [] } });
  await call('GET', '/v1/events?limit=5', { key });
  await call('GET', `/v1/events/${event.id}`, { key });
  await call('GET', '/v1/events/evt_nope', { key });
  await call('GET', '/v1/stats', { key });
  await call('GET', `/v1/stats?window=day&endpointId=${endpoint.id}`, { key });

  const deliveryId = event.deliveries[0].id as string;
  await waitUntil('the first attempt to fail', async () => ((await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key })).body.waitingForNextAttempt ? true : undefined));
  await call('GET', `/v1/deliveries/${deliveryId}`, { key });
  await call('GET', `/v1/endpoints/${endpoint.id}/deliveries?status=pending`, { key });
  await call('POST', `/v1/deliveries/${deliveryId}/redeliver`, { key });
  await call('POST', `/v1/deliveries/${deliveryId}/send-now`, { key });
  await waitUntil('the delivery to fail', async () => ((await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key })).body.status === 'failed' ? true : undefined));
  await call('POST', `/v1/deliveries/${deliveryId}/send-now`, { key });
  await call('POST', `/v1/deliveries/${deliveryId}/redeliver`, { key, headers: { 'idempotency-key': 'spec-redeliver' } });
  await call('POST', `/v1/endpoints/${endpoint.id}/redeliver-failed`, { key });
  await call('POST', `/v1/endpoints/${endpoint.id}/recover`, { key, body: { since: '2020-01-01T00:00:00Z' } });
  await call('GET', '/v1/notifications', { key });
  await call('GET', '/v1/transformations/templates', { key });
  await call('POST', '/v1/transformations/test', { key, body: { code: 'function handler(w) { w.payload = { text: w.eventType }; return w; }', eventType: 'invoice.paid', payload: { n: 1 } } });
  await call('POST', '/v1/transformations/test', { key, body: { code: 'function handler(w) { throw new Error("no"); }', eventType: 'invoice.paid', payload: {} } });
  await call('POST', '/v1/transformations/test', { key, body: { code: 'function handler(w) {', eventType: 'invoice.paid', payload: {} } });
  await call('GET', '/v1/audit-log?limit=5', { key });
  await call('GET', '/v1/audit-log?action=nope', { key });
  await call('GET', '/v1/audit-log', { key: session.token });
  await call('GET', '/v1/platform-audit-log', { key: TEST_ADMIN_TOKEN });
  await call('GET', `/v1/deliveries/export?endpointId=${endpoint.id}`, { key });
  await call('GET', '/v1/deliveries/export?status=lost', { key });
  await callStream(`/v1/deliveries/stream?endpointId=${endpoint.id}`, key);
  await call('GET', '/v1/deliveries/stream?status=lost', { key });
  await call('GET', '/v1/deliveries/stream?endpointId=ep_00000000000000000000000000', { key });
  await call('DELETE', `/v1/events/${event.id}/data`, { key });
  await call('DELETE', '/v1/events/evt_nope/data', { key });
  await call('DELETE', '/v1/events/data?idempotencyKey=spec-1', { key });
  await call('DELETE', '/v1/events/data?idempotencyKey=never', { key });
  await call('POST', `/v1/deliveries/${deliveryId}/redeliver`, { key });

  await call('POST', `/v1/endpoints/${endpoint.id}/pause`, { key });
  await call('POST', `/v1/endpoints/${endpoint.id}/test`, { key });
  await call('POST', `/v1/endpoints/${endpoint.id}/resume`, { key });
  await call('POST', `/v1/endpoints/${endpoint.id}/test`, { key });
  await call('DELETE', `/v1/endpoints/${endpoint.id}`, { key });

  expect(problems).toEqual([]);
  // Every documented operation had at least one success checked.
  const documented = API_ROUTES.map((r) => operationKey(r.method, r.path));
  expect(documented.filter((op) => !checkedSuccess.has(op))).toEqual([]);
});

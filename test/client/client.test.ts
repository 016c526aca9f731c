import { Postern, PosternApiError, rawJson, type CreatedEndpoint } from '@postern/client';
import { startPostern, TEST_ADMIN_TOKEN, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Issue 15, item 2: `@postern/client` against a running Postern — every resource, paging, typed
 * errors, idempotency keys, platform keys.
 */

let postern: TestPostern;
let receiver: TestReceiver;
let admin: Postern;
let client: Postern;
let orgId: string;

beforeAll(async () => {
  postern = await startPostern();
  receiver = await startReceiver(() => 200);
  admin = new Postern({ baseUrl: postern.baseUrl, adminToken: TEST_ADMIN_TOKEN });
  const org = await admin.orgs.create({ name: 'client' });
  orgId = org.id;
  client = new Postern({ baseUrl: postern.baseUrl, apiKey: org.apiKey });
});

afterAll(async () => {
  await postern.close();
  await receiver.close();
});

/** Awaits `promise` expecting a PosternApiError; returns its status and code. */
async function apiError(promise: Promise<unknown>): Promise<{ status: number; code: string; message: string }> {
  const err = await promise.then(
    () => new Error('expected the call to fail'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(PosternApiError);
  const { status, code, message } = err as PosternApiError;
  return { status, code, message };
}

test('endpoints: create, get, list, update, secret, rotate, pause, resume, timeline, delete', async () => {
  const created = await client.endpoints.create({ url: receiver.url, description: 'first', eventTypes: ['invoice.paid'] });
  expect(created).toMatchObject({ id: expect.stringMatching(/^ep_/), url: receiver.url, status: 'active', policyName: 'standard', warnings: [] });
  expect(created.secret).toMatch(/^whsec_/);
  expect((await client.endpoints.get(created.id)).description).toBe('first');
  expect((await client.endpoints.update(created.id, { description: 'second' })).description).toBe('second');
  expect((await client.endpoints.secret(created.id)).secret).toBe(created.secret);
  const rotated = await client.endpoints.rotateSecret(created.id, {}, { idempotencyKey: 'rotate-1' });
  expect(rotated.secret).not.toBe(created.secret);
  // The same key again: the first answer, not a second rotation.
  expect((await client.endpoints.rotateSecret(created.id, {}, { idempotencyKey: 'rotate-1' })).secret).toBe(rotated.secret);
  expect((await client.endpoints.pause(created.id)).status).toBe('paused');
  expect(await client.endpoints.resume(created.id)).toMatchObject({ status: 'active', requeued: 0 });
  expect((await client.endpoints.timeline(created.id)).attempts).toHaveLength(8);
  await client.endpoints.delete(created.id);
  expect(await apiError(client.endpoints.get(created.id))).toMatchObject({ status: 404, code: 'not_found' });
});

test('events.createMany: one result per event in order, bad ones alone refused, data sent byte for byte', async () => {
  const batchReceiver = await startReceiver(() => 200);
  try {
    const org = await admin.orgs.create({ name: 'client-batch' });
    const batchClient = new Postern({ baseUrl: postern.baseUrl, apiKey: org.apiKey });
    const endpoint = await batchClient.endpoints.create({ url: batchReceiver.url });
    const { results } = await batchClient.events.createMany([
      { type: 'invoice.paid', data: rawJson('{"amount":1.0}'), idempotencyKey: 'many-1' },
      { type: 'webhook.test', data: {} },
      { type: 'invoice.paid', data: { amount: 2 }, idempotencyKey: 'many-1' },
      { type: 'invoice.paid', data: { amount: 3 }, orderingKey: 'customer-7' },
    ]);
    expect(results.map((r) => r.status)).toEqual([202, 400, 409, 202]);
    const [first, refused, reused, last] = results;
    if (!first || !('id' in first) || !last || !('id' in last)) throw new Error('expected accepted events');
    expect(first.deliveries).toEqual([{ id: expect.stringMatching(/^dlv_/), endpointId: endpoint.id }]);
    expect(refused).toMatchObject({ error: { code: 'invalid_request' } });
    expect(reused).toMatchObject({ error: { code: 'idempotency_key_reused' } });
    await batchReceiver.waitForRequests(2);
    const bodies = new Map(batchReceiver.requests.map((r) => [r.headers['webhook-id'], r.body]));
    expect(bodies.get(first.id)).toMatch(/"data":\{"amount":1\.0\}\}$/);
    expect(bodies.get(last.id)).toMatch(/"data":\{"amount":3\}\}$/);

    // Again: the keyed event replays; an empty list is the API's 400.
    const again = await batchClient.events.createMany([{ type: 'invoice.paid', data: rawJson('{"amount":1.0}'), idempotencyKey: 'many-1' }]);
    expect(again.results).toEqual([{ ...first, idempotentReplayed: true }]);
    expect(await apiError(batchClient.events.createMany([]))).toMatchObject({ status: 400, code: 'invalid_request' });
  } finally {
    await batchReceiver.close();
  }
});

test('events and deliveries: create with an idempotency key, get, list, redeliver, send-now, attempts', async () => {
  const endpoint = await client.endpoints.create({ url: receiver.url });
  const accepted = await client.events.create({ type: 'invoice.paid', data: { amount: 42 } }, { idempotencyKey: 'evt-key-1' });
  expect(accepted.deliveries).toEqual([{ id: expect.stringMatching(/^dlv_/), endpointId: endpoint.id }]);
  const again = await client.events.create({ type: 'invoice.paid', data: { amount: 42 } }, { idempotencyKey: 'evt-key-1' });
  expect(again).toEqual(accepted);
  expect(await apiError(client.events.create({ type: 'invoice.paid', data: { amount: 43 } }, { idempotencyKey: 'evt-key-1' }))).toMatchObject({ status: 409, code: 'idempotency_key_reused' });

  const event = await client.events.get(accepted.id);
  expect(event).toMatchObject({ id: accepted.id, type: 'invoice.paid', data: { amount: 42 }, idempotencyKey: 'evt-key-1' });
  expect((await client.events.list({ type: 'invoice.paid' }).toArray()).map((e) => e.id)).toContain(accepted.id);

  const deliveryId = accepted.deliveries[0]!.id;
  const delivered = await waitUntil('the delivery to succeed', async () => {
    const d = await client.deliveries.get(deliveryId);
    return d.status === 'succeeded' ? d : undefined;
  });
  expect(delivered.attempts).toEqual([expect.objectContaining({ number: 1, responseStatus: 200, error: null })]);
  expect(await client.deliveries.attempts(deliveryId)).toEqual(delivered.attempts);
  expect(await apiError(client.deliveries.sendNow(deliveryId))).toMatchObject({ status: 409, code: 'delivery_finished' });
  const redelivered = await client.deliveries.redeliver(deliveryId, { idempotencyKey: 'redeliver-1' });
  expect(redelivered.delivery).toMatchObject({ redeliveredFromId: deliveryId, status: 'pending' });
  expect((await client.deliveries.redeliver(deliveryId, { idempotencyKey: 'redeliver-1' })).delivery.id).toBe(redelivered.delivery.id);
  const listed = await client.deliveries.list({ endpointId: endpoint.id }).toArray();
  expect(listed.map((d) => d.id)).toEqual(expect.arrayContaining([deliveryId, redelivered.delivery.id]));

  expect(await client.endpoints.redeliverFailed(endpoint.id)).toEqual({ count: 0, remaining: 0 });
  expect(await client.endpoints.recover(endpoint.id, { since: '2020-01-01T00:00:00Z' })).toEqual({ count: 0, remaining: 0 });
  const test = await client.endpoints.test(endpoint.id);
  expect(test.deliveries).toEqual([{ id: expect.any(String), endpointId: endpoint.id }]);
  const stats = await client.stats({ endpointId: endpoint.id });
  expect(stats.scope).toEqual({ endpointId: endpoint.id });
  expect((await client.stats()).window).toBe('hour');
});

test('paged lists: for await walks every page, one page at a time', async () => {
  const org = await admin.orgs.create({ name: 'paging' });
  const own = new Postern({ baseUrl: postern.baseUrl, apiKey: org.apiKey });
  const made: CreatedEndpoint[] = [];
  for (let i = 0; i < 7; i++) made.push(await own.endpoints.create({ url: `${receiver.url}?n=${i}` }));
  const seen: string[] = [];
  for await (const e of own.endpoints.list({ limit: 2 })) seen.push(e.id);
  // Endpoints list oldest first.
  expect(seen).toEqual(made.map((e) => e.id));
  const pages: number[] = [];
  for await (const page of own.endpoints.list({ limit: 3 }).pages()) pages.push(page.data.length);
  expect(pages).toEqual([3, 3, 1]);
  const first = await own.endpoints.list({ limit: 5 }).firstPage();
  expect(first.data).toHaveLength(5);
  expect(first.nextCursor).toBe(first.data[4]!.id);
});

test('API keys, me, policies, notifications; typed errors carry status and code', async () => {
  expect(await client.me()).toMatchObject({ orgId, credential: 'api_key', scopes: ['events:write', 'webhooks:read', 'webhooks:write'] });
  const reader = await client.apiKeys.create({ name: 'reader', scopes: ['webhooks:read'] });
  expect((await client.apiKeys.list().toArray()).map((k) => k.id)).toContain(reader.id);
  const readOnly = new Postern({ baseUrl: postern.baseUrl, apiKey: reader.apiKey });
  const refused = await apiError(readOnly.endpoints.create({ url: receiver.url }));
  expect(refused).toEqual({ status: 403, code: 'insufficient_scope', message: 'this API key lacks the webhooks:write scope' });
  expect((await client.apiKeys.revoke(reader.id)).revokedAt).not.toBeNull();
  expect(await apiError(readOnly.me())).toMatchObject({ status: 401, code: 'unauthorized' });

  const presets = await client.policies.list();
  expect(presets.map((p) => p.name)).toContain('tourical');
  expect((await client.policies.timeline('tourical')).attempts).toHaveLength(6);
  expect((await client.policies.preview({ preset: 'tourical', maxAttempts: 3 })).policy.maxAttempts).toBe(3);
  expect(await apiError(client.policies.preview({ maxAttempts: 0 }))).toMatchObject({ status: 400, code: 'invalid_policy' });
  expect(await apiError(client.endpoints.create({ url: 'ftp://nope' }))).toMatchObject({ status: 400, code: 'invalid_request', message: 'url: url must use http or https' });
  expect(await client.notifications.list().toArray()).toEqual([]);
  expect(await apiError(new Postern({ baseUrl: postern.baseUrl, apiKey: 'pk_wrong' }).me())).toMatchObject({ status: 401, code: 'unauthorized' });
  expect(await client.ready()).toMatchObject({ status: 'ok' });
  expect(await client.org.update({ disabledEventTypes: ['legacy.*'] })).toMatchObject({ id: orgId, disabledEventTypes: ['legacy.*'] });
  expect((await client.org.get()).disabledEventTypes).toEqual(['legacy.*']);
  expect(await client.org.checkSecret()).toEqual({ secret: null });
  await client.org.update({ disabledEventTypes: [] });
});

test('transformations: templates, and a test run on a sample (nothing sent); refused code is a typed error', async () => {
  const templates = await client.transformations.templates();
  expect(templates.map((t) => t.id)).toContain('slack');
  const slack = templates.find((t) => t.id === 'slack')!;
  const run = await client.transformations.test({ code: slack.code, eventType: slack.sample.eventType, payload: slack.sample.payload });
  expect(run.error).toBeNull();
  expect(run.result).toMatchObject({ cancel: false, method: 'POST', headers: { 'content-type': 'application/json' } });
  expect(JSON.parse(run.result && !run.result.cancel ? run.result.body : 'null')).toHaveProperty('text');
  const failed = await client.transformations.test({ code: 'function handler(w) { throw new Error("no"); }', eventType: 'invoice.paid', payload: {} });
  expect(failed).toMatchObject({ result: null, error: { code: 'transformation_failed:error' } });
  expect(await apiError(client.transformations.test({ code: 'function handler(w) {\n  return w +;\n}', eventType: 'invoice.paid', payload: {} }))).toMatchObject({ status: 400, code: 'transformation_syntax_error' });
});

test('a platform key: one client acting for the org it names, confined to it', async () => {
  const other = await admin.orgs.create({ name: 'other' });
  const otherEndpoint = await new Postern({ baseUrl: postern.baseUrl, apiKey: other.apiKey }).endpoints.create({ url: receiver.url });
  const made = await admin.platformKeys.create({ name: 'saas', scopes: ['webhooks:read', 'webhooks:write', 'events:write'] });
  const platform = new Postern({ baseUrl: postern.baseUrl, platformKey: made.key, orgId });
  expect(await platform.me()).toMatchObject({ orgId, keyId: made.id, credential: 'platform_key' });
  expect(await apiError(platform.endpoints.get(otherEndpoint.id))).toMatchObject({ status: 404, code: 'not_found' });
  expect((await platform.forOrg(other.id).endpoints.get(otherEndpoint.id)).id).toBe(otherEndpoint.id);
  expect((await admin.platformKeys.list().toArray()).map((k) => k.id)).toContain(made.id);
  await admin.platformKeys.revoke(made.id);
  expect(await apiError(platform.me())).toMatchObject({ status: 401, code: 'unauthorized' });
  expect(() => new Postern({ baseUrl: postern.baseUrl, platformKey: made.key })).toThrow('give orgId too');
  expect(() => client.forOrg(other.id)).toThrow(TypeError);
});

test('the constructor refuses what cannot work, with a clear message', () => {
  expect(() => new Postern({ baseUrl: 'localhost:3000' })).toThrow('baseUrl must be an http(s) URL');
  expect(() => new Postern({ baseUrl: 'http://x', apiKey: 'a', adminToken: 'b' })).toThrow('give one credential');
  expect(() => new Postern({ baseUrl: 'http://x', apiKey: 'a', orgId: 'org_1' })).toThrow('orgId goes with platformKey');
  expect(() => new Postern({ baseUrl: 'http://x', maxRetries: -1 })).toThrow('maxRetries must be an integer ≥ 0');
});

import { startPostern, TEST_ADMIN_TOKEN, type TestPostern } from '../support/postern.js';

/**
 * Findings of a new user's review (idempotency keys, strict bodies, auth before body parsing,
 * Bull Board read-only): each test failed before its fix. No sender runs: deliveries stay pending.
 */

let postern: TestPostern;
let key: string;
let readOnlyKey: string;

beforeAll(async () => {
  postern = await startPostern({ sender: false });
  key = (await postern.createOrg('review')).apiKey;
  const r = await postern.api('POST', '/v1/api-keys', { key, body: { name: 'reader', scopes: ['webhooks:read'] } });
  expect(r.status).toBe(201);
  readOnlyKey = r.body.apiKey;
});
afterAll(async () => {
  await postern.close();
});

type ApiAnswer = Awaited<ReturnType<TestPostern['api']>>;

function expectError(res: ApiAnswer, status: number, code: string, ...mentions: string[]): void {
  expect({ status: res.status, body: res.body }).toEqual({ status, body: { error: { code, message: expect.any(String) } } });
  for (const m of mentions) expect(res.body.error.message).toContain(m);
}

/** An endpoint nothing listens on; `tourical` offers redelivery even while a delivery is pending. */
const endpointFor = (body: Record<string, unknown> = {}) => postern.createEndpoint(key, { url: 'http://127.0.0.1:9/hook', policy: 'tourical', ...body });

describe('POST /v1/events: Idempotency-Key header and body idempotencyKey', () => {
  test('different values → 400 naming both', async () => {
    const res = await postern.api('POST', '/v1/events', {
      key,
      headers: { 'idempotency-key': 'from-header' },
      body: { type: 'order.placed', data: {}, idempotencyKey: 'from-body' },
    });
    expectError(res, 400, 'invalid_request', 'Idempotency-Key', 'idempotencyKey');
  });

  test('the same value in both is fine, and is the key', async () => {
    const send = () => postern.api('POST', '/v1/events', { key, headers: { 'idempotency-key': 'same-key' }, body: { type: 'order.placed', data: { n: 1 }, idempotencyKey: 'same-key' } });
    const first = await send();
    expect(first.status).toBe(202);
    const again = await postern.api('POST', '/v1/events', { key, body: { type: 'order.placed', data: { n: 1 }, idempotencyKey: 'same-key' } });
    expect(again.status).toBe(202);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.id).toBe(first.body.id);
  });
});

describe('actions that take no fields refuse unknown ones', () => {
  let endpoint: { id: string };
  let deliveryId: string;

  beforeAll(async () => {
    endpoint = await endpointFor();
    const posted = await postern.api('POST', '/v1/events', { key, body: { type: 'thing.done', data: {} } });
    expect(posted.status).toBe(202);
    deliveryId = posted.body.deliveries.find((d: { endpointId: string }) => d.endpointId === endpoint.id).id;
  });

  const actions = () => [
    ['POST /v1/deliveries/:id/redeliver', `/v1/deliveries/${deliveryId}/redeliver`, 202],
    ['POST /v1/endpoints/:id/redeliver-failed', `/v1/endpoints/${endpoint.id}/redeliver-failed`, 202],
    ['POST /v1/endpoints/:id/test', `/v1/endpoints/${endpoint.id}/test`, 202],
    ['POST /v1/endpoints/:id/pause', `/v1/endpoints/${endpoint.id}/pause`, 200],
    ['POST /v1/endpoints/:id/resume', `/v1/endpoints/${endpoint.id}/resume`, 200],
  ] as const;

  test('an unknown field, or a body that is not an object → 400; no body or {} → done', async () => {
    for (const [name, path, ok] of actions()) {
      expectError(await postern.api('POST', path, { key, body: { reason: 'typo' } }), 400, 'invalid_request', 'body: ');
      for (const body of [null, [], 'x', 1]) {
        const res = await postern.api('POST', path, { key, body });
        expect({ name, body, status: res.status, code: res.body?.error?.code }).toEqual({ name, body, status: 400, code: 'invalid_request' });
      }
      for (const body of [undefined, {}]) {
        const res = await postern.api('POST', path, { key, body });
        expect({ name, body, status: res.status }).toEqual({ name, body, status: ok });
      }
    }
  });

  test('the scope is still checked first', async () => {
    for (const [, path] of actions()) {
      expectError(await postern.api('POST', path, { key: readOnlyKey, body: { reason: 'typo' } }), 403, 'insufficient_scope');
    }
  });
});

describe('PATCH /v1/endpoints/:id', () => {
  test('a body that is null or not an object → 400', async () => {
    const endpoint = await endpointFor();
    for (const rawBody of ['null', '[]', '5', '"x"', 'true']) {
      expectError(await postern.api('PATCH', `/v1/endpoints/${endpoint.id}`, { key, rawBody, headers: { 'content-type': 'application/json' } }), 400, 'invalid_request', 'body: must be a JSON object');
    }
    expect((await postern.api('PATCH', `/v1/endpoints/${endpoint.id}`, { key, body: {} })).status).toBe(200);
  });
});

describe('names, descriptions and event types', () => {
  test.each([
    ['NUL', 'acme\u0000'],
    ['a newline', 'ac\nme'],
    ['a tab', 'ac\tme'],
    ['ESC', 'acme\u001b[31m'],
    ['DEL', 'acme\u007f'],
    ['a C1 control', 'acme\u0085'],
    ['a line separator', 'ac\u2028me'],
    ['a right-to-left override', 'acme \u202egnp.exe'],
    ['a right-to-left isolate', 'acme\u2067x'],
  ])('an org name with %s → 400', async (_what, name) => {
    expectError(await postern.api('POST', '/v1/orgs', { key: TEST_ADMIN_TOKEN, body: { name } }), 400, 'invalid_request', 'name: name must be printable text');
  });

  test('an org name of printable characters, Unicode and emoji joiners included, is fine', async () => {
    for (const name of ['Zoë & Co. — 東京', 'family 👨\u200d👩\u200d👧', 'نامه\u200cها']) {
      const res = await postern.api('POST', '/v1/orgs', { key: TEST_ADMIN_TOKEN, body: { name } });
      expect(res.status).toBe(201);
      expect(res.body.name).toBe(name);
    }
  });

  test('key names, the portal display name, event-type groups and descriptions refuse bidirectional controls too', async () => {
    const rlo = 'billing \u202emoc.live';
    expectError(await postern.api('POST', '/v1/api-keys', { key, body: { name: rlo, scopes: ['webhooks:read'] } }), 400, 'invalid_request', 'name: name must be printable text');
    expectError(await postern.api('POST', '/v1/platform-keys', { key: TEST_ADMIN_TOKEN, body: { name: rlo, scopes: ['webhooks:read'] } }), 400, 'invalid_request', 'name: name must be printable text');
    expectError(await postern.api('PATCH', '/v1/org', { key, body: { portal: { displayName: rlo } } }), 400, 'invalid_request', 'displayName must be printable text');
    expectError(await postern.api('POST', '/v1/endpoints', { key, body: { url: 'http://127.0.0.1:9/hook', description: rlo } }), 400, 'invalid_request', 'description: description must be printable text');
    expectError(await postern.api('POST', '/v1/event-types', { key, body: { name: 'bidi.check', description: rlo } }), 400, 'invalid_request', 'description: description must be printable text');
    expectError(await postern.api('POST', '/v1/event-types', { key, body: { name: 'bidi.check', description: 'fine', group: rlo } }), 400, 'invalid_request', 'group: group must be printable text');
    // Nothing of those was stored.
    expect((await postern.api('GET', '/v1/api-keys', { key })).body.data.map((k: { name: string }) => k.name)).not.toContain(rlo);
    expect((await postern.api('GET', '/v1/org', { key })).body.portal?.displayName ?? null).not.toBe(rlo);
    expect((await postern.api('GET', '/v1/event-types/bidi.check', { key })).status).toBe(404);
  });

  test('a description with a control character other than newline and tab → 400, on create and update', async () => {
    for (const description of ['a\u0000b', 'a\rb', 'bell\u0007', 'del\u007f', 'c1\u009b', 'a\u2029b']) {
      expectError(await postern.api('POST', '/v1/endpoints', { key, body: { url: 'http://127.0.0.1:9/hook', description } }), 400, 'invalid_request', 'description: ');
    }
    const endpoint = await endpointFor({ description: 'line one\nline two\tindented' });
    expect(endpoint.description).toBe('line one\nline two\tindented');
    expectError(await postern.api('PATCH', `/v1/endpoints/${endpoint.id}`, { key, body: { description: 'x\u001by' } }), 400, 'invalid_request', 'description: ');
  });

  test('duplicate event types are dropped, first occurrences kept in order, on create and update', async () => {
    const endpoint = await endpointFor({ eventTypes: ['b.two', 'a.one', 'b.two', '*', 'a.one'] });
    expect(endpoint.eventTypes).toEqual(['b.two', 'a.one', '*']);
    const patched = await postern.api('PATCH', `/v1/endpoints/${endpoint.id}`, { key, body: { eventTypes: ['c.x', 'c.x', 'd.y'] } });
    expect(patched.status).toBe(200);
    expect(patched.body.eventTypes).toEqual(['c.x', 'd.y']);
    expect((await postern.api('GET', `/v1/endpoints/${endpoint.id}`, { key })).body.eventTypes).toEqual(['c.x', 'd.y']);
  });
});

describe('credentials are checked before the body is read', () => {
  const badBodies: [string, { rawBody: string; headers: Record<string, string> }][] = [
    ['invalid JSON', { rawBody: '{"type":', headers: { 'content-type': 'application/json' } }],
    ['the wrong content type', { rawBody: 'type=a.b', headers: { 'content-type': 'application/x-www-form-urlencoded' } }],
    ['a non-UTF-8 charset', { rawBody: '{}', headers: { 'content-type': 'application/json; charset=latin1' } }],
  ];

  test.each(badBodies)('an API route without a valid key and with %s → 401', async (_what, opts) => {
    for (const [method, path] of [
      ['POST', '/v1/events'],
      ['POST', '/v1/endpoints'],
      ['PATCH', '/v1/endpoints/ep_x'],
      ['POST', '/v1/api-keys'],
      ['POST', '/v1/endpoints/ep_x/recover'],
    ]) {
      expectError(await postern.api(method!, path!, opts), 401, 'unauthorized', 'API key');
      expectError(await postern.api(method!, path!, { ...opts, key: 'pk_not-a-real-key' }), 401, 'unauthorized');
    }
  });

  test.each(badBodies)('POST /v1/orgs without the admin token and with %s → 401', async (_what, opts) => {
    expectError(await postern.api('POST', '/v1/orgs', opts), 401, 'unauthorized', 'admin token');
    expectError(await postern.api('POST', '/v1/orgs', { ...opts, key }), 401, 'unauthorized', 'admin token');
  });

  test('a body over the limit without a key → 401', async () => {
    const rawBody = JSON.stringify({ type: 'a.b', data: 'x'.repeat(1024 * 1024 + 10) });
    expectError(await postern.api('POST', '/v1/events', { rawBody, headers: { 'content-type': 'application/json' } }), 401, 'unauthorized');
  });

  test('with valid credentials the body is still checked as before', async () => {
    const [invalid, wrongType] = badBodies;
    expectError(await postern.api('POST', '/v1/events', { ...invalid![1], key }), 400, 'invalid_json');
    expectError(await postern.api('POST', '/v1/events', { ...wrongType![1], key }), 415, 'unsupported_media_type');
    expectError(await postern.api('POST', '/v1/orgs', { ...invalid![1], key: TEST_ADMIN_TOKEN }), 400, 'invalid_json');
    expectError(await postern.api('POST', '/v1/orgs', { ...wrongType![1], key: TEST_ADMIN_TOKEN }), 415, 'unsupported_media_type');
    expect((await postern.api('GET', '/v1/policies')).status).toBe(200);
    expect((await postern.api('GET', '/v1/policies/standard/timeline')).status).toBe(200);
  });
});

describe('Bull Board read-only mode', () => {
  const admin = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` };

  test.each([
    ['PUT', '/admin/queues/api/queues/pause'],
    ['PUT', '/admin/queues/api/queues/resume'],
    ['PUT', '/admin/queues/api/queues/deliveries/pause'],
    ['PUT', '/admin/queues/api/queues/deliveries/clean/delayed'],
    ['POST', '/admin/queues/api/queues/deliveries/add'],
    ['PATCH', '/admin/queues/api/queues/deliveries/x/update-data'],
    ['DELETE', '/admin/queues/api/queues/deliveries'],
  ])('%s %s → 405 read_only, and the queue is untouched', async (method, path) => {
    const res = await fetch(postern.baseUrl + path, { method, headers: { ...admin, 'content-type': 'application/json' }, body: '{}' });
    expect(res.status).toBe(405);
    expect(await res.json()).toEqual({ error: { code: 'read_only', message: expect.stringContaining('read-only') } });
    expect(await postern.queue.isPaused()).toBe(false);
  });

  test('reads still work, and the admin token is still checked first', async () => {
    expect((await fetch(`${postern.baseUrl}/admin/queues/api/queues`, { headers: admin })).status).toBe(200);
    expect((await fetch(`${postern.baseUrl}/admin/queues/api/queues/pause`, { method: 'PUT' })).status).toBe(401);
  });
});

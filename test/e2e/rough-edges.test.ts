import { startPostern, type TestPostern } from '../support/postern.js';

/**
 * Issue 11 items 11 and 12: what a new user hit. An empty `eventTypes` is refused instead of
 * subscribing to nothing; `limit` is plain digits only; a cursor must be an id of the listed kind;
 * a missing field says "is required"; unknown fields read the same on every route; the 413 names
 * the limit; create and update answers show the resolved policy and warn when a partial breaker
 * override keeps a long `minStreakMs`.
 */

let postern: TestPostern;
let key: string;
let endpointId: string;

beforeAll(async () => {
  postern = await startPostern({ sender: false, maxBodyBytes: 4096 });
  key = (await postern.createOrg()).apiKey;
  endpointId = (await postern.createEndpoint(key, { url: 'https://example.com/hook' })).id;
});
afterAll(async () => {
  await postern.close();
});

const create = (body: unknown) => postern.api('POST', '/v1/endpoints', { key, body });

test('eventTypes: [] is refused with 400 on create and update, saying how to subscribe to everything', async () => {
  for (const res of [await create({ url: 'https://example.com/a', eventTypes: [] }), await postern.api('PATCH', `/v1/endpoints/${endpointId}`, { key, body: { eventTypes: [] } })]) {
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: 'invalid_request', message: 'eventTypes: eventTypes must list at least one event type, or ["*"] for every type' });
  }
});

test('limit is plain decimal digits: 1e1 and 0x10 are refused like 1.5; 10 works', async () => {
  for (const limit of ['1e1', '0x10', '1.5', '+5', ' 5']) {
    const res = await postern.api('GET', `/v1/endpoints?limit=${encodeURIComponent(limit)}`, { key });
    expect({ limit, status: res.status, message: res.body.error?.message }).toEqual({ limit, status: 400, message: 'limit: limit must be an integer from 1 to 100' });
  }
  expect((await postern.api('GET', '/v1/endpoints?limit=10', { key })).status).toBe(200);
});

test("a cursor of another list's kind is refused, on every list", async () => {
  const cases = [
    ['/v1/endpoints?cursor=dlv_0000000000000000', 'ep_'],
    [`/v1/endpoints/${endpointId}/deliveries?cursor=${endpointId}`, 'dlv_'],
    ['/v1/api-keys?cursor=ep_0000000000000000', 'key_'],
    ['/v1/notifications?cursor=key_0000000000000000', 'ntf_'],
    ['/v1/events?cursor=dlv_0000000000000000', 'evt_'],
    [`/v1/events?endpointId=${endpointId}&cursor=evt_0000000000000000`, 'dlv_'],
  ] as const;
  for (const [path, kind] of cases) {
    const res = await postern.api('GET', path, { key });
    expect({ path, status: res.status }).toEqual({ path, status: 400 });
    expect(res.body.error.message).toMatch(new RegExp(`^cursor: .*${kind}`));
  }
});

test('a missing required field says "is required", a wrong one what it must be', async () => {
  expect((await create({ eventTypes: ['*'] })).body.error.message).toBe('url: url is required');
  expect((await create({ url: 42 })).body.error.message).toBe('url: url must be a string');
  const key2 = await postern.api('POST', '/v1/api-keys', { key, body: { scopes: ['webhooks:read'] } });
  expect(key2.body.error.message).toBe('name: name is required');
});

test('unknown fields are reported in one wording on every route', async () => {
  const created = await create({ url: 'https://example.com/b', colour: 'red' });
  const patched = await postern.api('PATCH', `/v1/endpoints/${endpointId}`, { key, body: { colour: 'red' } });
  const paused = await postern.api('POST', `/v1/endpoints/${endpointId}/pause`, { key, body: { colour: 'red' } });
  const rotated = await postern.api('POST', `/v1/endpoints/${endpointId}/rotate-secret`, { key, body: { colour: 'red' } });
  const tested = await postern.api('POST', `/v1/endpoints/${endpointId}/test`, { key, body: { colour: 'red' } });
  for (const res of [created, patched, paused, rotated, tested]) {
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/^body: unknown field "colour"/);
  }
});

test('413 names the limit in bytes', async () => {
  const res = await postern.api('POST', '/v1/events', { key, body: { type: 'big.event', data: 'x'.repeat(5000) } });
  expect(res.status).toBe(413);
  expect(res.body.error.message).toBe('request body is larger than the limit of 4096 bytes (MAX_BODY_BYTES)');
});

test('create and update answers show the resolved policy, and warn when a breaker override keeps a long minStreakMs', async () => {
  const created = await create({ url: 'https://example.com/c', policy: { breaker: { threshold: 3 } } });
  expect(created.status).toBe(201);
  expect(created.body.policy.breaker).toMatchObject({ threshold: 3, minStreakMs: 432_000_000, action: 'disable' });
  expect(created.body.warnings).toEqual([
    'breaker.minStreakMs: 432000000 (5 days) is kept from the "standard" preset: the breaker trips only after failures have gone on that long, whatever breaker.threshold says; set breaker.minStreakMs too to change it',
  ]);
  const fixed = await postern.api('PATCH', `/v1/endpoints/${created.body.id}`, { key, body: { policy: { breaker: { threshold: 3, minStreakMs: 0 } } } });
  expect(fixed.status).toBe(200);
  expect(fixed.body.policy.breaker).toMatchObject({ threshold: 3, minStreakMs: 0 });
  expect(fixed.body.warnings).toEqual([]);
  expect((await create({ url: 'https://example.com/d', policy: 'kestrel' })).body.warnings).toEqual([]);
});

test('two Authorization headers are 400 whichever comes first (Node keeps only the first)', async () => {
  const { request } = await import('node:http');
  const statusWith = (headers: string[]) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      // Raw headers, as a list: Node adds no Host header to it itself.
      const req = request(`${postern.baseUrl}/v1/endpoints`, { method: 'GET', headers: ['host', new URL(postern.baseUrl).host, ...headers] }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
  for (const headers of [
    ['authorization', `Bearer ${key}`, 'authorization', 'Bearer pk_wrong'],
    ['authorization', 'Bearer pk_wrong', 'Authorization', `Bearer ${key}`],
  ]) {
    const r = await statusWith(headers);
    expect([r.status, JSON.parse(r.body)]).toEqual([400, { error: { code: 'invalid_request', message: 'authorization: send one Authorization header, not several' } }]);
  }
  expect((await statusWith(['authorization', `Bearer ${key}`])).status).toBe(200);
});

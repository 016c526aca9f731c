import { startPostern, TEST_ADMIN_TOKEN, type TestPostern } from '../support/postern.js';
import { rawHttp } from '../support/raw-http.js';

/**
 * What a client sees when it sends something wrong: the right status, `{error:{code,message}}`
 * whose message names the bad field, and never a stack trace. No sender runs: nothing here is
 * about delivering.
 */

type ApiAnswer = Awaited<ReturnType<TestPostern['api']>>;

/** Asserts an error answer: status, code, a message matching `mentions`, and no internals. */
function expectError(res: ApiAnswer, status: number, code: string, ...mentions: (string | RegExp)[]): void {
  const context = JSON.stringify(res.body);
  expect({ status: res.status, context }).toEqual({ status, context });
  expect(res.headers.get('content-type') ?? '').toMatch(/^application\/json/);
  expect(Object.keys(res.body ?? {})).toEqual(['error']);
  expect(Object.keys(res.body.error).sort()).toEqual(['code', 'message']);
  expect(res.body.error.code).toBe(code);
  expect(typeof res.body.error.message).toBe('string');
  for (const m of mentions) expect(res.body.error.message).toEqual(typeof m === 'string' ? expect.stringContaining(m) : expect.stringMatching(m));
  expectNoStackTrace(res);
}

function expectNoStackTrace(res: ApiAnswer): void {
  const text = typeof res.body === 'string' ? res.body : JSON.stringify(res.body ?? '');
  expect(text).not.toMatch(/\bat \S+ \(|\bat (file|node):|\n\s*at |\\n\s*at /);
  expect(text).not.toMatch(/node_modules|\.ts:\d+|\.js:\d+/);
}

const validSecret = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;

describe('with the default body limit', () => {
  let postern: TestPostern;
  let keyA: string;
  let keyB: string;
  let endpointA: { id: string };
  let eventA: { id: string; deliveries: { id: string; endpointId: string }[] };

  beforeAll(async () => {
    postern = await startPostern({ sender: false });
    keyA = (await postern.createOrg('org-a')).apiKey;
    keyB = (await postern.createOrg('org-b')).apiKey;
    endpointA = await postern.createEndpoint(keyA, { url: 'http://127.0.0.1:9/hook', description: 'A' });
    const posted = await postern.api('POST', '/v1/events', { key: keyA, body: { type: 'invoice.paid', data: { n: 1 } } });
    expect(posted.status).toBe(202);
    eventA = posted.body;
  });
  afterAll(async () => {
    await postern.close();
  });

  describe('POST /v1/orgs', () => {
    test('missing name → 400 naming name', async () => {
      expectError(await postern.api('POST', '/v1/orgs', { key: TEST_ADMIN_TOKEN, body: {} }), 400, 'invalid_request', /^name: /);
    });
    test('non-string name → 400 naming name', async () => {
      expectError(await postern.api('POST', '/v1/orgs', { key: TEST_ADMIN_TOKEN, body: { name: 42 } }), 400, 'invalid_request', /^name: /, 'string');
    });
    test('blank name → 400 naming name', async () => {
      expectError(await postern.api('POST', '/v1/orgs', { key: TEST_ADMIN_TOKEN, body: { name: '   ' } }), 400, 'invalid_request', /^name: /);
    });
    test('without the admin token → 401', async () => {
      expectError(await postern.api('POST', '/v1/orgs', { body: { name: 'x' } }), 401, 'unauthorized', 'admin token');
    });
    test('with a wrong admin token → 401', async () => {
      expectError(await postern.api('POST', '/v1/orgs', { key: `${TEST_ADMIN_TOKEN}x`, body: { name: 'x' } }), 401, 'unauthorized', 'admin token');
    });
    test("with an org's API key instead of the admin token → 401", async () => {
      expectError(await postern.api('POST', '/v1/orgs', { key: keyA, body: { name: 'x' } }), 401, 'unauthorized', 'admin token');
    });
  });

  describe('POST /v1/endpoints', () => {
    const create = (body: unknown) => postern.api('POST', '/v1/endpoints', { key: keyA, body });

    test.each([
      ['url missing', {}, /^url: /],
      ['url not a string', { url: 42 }, /^url: /],
      ['url not a URL', { url: 'not a url' }, /^url: .*http/],
      ['ftp:// url', { url: 'ftp://example.com/hook' }, /^url: .*http/],
      ['url with user:pass', { url: 'http://user:pass@example.com/hook' }, /^url: .*(username|password)/],
      ['url over 2048 characters', { url: `https://example.com/${'a'.repeat(2048)}` }, /^url: .*2048/],
      ['url with a host label over 63 characters', { url: `https://${'a'.repeat(64)}.example.com/hook` }, /^url: .*labels .*at most 63 characters/],
      ['url with a host name over 253 characters', { url: `https://${Array.from({ length: 4 }, () => 'a'.repeat(63)).join('.')}.com/hook` }, /^url: .*host of at most 253 characters/],
      ['url with a tab (URL parsing would drop it silently)', { url: 'https://example.com/ho\tok' }, /^url: .*must not contain control characters/],
      ['url with a newline', { url: 'https://example.com/hook\n' }, /^url: .*must not contain control characters/],
      ['url with a control character in the host', { url: 'https://exa\u0001mple.com/hook' }, /^url: .*must not contain control characters/],
      ['eventTypes not an array', { url: 'https://example.com/h', eventTypes: 'invoice.paid' }, /^eventTypes: /],
      ['eventTypes with a bad entry', { url: 'https://example.com/h', eventTypes: ['invoice.paid', 'bad type!'] }, /^eventTypes\.1: /],
      ['unknown field', { url: 'https://example.com/h', colour: 'red' }, 'colour'],
      ['description not a string', { url: 'https://example.com/h', description: 5 }, /^description: /],
      ['secret too short', { url: 'https://example.com/h', secret: `whsec_${Buffer.alloc(8, 1).toString('base64')}` }, /^secret: .*whsec_/],
      ['secret without whsec_ prefix', { url: 'https://example.com/h', secret: Buffer.alloc(32, 1).toString('base64') }, /^secret: .*whsec_/],
      ['secret not a string', { url: 'https://example.com/h', secret: 123 }, /^secret: /],
    ])('%s → 400 invalid_request naming the field', async (_name, body, mention) => {
      expectError(await create(body), 400, 'invalid_request', mention);
    });

    test.each([
      ['http://10.0.0.1/', 'private'],
      ['http://169.254.169.254/latest/meta-data', 'link_local'],
      ['http://[fd00::1]/hook', 'unique_local'],
      ['http://0x0a000001/hook', 'private'],
    ])('literal non-public address %s → 400 unsafe_url', async (url, reason) => {
      expectError(await create({ url }), 400, 'unsafe_url', /^url: /, reason);
    });

    test('unknown preset name → 400 invalid_policy naming policy', async () => {
      expectError(await create({ url: 'https://example.com/h', policy: 'no-such-preset' }), 400, 'invalid_policy', /^policy: /, 'standard');
    });
    test('policy of the wrong type → 400 invalid_policy', async () => {
      expectError(await create({ url: 'https://example.com/h', policy: 12 }), 400, 'invalid_policy', /^policy: /);
    });
    test('maxAttempts 0 → 400 invalid_policy naming policy.maxAttempts and its range', async () => {
      expectError(await create({ url: 'https://example.com/h', policy: { maxAttempts: 0 } }), 400, 'invalid_policy', /^policy\.maxAttempts: /, '1 to 100');
    });
    test('unknown policy field → 400 invalid_policy naming it', async () => {
      expectError(await create({ url: 'https://example.com/h', policy: { maxAtempts: 3 } }), 400, 'invalid_policy', 'policy.maxAtempts');
    });
    // A misspelt key leaves the key it meant missing too: the answer names the typo, not "maxHops must be…".
    test.each([
      [{ redirects: { max: 3 } }, 'policy.redirects.max: unknown field "max"; redirects takes {follow: false} or {follow: true, maxHops}'],
      [{ redirects: { follow: true, max: 3 } }, 'policy.redirects.max: unknown field "max"; redirects takes {follow: false} or {follow: true, maxHops}'],
      [{ retention: { day: 3 } }, 'policy.retention.day: unknown field "day"; retention takes {days} or {lastPerEndpoint}'],
      [{ rateLimit: { persecond: 3 } }, 'policy.rateLimit.persecond: unknown field "persecond"; rateLimit takes perSecond, burst'],
    ])('unknown key in a nested policy object %j → 400 invalid_policy naming it and the keys taken', async (policy, message) => {
      const res = await create({ url: 'https://example.com/h', policy });
      expectError(res, 400, 'invalid_policy');
      expect(res.body.error.message).toBe(message);
    });

    test('nothing is stored for a refused endpoint', async () => {
      const list = await postern.api('GET', '/v1/endpoints', { key: keyA });
      expect(list.status).toBe(200);
      expect(list.body.data.map((e: { id: string }) => e.id)).toEqual([endpointA.id]);
    });

    test('a valid secret is accepted (the refusals above are about the value, not the field)', async () => {
      const ok = await create({ url: 'https://example.com/ok', secret: validSecret, eventTypes: ['none.ever'] });
      expect(ok.status).toBe(201);
      expect(ok.body.secret).toBe(validSecret);
      expect((await postern.api('DELETE', `/v1/endpoints/${ok.body.id}`, { key: keyA })).status).toBe(204);
    });
  });

  describe('PATCH /v1/endpoints/:id', () => {
    test('bad url and unknown field → 400 naming the field; endpoint unchanged', async () => {
      const path = `/v1/endpoints/${endpointA.id}`;
      expectError(await postern.api('PATCH', path, { key: keyA, body: { url: 'http://10.1.2.3/' } }), 400, 'unsafe_url', /^url: /);
      expectError(await postern.api('PATCH', path, { key: keyA, body: { secret: validSecret } }), 400, 'invalid_request', 'secret');
      expectError(await postern.api('PATCH', path, { key: keyA, body: { policy: { maxAttempts: 1000 } } }), 400, 'invalid_policy', 'policy.maxAttempts');
      expectError(await postern.api('PATCH', path, { key: keyA, body: { policy: { redirects: { follow: true, max: 3 } } } }), 400, 'invalid_policy', /^policy\.redirects\.max: unknown field "max"; redirects takes /);
      // policyName is read-only, and null resets nothing: both say what to send instead.
      expectError(await postern.api('PATCH', path, { key: keyA, body: { policyName: null } }), 400, 'invalid_request', /^policyName: is read-only .*send policy: a preset name such as "standard"/);
      expectError(await postern.api('PATCH', path, { key: keyA, body: { policyName: 'standard' } }), 400, 'invalid_request', /^policyName: is read-only/);
      expectError(await postern.api('PATCH', path, { key: keyA, body: { policy: null } }), 400, 'invalid_policy', /^policy: null does not reset the policy; send a preset name such as "standard"/);
      const after = await postern.api('GET', path, { key: keyA });
      expect(after.body.url).toBe('http://127.0.0.1:9/hook');
    });
  });

  describe('POST /v1/events', () => {
    const post = (body: unknown, headers?: Record<string, string>) => postern.api('POST', '/v1/events', { key: keyA, body, headers });

    test.each([
      ['missing type', { data: {} }, /^type: /],
      ['type not a string', { type: 7, data: {} }, /^type: /],
      ['type with bad characters', { type: 'invoice paid!', data: {} }, /^type: /],
      ['type starting with a dot', { type: '.invoice', data: {} }, /^type: /],
      ['type over 200 characters', { type: 'a'.repeat(201), data: {} }, /^type: /],
      ['missing data', { type: 'invoice.paid' }, /^data: /],
      ['unknown field', { type: 'invoice.paid', data: {}, extra: 1 }, 'extra'],
      ['idempotencyKey over 200 characters', { type: 'invoice.paid', data: {}, idempotencyKey: 'k'.repeat(201) }, /^idempotencyKey: /],
      ['empty idempotencyKey', { type: 'invoice.paid', data: {}, idempotencyKey: '' }, /^idempotencyKey: /],
      ['body is an array', [{ type: 'invoice.paid', data: {} }], /^body: /],
      ['body is a string', 'invoice.paid', /^body: /],
      ['body is null', null, /^body: /],
    ])('%s → 400 naming the field', async (_name, body, mention) => {
      expectError(await post(body), 400, 'invalid_request', mention);
    });

    test('type webhook.test is reserved → 400 naming type', async () => {
      expectError(await post({ type: 'webhook.test', data: {} }), 400, 'invalid_request', /^type: /, 'webhook.test');
    });

    test('Idempotency-Key header over 200 characters → 400 naming the header', async () => {
      expectError(await post({ type: 'invoice.paid', data: {} }, { 'idempotency-key': 'k'.repeat(201) }), 400, 'invalid_request', 'Idempotency-Key');
    });

    test('no event was stored for any refused request', async () => {
      const log = await postern.api('GET', `/v1/endpoints/${endpointA.id}/deliveries`, { key: keyA });
      expect(log.status).toBe(200);
      expect(log.body.data.map((d: { eventId: string }) => d.eventId)).toEqual([eventA.id]);
    });
  });

  describe('body parsing', () => {
    test('text/plain body → 415', async () => {
      const res = await postern.api('POST', '/v1/events', {
        key: keyA,
        rawBody: JSON.stringify({ type: 'invoice.paid', data: {} }),
        headers: { 'content-type': 'text/plain' },
      });
      expectError(res, 415, 'unsupported_media_type', 'content-type');
    });
    test('malformed JSON → 400 invalid_json', async () => {
      const res = await postern.api('POST', '/v1/events', { key: keyA, rawBody: '{"type":"invoice.paid","data":', headers: { 'content-type': 'application/json' } });
      expectError(res, 400, 'invalid_json', 'JSON');
    });
    test('a charset other than UTF-8 → 415', async () => {
      const res = await postern.api('POST', '/v1/events', {
        key: keyA,
        rawBody: JSON.stringify({ type: 'invoice.paid', data: { name: 'caf\u00e9' } }),
        headers: { 'content-type': 'application/json; charset=iso-8859-1' },
      });
      expectError(res, 415, 'unsupported_media_type', 'UTF-8');
    });
    test('bytes that are not UTF-8 → 400 invalid_json, not silently replaced', async () => {
      const body = Buffer.concat([Buffer.from('{"type":"invoice.paid","data":"caf'), Buffer.from([0xe9]), Buffer.from('"}')]);
      const res = await fetch(`${postern.baseUrl}/v1/events`, { method: 'POST', headers: { authorization: `Bearer ${keyA}`, 'content-type': 'application/json' }, body });
      expectError({ status: res.status, body: await res.json(), headers: res.headers }, 400, 'invalid_json', 'UTF-8');
    });
    test('two Content-Type headers → 400 naming content-type, not read as the first one says', async () => {
      const { request } = await import('node:http');
      const url = new URL(`${postern.baseUrl}/v1/events`);
      const answer = await new Promise<{ status: number; body: string; type: string }>((resolve, reject) => {
        const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: [['host', url.host], ['authorization', `Bearer ${keyA}`], ['content-type', 'application/json'], ['content-type', 'text/plain']] as unknown as Record<string, string> }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString('utf8')));
          res.on('end', () => resolve({ status: res.statusCode!, body, type: res.headers['content-type'] ?? '' }));
        });
        req.on('error', reject);
        req.end(JSON.stringify({ type: 'invoice.paid', data: {} }));
      });
      expectError({ status: answer.status, body: JSON.parse(answer.body), headers: new Headers({ 'content-type': answer.type }) }, 400, 'invalid_request', 'content-type: given more than once');
    });
    test('a body that starts with a UTF-8 byte order mark → 400 invalid_json naming it', async () => {
      const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ type: 'invoice.paid', data: {} }))]);
      const res = await fetch(`${postern.baseUrl}/v1/events`, { method: 'POST', headers: { authorization: `Bearer ${keyA}`, 'content-type': 'application/json' }, body });
      expectError({ status: res.status, body: await res.json(), headers: res.headers }, 400, 'invalid_json', 'byte order mark');
    });
    test('a content-encoding Postern does not read (unknown, or applied twice) → 415 naming the ones it reads; a gzipped body is read', async () => {
      for (const encoding of ['compress', 'gzip, gzip']) {
        const res = await postern.api('POST', '/v1/events', {
          key: keyA,
          rawBody: JSON.stringify({ type: 'invoice.paid', data: {} }),
          headers: { 'content-type': 'application/json', 'content-encoding': encoding },
        });
        expectError(res, 415, 'unsupported_media_type', 'content-encoding must be one of identity, gzip, deflate or br');
      }
      const { gzipSync } = await import('node:zlib');
      // Read through gzip: its event (no data, so nothing is stored) is checked field by field.
      const gzipped = await fetch(`${postern.baseUrl}/v1/events`, { method: 'POST', headers: { authorization: `Bearer ${keyA}`, 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipSync(JSON.stringify({ type: 'invoice.paid' })) });
      expect([gzipped.status, ((await gzipped.json()) as { error: { message: string } }).error.message]).toEqual([400, expect.stringMatching(/^data: /)]);
    });
    test('a body that does not inflate as its content-encoding says → 400', async () => {
      const res = await postern.api('POST', '/v1/events', {
        key: keyA,
        rawBody: JSON.stringify({ type: 'invoice.paid', data: {} }),
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      });
      expectError(res, 400, 'invalid_request', 'content-encoding');
    });
    test('malformed percent-encoding in a path id → 400, not 500', async () => {
      expectError(await postern.api('GET', '/v1/endpoints/%E0%A4%A', { key: keyA }), 400, 'invalid_request', 'path');
      expectError(await postern.api('GET', '/v1/deliveries/%zz', { key: keyA }), 400, 'invalid_request', 'path');
      // Well-formed escapes that do not decode to UTF-8 are not called malformed.
      expectError(await postern.api('GET', '/v1/deliveries/%ff', { key: keyA }), 400, 'invalid_request', 'path: a percent-escape that is malformed or does not decode to UTF-8');
    });
    test('malformed JSON on the admin route → 400 invalid_json', async () => {
      const res = await postern.api('POST', '/v1/orgs', { key: TEST_ADMIN_TOKEN, rawBody: "{name:'x'}", headers: { 'content-type': 'application/json' } });
      expectError(res, 400, 'invalid_json', 'JSON');
    });
  });

  describe('authentication', () => {
    test('missing API key → 401', async () => {
      expectError(await postern.api('GET', '/v1/endpoints'), 401, 'unauthorized', 'API key');
    });
    test('unknown API key → 401', async () => {
      expectError(await postern.api('GET', '/v1/endpoints', { key: 'pk_not-a-real-key' }), 401, 'unauthorized', 'API key');
    });
    test('malformed Authorization header → 401', async () => {
      expectError(await postern.api('GET', '/v1/endpoints', { headers: { authorization: `Basic ${keyA}` } }), 401, 'unauthorized', 'API key');
    });
    test('the admin token is not an API key → 401', async () => {
      expectError(await postern.api('GET', '/v1/endpoints', { key: TEST_ADMIN_TOKEN }), 401, 'unauthorized', 'API key');
    });
    test('posting an event without a key stores nothing → 401', async () => {
      expectError(await postern.api('POST', '/v1/events', { body: { type: 'invoice.paid', data: {} } }), 401, 'unauthorized');
    });
  });

  describe('delivery log query', () => {
    const list = (query: string) => postern.api('GET', `/v1/endpoints/${endpointA.id}/deliveries?${query}`, { key: keyA });

    test.each([
      ['limit=0', /^limit: .*1 to 100/],
      ['limit=abc', /^limit: .*1 to 100/],
      ['limit=101', /^limit: .*1 to 100/],
      ['limit=2.5', /^limit: /],
      ['status=bogus', /^status: .*succeeded/],
      ['cursor=not%20a%20cursor', /^cursor: /],
      ['cursor=%28dlv_x', /^cursor: /],
    ])('%s → 400 naming the parameter', async (query, mention) => {
      expectError(await list(query), 400, 'invalid_request', mention);
    });

    test('the same query with good values answers 200 (the refusals are about the values)', async () => {
      const res = await list('limit=1&status=pending');
      expect(res.status).toBe(200);
      expect(res.body.data.map((d: { id: string }) => d.id)).toEqual([eventA.deliveries[0]!.id]);
    });

    test('GET /v1/endpoints with limit=0 → 400 naming limit', async () => {
      expectError(await postern.api('GET', '/v1/endpoints?limit=0', { key: keyA }), 400, 'invalid_request', /^limit: /);
    });
  });

  describe("another org's resources answer 404, never 403", () => {
    test.each([
      ['GET', 'endpoint', () => `/v1/endpoints/${endpointA.id}`, undefined],
      ['PATCH', 'endpoint', () => `/v1/endpoints/${endpointA.id}`, { description: 'stolen' }],
      ['DELETE', 'endpoint', () => `/v1/endpoints/${endpointA.id}`, undefined],
      ['POST', 'endpoint', () => `/v1/endpoints/${endpointA.id}/pause`, undefined],
      ['POST', 'endpoint', () => `/v1/endpoints/${endpointA.id}/resume`, undefined],
      ['POST', 'endpoint', () => `/v1/endpoints/${endpointA.id}/test`, undefined],
      ['POST', 'endpoint', () => `/v1/endpoints/${endpointA.id}/rotate-secret`, undefined],
      ['GET', 'endpoint', () => `/v1/endpoints/${endpointA.id}/secret`, undefined],
      ['GET', 'endpoint', () => `/v1/endpoints/${endpointA.id}/deliveries`, undefined],
      ['POST', 'endpoint', () => `/v1/endpoints/${endpointA.id}/redeliver-failed`, undefined],
      ['POST', 'endpoint', () => `/v1/endpoints/${endpointA.id}/recover`, { since: '2020-01-01T00:00:00Z' }],
      ['GET', 'delivery', () => `/v1/deliveries/${eventA.deliveries[0]!.id}`, undefined],
      ['POST', 'delivery', () => `/v1/deliveries/${eventA.deliveries[0]!.id}/redeliver`, undefined],
      ['GET', 'event', () => `/v1/events/${eventA.id}`, undefined],
    ])('%s %s by org B → 404', async (method, what, path, body) => {
      expectError(await postern.api(method, path(), { key: keyB, body }), 404, 'not_found', `${what} not found`);
    });

    test("org A's endpoint, event and delivery are untouched and visible to org A", async () => {
      const endpoint = await postern.api('GET', `/v1/endpoints/${endpointA.id}`, { key: keyA });
      expect(endpoint.status).toBe(200);
      expect(endpoint.body).toMatchObject({ id: endpointA.id, status: 'active', description: 'A' });
      const secret = await postern.api('GET', `/v1/endpoints/${endpointA.id}/secret`, { key: keyA });
      expect(secret.body.previous).toBe(0);
      const log = await postern.api('GET', `/v1/endpoints/${endpointA.id}/deliveries`, { key: keyA });
      expect(log.body.data.map((d: { id: string }) => d.id)).toEqual([eventA.deliveries[0]!.id]);
      expect((await postern.api('GET', `/v1/events/${eventA.id}`, { key: keyA })).status).toBe(200);
      expect((await postern.api('GET', `/v1/deliveries/${eventA.deliveries[0]!.id}`, { key: keyA })).status).toBe(200);
    });

    test('ids that exist nowhere also answer 404', async () => {
      expectError(await postern.api('GET', '/v1/endpoints/ep_00000000000000000000000000', { key: keyA }), 404, 'not_found', 'endpoint');
      expectError(await postern.api('GET', '/v1/deliveries/dlv_00000000000000000000000000', { key: keyA }), 404, 'not_found', 'delivery');
      expectError(await postern.api('GET', '/v1/events/evt_00000000000000000000000000', { key: keyA }), 404, 'not_found', 'event');
    });
  });

  describe('unknown routes', () => {
    test('unknown /v1 route with a key → 404 JSON', async () => {
      expectError(await postern.api('GET', '/v1/nothing-here', { key: keyA }), 404, 'not_found', '/v1/nothing-here');
    });
    test('unknown route outside /v1 → 404 JSON', async () => {
      expectError(await postern.api('GET', '/nothing-here'), 404, 'not_found', '/nothing-here');
    });
    test('wrong method on a known path → 405 JSON naming the methods it takes, in Allow too', async () => {
      const r = await postern.api('PUT', '/v1/events', { key: keyA, body: {} });
      expectError(r, 405, 'method_not_allowed', 'it takes GET, HEAD, POST');
      expect(r.headers.get('allow')).toBe('GET, HEAD, POST');
      const onEndpoint = await postern.api('PUT', '/v1/endpoints/ep_00000000000000000000000000', { key: keyA, body: {} });
      expectError(onEndpoint, 405, 'method_not_allowed');
      expect(onEndpoint.headers.get('allow')).toBe('DELETE, GET, HEAD, PATCH');
    });
    // The route is decided before the body is read: no 415 or invalid_json about a body nothing would read.
    test.each([
      ['a form body', 'application/x-www-form-urlencoded', 'a=1'],
      ['a text body', 'text/plain', 'hello'],
      ['malformed JSON', 'application/json', '{"type":'],
    ])('unknown route with %s → 404, on /v1 and outside it', async (_name, type, rawBody) => {
      expectError(await postern.api('POST', '/v1/nothing-here', { key: keyA, rawBody, headers: { 'content-type': type } }), 404, 'not_found', 'no route POST /v1/nothing-here');
      expectError(await postern.api('POST', '/nothing-here', { rawBody, headers: { 'content-type': type } }), 404, 'not_found', 'no route POST /nothing-here');
    });
    test('wrong method on a known path with a form body → 405, not 415', async () => {
      const r = await postern.api('PUT', '/v1/events', { key: keyA, rawBody: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expectError(r, 405, 'method_not_allowed', 'it takes GET, HEAD, POST');
      expect(r.headers.get('allow')).toBe('GET, HEAD, POST');
    });
    test('a known route with a form body is still 415', async () => {
      expectError(await postern.api('POST', '/v1/events', { key: keyA, rawBody: 'a=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415, 'unsupported_media_type');
    });
  });

  // Requests fetch would never send, so written byte for byte; each answer closes the connection.
  describe('HTTP framing', () => {
    const event = '{"type":"invoice.paid","data":{}}';
    const chunked = `${event.length.toString(16)}\r\n${event}\r\n0\r\n\r\n`;

    test.each(['gzip, chunked', 'deflate, chunked'])('Transfer-Encoding: %s → 501 transfer_encoding_not_supported, nothing stored', async (codings) => {
      const before = (await postern.api('GET', `/v1/endpoints/${endpointA.id}/deliveries`, { key: keyA })).body.data.length;
      const res = await rawHttp(postern.baseUrl, `POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${keyA}\r\nContent-Type: application/json\r\nTransfer-Encoding: ${codings}\r\n\r\n${chunked}`);
      expect(res.status).toBe(501);
      expect(res.headers).toMatch(/^content-type: application\/json/im);
      expect(res.body).toEqual({ error: { code: 'transfer_encoding_not_supported', message: expect.stringContaining(`Transfer-Encoding ${codings.split(',')[0]} is not supported`) } });
      expect((await postern.api('GET', `/v1/endpoints/${endpointA.id}/deliveries`, { key: keyA })).body.data.length).toBe(before);
    });
    test('Transfer-Encoding: chunked alone is read as before', async () => {
      const preview = '{"policy":"standard"}';
      const res = await rawHttp(
        postern.baseUrl,
        `POST /v1/policies/preview HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nAuthorization: Bearer ${keyA}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${preview.length.toString(16)}\r\n${preview}\r\n0\r\n\r\n`,
      );
      expect({ status: res.status, policyName: res.body.policyName }).toEqual({ status: 200, policyName: 'standard' });
    });
    test('Transfer-Encoding without chunked last → 400 bad_request (the body has no known length)', async () => {
      const res = await rawHttp(postern.baseUrl, 'POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: gzip\r\n\r\nabc');
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('bad_request');
    });

    test('HTTP/1.1 without Host → 400 missing_host in the API error shape', async () => {
      const res = await rawHttp(postern.baseUrl, 'GET /healthz HTTP/1.1\r\n\r\n');
      expect(res.status).toBe(400);
      expect(res.headers).toMatch(/^content-type: application\/json/im);
      expect(res.body).toEqual({ error: { code: 'missing_host', message: 'an HTTP/1.1 request must carry a Host header' } });
      const onApi = await rawHttp(postern.baseUrl, `POST /v1/events HTTP/1.1\r\nAuthorization: Bearer ${keyA}\r\nContent-Type: application/json\r\nContent-Length: ${event.length}\r\n\r\n${event}`);
      expect(onApi.body.error.code).toBe('missing_host');
    });
    test('OPTIONS on a path the API has → 204 with Allow (its methods and OPTIONS); on a path it does not → 404', async () => {
      const res = await rawHttp(postern.baseUrl, `OPTIONS /v1/endpoints HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${keyA}\r\nConnection: close\r\n\r\n`);
      expect(res.status).toBe(204);
      expect(res.headers).toMatch(/^allow: GET, HEAD, POST, OPTIONS\r?$/im);
      const missing = await postern.api('OPTIONS', '/v1/nothing-here', { key: keyA });
      expect(missing.status).toBe(404);
    });
    test('two Host headers → 400 bad_request, the connection closed; on an API route nothing is accepted', async () => {
      const res = await rawHttp(postern.baseUrl, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: internal.example\r\n\r\n');
      expect(res.status).toBe(400);
      expect(res.headers).toMatch(/^connection: close/im);
      expect(res.body).toEqual({ error: { code: 'bad_request', message: 'the request is not valid HTTP/1.1: it carries more than one Host header' } });
      const before = (await postern.api('GET', '/v1/events', { key: keyA })).body.data.length;
      const onApi = await rawHttp(postern.baseUrl, `POST /v1/events HTTP/1.1\r\nHost: a\r\nhost: b\r\nAuthorization: Bearer ${keyA}\r\nContent-Type: application/json\r\nContent-Length: ${event.length}\r\n\r\n${event}`);
      expect(onApi.body.error.code).toBe('bad_request');
      expect((await postern.api('GET', '/v1/events', { key: keyA })).body.data.length).toBe(before);
    });
    test('HTTP/1.0 without Host, and HTTP/1.1 with an empty Host, are served', async () => {
      expect((await rawHttp(postern.baseUrl, 'GET /healthz HTTP/1.0\r\n\r\n')).status).toBe(200);
      expect((await rawHttp(postern.baseUrl, 'GET /healthz HTTP/1.1\r\nHost:\r\nConnection: close\r\n\r\n')).status).toBe(200);
    });
  });
  test('a query string on a route that reads none → 400 naming the parameter, and nothing is written', async () => {
    // An idempotency key sent in the query instead of the body must not let the event in twice.
    for (let i = 0; i < 2; i++) {
      const res = await postern.api('POST', '/v1/events?idempotencyKey=qk-1', { key: keyA, body: { type: 'query.refused', data: {} } });
      expectError(res, 400, 'invalid_request', 'query: unknown parameter "idempotencyKey"');
    }
    const listed = await postern.api('GET', '/v1/events?type=query.refused', { key: keyA });
    expect(listed.status).toBe(200);
    expect(listed.body.data).toEqual([]);
    expectError(await postern.api('PATCH', `/v1/endpoints/${endpointA.id}?foo=1`, { key: keyA, body: { description: 'changed' } }), 400, 'invalid_request', 'query: unknown parameter "foo"');
    expect((await postern.api('GET', `/v1/endpoints/${endpointA.id}`, { key: keyA })).body.description).toBe('A');
    expectError(await postern.api('GET', `/v1/deliveries/${eventA.deliveries[0]!.id}?x=1`, { key: keyA }), 400, 'invalid_request', 'query: unknown parameter "x"');
    expectError(await postern.api('POST', '/v1/events/batch?foo=1', { key: keyA, body: { events: [{ type: 'query.refused', data: {} }] } }), 400, 'invalid_request', 'query: unknown parameter "foo"');
    // A path that two routes share (export beside `/v1/deliveries/:id`): the one that reads a query takes it.
    expect((await postern.api('GET', `/v1/deliveries/export?endpointId=${endpointA.id}`, { key: keyA })).status).toBe(200);
    // Without credentials the answer is still 401, and outside the API a query is not looked at.
    expect((await postern.api('POST', '/v1/events?x=1', { body: { type: 'query.refused', data: {} } })).status).toBe(401);
    expect((await postern.api('GET', '/healthz?x=1')).status).toBe(200);
  });
});

describe('with MAX_BODY_BYTES = 2048', () => {
  let postern: TestPostern;
  let key: string;

  beforeAll(async () => {
    postern = await startPostern({ sender: false, maxBodyBytes: 2048 });
    key = (await postern.createOrg()).apiKey;
    await postern.createEndpoint(key, { url: 'http://127.0.0.1:9/hook' });
  });
  afterAll(async () => {
    await postern.close();
  });

  test('a body over the limit → 413 payload_too_large, nothing stored', async () => {
    const res = await postern.api('POST', '/v1/events', { key, body: { type: 'big.event', data: { blob: 'x'.repeat(3000) } } });
    expectError(res, 413, 'payload_too_large', 'MAX_BODY_BYTES');
  });

  test('a body over the limit to an unknown route → 404, not 413', async () => {
    expectError(await postern.api('POST', '/v1/nothing-here', { key, rawBody: JSON.stringify({ pad: 'x'.repeat(4096) }), headers: { 'content-type': 'application/json' } }), 404, 'not_found');
  });
  test('a body of exactly the limit is accepted', async () => {
    const body = JSON.stringify({ type: 'big.event', data: { blob: '' } });
    const filler = 'x'.repeat(2048 - Buffer.byteLength(body));
    const res = await postern.api('POST', '/v1/events', { key, rawBody: body.replace('""', `"${filler}"`), headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(202);
    expect(res.body.deliveries).toHaveLength(1);
  });
});

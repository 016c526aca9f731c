import { request } from 'node:http';
import { Postern } from '@postern/client';
import { startPostern, TEST_ADMIN_TOKEN, type TestPostern } from '../support/postern.js';

/**
 * What a new user broke, fixed (fourth review, after ordering keys, org settings, portal sessions
 * and the client): ordering keys HTTP would trim, non-ASCII Idempotency-Key headers that were
 * stored garbled, a portal session changing the org's settings, and a query's unknown parameter
 * reported as a body field.
 */

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
});
afterAll(async () => {
  await postern.close();
});

test.each(['x ', ' x', ' ', 'a\tb'])('an orderingKey HTTP would not carry as written (%j) is 400, naming it; nothing is stored', async (orderingKey) => {
  const r = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'a.b', data: {}, orderingKey } });
  expect(r.status).toBe(400);
  expect(r.body.error.message).toMatch(/^orderingKey: /);
  expect((await postern.api('GET', '/v1/events', { key: apiKey })).body.data).toEqual([]);
});

test('an orderingKey with spaces inside is kept as written', async () => {
  const r = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'a.b', data: {}, orderingKey: 'customer 42' } });
  expect(r.status).toBe(202);
});

/** POST with a raw header value (Latin-1 characters stand for the bytes on the wire). */
function rawPost(path: string, headerValue: string, body: string): Promise<{ status: number; body: string }> {
  const url = new URL(path, postern.baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': headerValue } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

test('a non-ASCII Idempotency-Key header (UTF-8 bytes of "été") is 400, on events and on actions, instead of a garbled key', async () => {
  const utf8AsLatin1 = Buffer.from('été', 'utf8').toString('latin1');
  const event = await rawPost('/v1/events', utf8AsLatin1, JSON.stringify({ type: 'a.b', data: {} }));
  expect(event.status).toBe(400);
  expect(JSON.parse(event.body).error.message).toContain('printable ASCII');
  const action = await rawPost(`/v1/endpoints/${endpointId}/pause`, utf8AsLatin1, '');
  expect(action.status).toBe(400);
  // The same key in the body is fine: JSON carries any text.
  const inBody = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'a.b', data: {}, idempotencyKey: 'été' } });
  expect(inBody.status).toBe(202);
});

test('the client refuses a non-ASCII idempotency key before sending, with a usage error (not a network one)', async () => {
  const client = new Postern({ baseUrl: postern.baseUrl, apiKey });
  await expect(client.events.create({ type: 'a.b', data: {} }, { idempotencyKey: 'ключ' })).rejects.toThrow(TypeError);
});

test('a portal session, even with webhooks:write, cannot change the org settings or read the check secret (403 api_key_required)', async () => {
  const minted = await postern.api('POST', `/v1/orgs/${orgId}/portal-sessions`, { key: TEST_ADMIN_TOKEN, body: { scopes: ['webhooks:read', 'webhooks:write'] } });
  expect(minted.status).toBe(201);
  const token = minted.body.token as string;
  const patch = await postern.api('PATCH', '/v1/org', { key: token, body: { disabledEventTypes: ['a.*'] } });
  expect(patch.status).toBe(403);
  expect(patch.body.error.code).toBe('api_key_required');
  const secret = await postern.api('GET', '/v1/org/check-secret', { key: token });
  expect(secret.status).toBe(403);
  // Reading the settings stays allowed; the settings are unchanged.
  const read = await postern.api('GET', '/v1/org', { key: token });
  expect(read.status).toBe(200);
  expect(read.body.disabledEventTypes).toEqual([]);
});

test.each(['/v1/events?foo=bar', '/v1/stats?colour=red', '/v1/endpoints?status=paused', '/v1/api-keys?name=x', '/v1/notifications?limit=5&kind=x', '/v1/endpoints/:id/deliveries?type=a.b'])('an unknown query parameter (%s) is named as a parameter', async (path) => {
  const r = await postern.api('GET', path.replace(':id', endpointId), { key: apiKey });
  expect(r.status).toBe(400);
  expect(r.body.error.code).toBe('invalid_request');
  expect(r.body.error.message).toMatch(new RegExp(`^query: unknown parameter "${/[?&](status|name|kind|type|foo|colour)=/.exec(path)![1]}"$`));
});

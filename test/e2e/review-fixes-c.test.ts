import { request } from 'node:http';
import { startPostern, type TestPostern } from '../support/postern.js';

/**
 * What a new user broke, fixed (third review): filters written with brackets no longer silently
 * vanish, endpoint URLs that could never work or would be stored other than written are refused,
 * and an Idempotency-Key sent twice is not joined into a key nobody chose.
 */

let postern: TestPostern;
let apiKey: string;
let endpointId: string;

beforeAll(async () => {
  postern = await startPostern({ sender: false });
  apiKey = (await postern.createOrg()).apiKey;
  endpointId = (await postern.createEndpoint(apiKey, { url: 'https://example.com/hook' })).id;
});
afterAll(async () => {
  await postern.close();
});

test.each(['status[]=failed', 'limit[]=1', 'cursor[a]=x'])('a bracketed query parameter (%s) is 400, naming it', async (query) => {
  const r = await postern.api('GET', `/v1/endpoints/${endpointId}/deliveries?${query}`, { key: apiKey });
  expect(r.status).toBe(400);
  expect(r.body.error.code).toBe('invalid_request');
  expect(r.body.error.message).toContain(decodeURIComponent(query.split('=')[0]!));
});

test.each([
  ['http://example.com:0/hook', 'port 0'],
  ['https://example.com/hook#part', 'fragment'],
  ['http:///example.com/hook', 'scheme://host'],
])('an endpoint URL %s is refused (%s)', async (url, words) => {
  const created = await postern.api('POST', '/v1/endpoints', { key: apiKey, body: { url } });
  expect(created.status).toBe(400);
  expect(created.body.error.message).toContain(words);
  const patched = await postern.api('PATCH', `/v1/endpoints/${endpointId}`, { key: apiKey, body: { url } });
  expect(patched.status).toBe(400);
});

/** POSTs with the Idempotency-Key header sent twice (fetch would join them; Node sends each). */
function postWithTwoKeys(path: string, body: string): Promise<{ status: number; body: any }> {
  const url = new URL(path, postern.baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': ['a1', 'a2'] } },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

test('an Idempotency-Key header sent twice is 400, on events and on action routes', async () => {
  const event = await postWithTwoKeys('/v1/events', JSON.stringify({ type: 'invoice.paid', data: {} }));
  expect(event.status).toBe(400);
  expect(event.body.error.message).toContain('Idempotency-Key');
  const pause = await postWithTwoKeys(`/v1/endpoints/${endpointId}/pause`, '');
  expect(pause.status).toBe(400);
  expect(pause.body.error.message).toContain('Idempotency-Key');
  expect((await postern.api('GET', `/v1/endpoints/${endpointId}`, { key: apiKey })).body.status).toBe('active');
});

import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/** Findings of a new user's review: each test failed before its fix. */

let postern: TestPostern;
let receiver: TestReceiver;
let key: string;

beforeAll(async () => {
  postern = await startPostern();
  receiver = await startReceiver((req) => (req.path.startsWith('/fail') ? 500 : 200));
  key = (await postern.createOrg()).apiKey;
});
afterAll(async () => {
  await postern.close();
  await receiver.close();
});

const base = () => receiver.url.replace(/\/hook$/, '');

test('an endpoint its breaker disabled for re-creation stays disabled: no pause, and no resume even after a policy change', async () => {
  const endpoint = await postern.createEndpoint(key, {
    url: `${base()}/fail`,
    policy: { preset: 'vestiarion', maxAttempts: 2, schedule: { kind: 'fixed', waitsMs: [20] }, breaker: { threshold: 2 } },
  });
  await postern.api('POST', '/v1/events', { key, body: { type: 'a.b', data: {} } });
  await waitUntil('breaker tripped', async () => (await postern.api('GET', `/v1/endpoints/${endpoint.id}`, { key })).body.status === 'disabled');

  const pause = await postern.api('POST', `/v1/endpoints/${endpoint.id}/pause`, { key });
  expect(pause.status).toBe(409);
  expect(pause.body.error.code).toBe('endpoint_disabled');
  // It says why the endpoint is disabled, as its record does (a streak here; a 410 Gone elsewhere).
  const { disabledReason } = (await postern.api('GET', `/v1/endpoints/${endpoint.id}`, { key })).body;
  expect(typeof disabledReason).toBe('string');
  expect(pause.body.error.message).toBe(`the endpoint is disabled (${disabledReason}); resume it (or re-create it, if its policy says so) instead of pausing`);
  expect((await postern.api('PATCH', `/v1/endpoints/${endpoint.id}`, { key, body: { policy: 'standard' } })).status).toBe(200);
  const resume = await postern.api('POST', `/v1/endpoints/${endpoint.id}/resume`, { key });
  expect(resume.status).toBe(409);
  expect(resume.body.error.code).toBe('recreate_required');
  expect((await postern.api('GET', `/v1/endpoints/${endpoint.id}`, { key })).body.status).toBe('disabled');
});

test('repeated rotations keep at most the 2 latest previous secrets signing', async () => {
  const endpoint = await postern.createEndpoint(key, { url: `${base()}/rotated`, policy: fastPolicy(1) });
  for (let i = 0; i < 5; i++) expect((await postern.api('POST', `/v1/endpoints/${endpoint.id}/rotate-secret`, { key })).status).toBe(200);
  expect((await postern.api('GET', `/v1/endpoints/${endpoint.id}/secret`, { key })).body.previous).toBe(2);
  const before = receiver.requests.length;
  await postern.api('POST', '/v1/events', { key, body: { type: 'a.b', data: {} } });
  const requests = await receiver.waitForRequests(before + 1);
  const mine = requests.filter((r) => r.path === '/rotated');
  expect(mine.at(-1)!.headers['webhook-signature']!.toString().split(' ')).toHaveLength(3);
  const withBody = await postern.api('POST', `/v1/endpoints/${endpoint.id}/rotate-secret`, { key, body: { secret: 'whsec_x' } });
  expect(withBody.status).toBe(400);
});

test('an IPv4-mapped loopback URL is refused at the API, like the sender would', async () => {
  const r = await postern.api('POST', '/v1/endpoints', { key, body: { url: `http://[::ffff:127.0.0.1]:${receiver.port}/mapped` } });
  expect(r.status).toBe(400);
  expect(r.body.error.code).toBe('unsafe_url');
  expect(r.body.error.message).toContain('ipv4_mapped');
});

test('JSON nested deeper than 128 levels is refused; 100 levels are accepted and served back', async () => {
  const deep = `{"type":"a.b","data":${'['.repeat(200)}${']'.repeat(200)}}`;
  const refused = await postern.api('POST', '/v1/events', { key, rawBody: deep, headers: { 'content-type': 'application/json' } });
  expect(refused.status).toBe(400);
  expect(refused.body.error.code).toBe('invalid_json');
  const ok = `{"type":"a.b","data":${'['.repeat(100)}${']'.repeat(100)}}`;
  const accepted = await postern.api('POST', '/v1/events', { key, rawBody: ok, headers: { 'content-type': 'application/json' } });
  expect(accepted.status).toBe(202);
  expect((await postern.api('GET', `/v1/events/${accepted.body.id}`, { key })).status).toBe(200);
});

test('GET /v1/events/:id returns data exactly as it was sent', async () => {
  const data = '{"amount":12345678901234567890123,"ratio":1.0,"z":-0,"a":1,"a":2}';
  const posted = await postern.api('POST', '/v1/events', { key, rawBody: `{"type":"a.b","data":${data}}`, headers: { 'content-type': 'application/json' } });
  expect(posted.status).toBe(202);
  const res = await fetch(`${postern.baseUrl}/v1/events/${posted.body.id}`, { headers: { authorization: `Bearer ${key}` } });
  const text = await res.text();
  expect(text).toContain(`"data":${data}`);
  const parsed = JSON.parse(text);
  expect(parsed).toMatchObject({ id: posted.body.id, type: 'a.b' });
  expect(typeof parsed.timestamp).toBe('string');
});

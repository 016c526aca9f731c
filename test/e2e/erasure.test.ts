import type { ServerResponse } from 'node:http';
import { fastPolicy, startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Erasure: DELETE /v1/events/:id/data (and by idempotency key) removes an event's payload — its
 * envelope, frozen bodies, stored responses — from Redis while the delivery log's metadata stays;
 * reads say dataErased, redelivery is 409 data_erased, a pending delivery is cancelled with
 * data_erased, an attempt in flight makes it 409 in_flight (nothing erased), and each erasure is
 * in the audit log.
 */

const SECRET_DATA = 'ssn-123-45-6789';
const RESPONSE_BODY = 'receiver-said-something-private';

let postern: TestPostern;
let ok: TestReceiver;
let failing: TestReceiver;
let apiKey: string;
let okEndpoint: string;
let failingEndpoint: string;

beforeAll(async () => {
  postern = await startPostern();
  ok = await startReceiver((_req, _n, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' }).end(RESPONSE_BODY);
    return 'handled';
  });
  failing = await startReceiver((_req, _n, res) => {
    res.writeHead(500, { 'content-type': 'text/plain' }).end(RESPONSE_BODY);
    return 'handled';
  });
  apiKey = (await postern.createOrg()).apiKey;
  okEndpoint = (await postern.createEndpoint(apiKey, { url: ok.url, eventTypes: ['erase.me'], policy: { preset: 'standard', keepResponseBody: 'all' } })).id;
  failingEndpoint = (await postern.createEndpoint(apiKey, { url: failing.url, eventTypes: ['erase.me'], policy: { ...fastPolicy(3, 60_000), keepResponseBody: 'all' } })).id;
});

afterAll(async () => {
  await postern.close();
  await ok.close();
  await failing.close();
});

const get = (path: string, key = apiKey) => postern.api('GET', path, { key });

/** Every string value stored under the test's prefix (hashes, strings, sets, streams). */
async function everythingStored(): Promise<string> {
  const keys = await postern.redis.keys(`${postern.prefix}*`);
  const bull = await postern.redis.keys(`{${postern.prefix}*`);
  const out: string[] = [];
  for (const key of [...keys, ...bull]) {
    const type = await postern.redis.type(key);
    if (type === 'hash') out.push(JSON.stringify(await postern.redis.hgetall(key)));
    else if (type === 'string') out.push((await postern.redis.get(key)) ?? '');
    else if (type === 'stream') out.push(JSON.stringify(await postern.redis.xrange(key, '-', '+')));
    else if (type === 'list') out.push(JSON.stringify(await postern.redis.lrange(key, 0, -1)));
  }
  return out.join('\n');
}

/** Sends an event to both endpoints; waits until the first succeeded and the second waits for its retry. */
async function sentEvent(extra: Record<string, unknown> = {}): Promise<{ eventId: string; okDelivery: string; pendingDelivery: string }> {
  const r = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'erase.me', data: { ssn: SECRET_DATA }, ...extra } });
  expect(r.status).toBe(202);
  const byEndpoint = Object.fromEntries((r.body.deliveries as any[]).map((d) => [d.endpointId, d.id as string]));
  const okDelivery = byEndpoint[okEndpoint]!;
  const pendingDelivery = byEndpoint[failingEndpoint]!;
  await waitUntil('the first delivery to succeed', async () => (await get(`/v1/deliveries/${okDelivery}`)).body.status === 'succeeded');
  await waitUntil('the second to wait for its retry', async () => (await get(`/v1/deliveries/${pendingDelivery}`)).body.waitingForNextAttempt === true);
  return { eventId: r.body.id, okDelivery, pendingDelivery };
}

test("erases the payload everywhere in Redis, keeps the log's metadata, cancels the pending delivery, refuses redelivery", async () => {
  const { eventId, okDelivery, pendingDelivery } = await sentEvent();
  expect((await get(`/v1/deliveries/${okDelivery}`)).body.attempts[0].response.body).toBe(RESPONSE_BODY);
  expect(await everythingStored()).toContain(SECRET_DATA);

  const erased = await postern.api('DELETE', `/v1/events/${eventId}/data`, { key: apiKey });
  expect(erased.status).toBe(200);
  expect(erased.body).toEqual({ eventId, dataErased: true, dataErasedAt: expect.any(String), cancelledDeliveries: 1 });

  const stored = await everythingStored();
  expect(stored).not.toContain(SECRET_DATA);
  expect(stored).not.toContain(RESPONSE_BODY);

  const event = (await get(`/v1/events/${eventId}`)).body;
  expect(event).toMatchObject({ id: eventId, type: 'erase.me', data: null, envelope: null, dataErased: true, dataErasedAt: erased.body.dataErasedAt });
  expect(event.deliveries.map((d: any) => d.dataErased)).toEqual([true, true]);

  const done = (await get(`/v1/deliveries/${okDelivery}`)).body;
  expect(done).toMatchObject({ status: 'succeeded', dataErased: true, attemptCount: 1, lastResponseStatus: 200 });
  expect(done.attempts).toHaveLength(1);
  expect(done.attempts[0]).toMatchObject({ number: 1, responseStatus: 200, error: null, response: null });
  expect(done.attempts[0].requestHeaders['webhook-id']).toBe(eventId);

  const cancelled = (await get(`/v1/deliveries/${pendingDelivery}`)).body;
  expect(cancelled).toMatchObject({ status: 'cancelled', cancelReason: 'data_erased', dataErased: true, attemptCount: 1, lastResponseStatus: 500, nextAttemptAt: null });
  expect(cancelled.attempts[0].response).toBeNull();
  expect((await postern.api('POST', `/v1/deliveries/${pendingDelivery}/send-now`, { key: apiKey })).body.error.code).toBe('delivery_finished');

  const redeliver = await postern.api('POST', `/v1/deliveries/${okDelivery}/redeliver`, { key: apiKey });
  expect(redeliver.status).toBe(409);
  expect(redeliver.body.error.code).toBe('data_erased');
  // The endpoint's log lists both, marked.
  const log = (await get(`/v1/endpoints/${failingEndpoint}/deliveries`)).body.data.find((d: any) => d.id === pendingDelivery);
  expect(log).toMatchObject({ status: 'cancelled', dataErased: true });

  // Again: nothing changes, the first time is kept, no second audit entry.
  const again = await postern.api('DELETE', `/v1/events/${eventId}/data`, { key: apiKey });
  expect(again.body).toEqual({ ...erased.body, cancelledDeliveries: 0 });
  const audit = (await get(`/v1/audit-log?target=${eventId}`)).body.data;
  expect(audit).toHaveLength(1);
  expect(audit[0]).toMatchObject({ action: 'event.data_erased', target: { type: 'event', id: eventId }, changes: ['data', 'deliveries.status'] });
});

test('by idempotency key: every event accepted under it; 404 when none; 400 without the key', async () => {
  const { eventId } = await sentEvent({ idempotencyKey: 'erase-by-key-1' });
  const r = await postern.api('DELETE', '/v1/events/data?idempotencyKey=erase-by-key-1', { key: apiKey });
  expect(r.status).toBe(200);
  expect(r.body.data).toEqual([{ eventId, dataErased: true, dataErasedAt: expect.any(String), cancelledDeliveries: 1 }]);
  expect((await get(`/v1/events/${eventId}`)).body.dataErased).toBe(true);

  const none = await postern.api('DELETE', '/v1/events/data?idempotencyKey=never-used', { key: apiKey });
  expect(none.status).toBe(404);
  expect(none.body.error.code).toBe('not_found');
  const missing = await postern.api('DELETE', '/v1/events/data', { key: apiKey });
  expect(missing.status).toBe(400);
  expect(missing.body.error.message).toMatch(/^idempotencyKey: /);
});

test("an unknown or another org's event is 404; a read-only key is 403", async () => {
  expect((await postern.api('DELETE', '/v1/events/evt_01KB2Z3R8Q5T7V9X1Y3Z5A7C9E/data', { key: apiKey })).status).toBe(404);
  const { eventId } = await sentEvent();
  const other = await postern.createOrg('other');
  const theirs = await postern.api('DELETE', `/v1/events/${eventId}/data`, { key: other.apiKey });
  expect(theirs.status).toBe(404);
  const reader = await postern.api('POST', '/v1/api-keys', { key: apiKey, body: { name: 'reader', scopes: ['webhooks:read'] } });
  const refused = await postern.api('DELETE', `/v1/events/${eventId}/data`, { key: reader.body.apiKey });
  expect(refused.status).toBe(403);
  expect(refused.body.error.code).toBe('insufficient_scope');
  expect((await get(`/v1/events/${eventId}`)).body.dataErased).toBe(false);
});

test('while an attempt is in flight: 409 in_flight with Retry-After, nothing erased; once it ends, erased', async () => {
  let release: (() => void) | undefined;
  const slow = await startReceiver((_req, _n, res: ServerResponse) => {
    release = () => res.writeHead(200).end('ok');
    return 'handled';
  });
  try {
    const ep = await postern.createEndpoint(apiKey, { url: slow.url, eventTypes: ['erase.slow'] });
    const r = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'erase.slow', data: { ssn: SECRET_DATA } } });
    const deliveryId = r.body.deliveries[0].id as string;
    await slow.waitForRequests(1);
    const refused = await postern.api('DELETE', `/v1/events/${r.body.id}/data`, { key: apiKey });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('in_flight');
    expect(refused.headers.get('retry-after')).toBe('1');
    expect((await get(`/v1/events/${r.body.id}`)).body.dataErased).toBe(false);
    release!();
    await waitUntil('the attempt to finish', async () => (await get(`/v1/deliveries/${deliveryId}`)).body.status === 'succeeded');
    const erased = await postern.api('DELETE', `/v1/events/${r.body.id}/data`, { key: apiKey });
    expect(erased.status).toBe(200);
    expect(erased.body.cancelledDeliveries).toBe(0);
    expect(ep.id).toMatch(/^ep_/);
  } finally {
    await slow.close();
  }
});

test('a request a transformation sent keeps its method, URL and headers in the log, but not its body', async () => {
  const TRANSFORMED_SECRET = 'passport-X1234567';
  const endpoint = await postern.createEndpoint(apiKey, {
    url: ok.url,
    eventTypes: ['erase.transformed'],
    transformation: { code: 'function handler(w) { w.payload = { copy: w.payload, pad: "x".repeat(200) }; return w; }', enabled: true },
  });
  const r = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'erase.transformed', data: { ssn: TRANSFORMED_SECRET } } });
  expect(r.status).toBe(202);
  const deliveryId = r.body.deliveries[0].id as string;
  await waitUntil('the transformed delivery succeeded', async () => (await get(`/v1/deliveries/${deliveryId}`)).body.status === 'succeeded');
  const before = (await get(`/v1/deliveries/${deliveryId}`)).body.attempts[0].transformation;
  expect(before.request.body).toContain(TRANSFORMED_SECRET);

  expect((await postern.api('DELETE', `/v1/events/${r.body.id}/data`, { key: apiKey })).status).toBe(200);
  const after = (await get(`/v1/deliveries/${deliveryId}`)).body.attempts[0];
  expect(after.transformation).toMatchObject({ version: before.version, request: { method: before.request.method, url: before.request.url, body: '' } });
  expect(after.startedAt).toBe((await get(`/v1/deliveries/${deliveryId}`)).body.attempts[0].startedAt);
  expect(JSON.stringify((await get(`/v1/deliveries/${deliveryId}`)).body)).not.toContain(TRANSFORMED_SECRET);
  const leftover = (await everythingStored()).split('\n').filter((line) => line.includes(TRANSFORMED_SECRET));
  expect(leftover.map((l) => l.slice(0, 400))).toEqual([]);
  expect(endpoint.id).toMatch(/^ep_/);
});

import { Webhook } from 'standardwebhooks';
import { TRANSFORMATION_TEMPLATES } from '@postern/shared';
import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Transformations end to end: real sandboxes in the sender, real receivers. The request the code
 * shapes is what arrives, signed over the bytes sent with Postern's headers intact; a failing or
 * hostile transformation ends its attempt `transformation_failed:<reason>` with nothing sent, and
 * the sender goes on delivering to other endpoints.
 */

let postern: TestPostern;
let receiver: TestReceiver;
let apiKey: string;

beforeAll(async () => {
  postern = await startPostern({ transformTimeoutMs: 300 });
  receiver = await startReceiver();
  ({ apiKey } = await postern.createOrg('transformations'));
});
afterAll(async () => {
  await postern.close();
  await receiver.close();
});

const template = (id: string) => TRANSFORMATION_TEMPLATES.find((t) => t.id === id)!;

/**
 * Whether the request's `webhook-signature` signs its body as received. `standardwebhooks`'s
 * `verify` also parses the body as JSON, so a form body is checked with its `sign` instead.
 */
function signedOverBody(secret: string, got: { body: string; headers: Record<string, unknown> }): boolean {
  const id = String(got.headers['webhook-id']);
  const timestamp = new Date(Number(got.headers['webhook-timestamp']) * 1000);
  const expected = new Webhook(secret).sign(id, timestamp, got.body);
  return String(got.headers['webhook-signature']).split(' ').includes(expected);
}

async function post(type: string, data: unknown): Promise<{ id: string; deliveries: { id: string; endpointId: string }[] }> {
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type, data } });
  expect(posted.status).toBe(202);
  return posted.body;
}

async function finished(deliveryId: string): Promise<any> {
  return waitUntil(`delivery ${deliveryId} to finish`, async () => {
    const got = await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey });
    return ['succeeded', 'failed', 'cancelled'].includes(got.body.status) ? got.body : undefined;
  });
}

async function deliverTo(endpointId: string, type: string, data: unknown): Promise<any> {
  const event = await post(type, data);
  return finished(event.deliveries.find((d) => d.endpointId === endpointId)!.id);
}

test('the Slack template: what arrives is Slack\'s JSON, signed over those bytes, webhook-* headers intact; the log keeps version and request', async () => {
  const endpoint = await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: ['invoice.paid'], transformation: { code: template('slack').code } });
  expect(endpoint.transformation).toMatchObject({ enabled: true, version: 1 });
  const before = receiver.requests.length;
  const delivery = await deliverTo(endpoint.id, 'invoice.paid', template('slack').sample.payload);
  expect(delivery.status).toBe('succeeded');
  const got = receiver.requests[before]!;
  const body = JSON.parse(got.body);
  expect(body.text).toBe('invoice.paid for Ada Lovelace (42.00 EUR)');
  expect(body.blocks[0].type).toBe('section');
  expect(got.headers['content-type']).toBe('application/json');
  expect(got.headers['webhook-id']).toBe(delivery.eventId);
  expect(got.headers['webhook-delivery-id']).toBe(delivery.id);
  expect(got.headers['webhook-attempt']).toBe('1');
  // The reference verifier accepts the transformed body with Postern's signature.
  expect(() => new Webhook(endpoint.secret).verify(got.body, got.headers as Record<string, string>)).not.toThrow();
  const [attempt] = delivery.attempts;
  expect(attempt.transformation).toEqual({ version: 1, request: { method: 'POST', url: receiver.url, contentType: 'application/json', headers: {}, body: got.body, bodyTruncated: false } });
  expect(attempt.requestHeaders['webhook-signature']).toBe(got.headers['webhook-signature']);
});

test('method, headers, URL and a form body as the handler sets them; the version goes up with the code, not with the switch', async () => {
  const other = await startReceiver(() => 200, '/legacy');
  try {
    const code = `function handler(w) {
  w.method = 'PUT';
  w.url = ${JSON.stringify(other.url)} + '?kind=' + w.eventType;
  w.headers['X-Kind'] = w.eventType;
  w.headers['Authorization'] = 'Token abc';
  w.body = 'amount=' + w.payload.amount + '&who=' + encodeURIComponent('Ada L');
  w.contentType = 'application/x-www-form-urlencoded';
  return w;
}`;
    const endpoint = await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: ['order.made'], transformation: { code } });
    const delivery = await deliverTo(endpoint.id, 'order.made', { amount: 7 });
    expect(delivery.status).toBe('succeeded');
    const got = other.requests.at(-1)!;
    expect(got.method).toBe('PUT');
    expect(got.path).toBe('/legacy?kind=order.made');
    expect(got.headers['x-kind']).toBe('order.made');
    expect(got.headers.authorization).toBe('Token abc');
    expect(got.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(got.body))).toEqual({ amount: '7', who: 'Ada L' });
    expect(signedOverBody(endpoint.secret, got)).toBe(true);
    expect(signedOverBody(endpoint.secret, { ...got, body: `${got.body}&x=1` })).toBe(false);
    expect(delivery.attempts[0].requestHeaders).toMatchObject({ 'x-kind': 'order.made', 'content-type': 'application/x-www-form-urlencoded', 'webhook-id': delivery.eventId });

    const off = await postern.api('PATCH', `/v1/endpoints/${endpoint.id}`, { key: apiKey, body: { transformation: { code, enabled: false } } });
    expect(off.body.transformation).toMatchObject({ enabled: false, version: 1 });
    const plain = await deliverTo(endpoint.id, 'order.made', { amount: 8 });
    expect(plain.attempts[0].transformation).toBeUndefined();
    expect(JSON.parse(receiver.requests.at(-1)!.body)).toMatchObject({ type: 'order.made', data: { amount: 8 } });
    const changed = await postern.api('PATCH', `/v1/endpoints/${endpoint.id}`, { key: apiKey, body: { transformation: { code: 'function handler(w) { return w; }', enabled: true } } });
    expect(changed.body.transformation).toMatchObject({ enabled: true, version: 2 });
    const removed = await postern.api('PATCH', `/v1/endpoints/${endpoint.id}`, { key: apiKey, body: { transformation: null } });
    expect(removed.body.transformation).toBeNull();
  } finally {
    await other.close();
  }
});

test('cancel: true ends the delivery cancelled with transformation:cancel; nothing is sent', async () => {
  const endpoint = await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: ['invoice.small'], transformation: { code: template('drop-events').code } });
  const before = receiver.requests.length;
  const delivery = await deliverTo(endpoint.id, 'invoice.small', { amount: 50 });
  expect(delivery).toMatchObject({ status: 'cancelled', cancelReason: 'transformation:cancel' });
  expect(delivery.attempts[0].transformation).toEqual({ version: 1, request: null });
  expect(receiver.requests.length).toBe(before);
});

describe('a failing or hostile transformation: transformation_failed, nothing sent, not held against the endpoint', () => {
  test.each([
    ['a throw', 'function handler(w) { throw new Error("no"); }', 'error', 'failed'],
    ['a bad shape', 'function handler(w) { return 42; }', 'bad_result', 'failed'],
    ['a 10 MB string', 'function handler(w) { w.body = "x".repeat(10 * 1024 * 1024); return w; }', 'bad_result|timeout|memory', 'failed'],
    ['a webhook-* header', 'function handler(w) { w.headers["webhook-id"] = "forged"; return w; }', 'bad_result', 'failed'],
    ['the metadata address', 'function handler(w) { w.url = "http://169.254.169.254/latest/meta-data/"; return w; }', 'unsafe_url', 'failed'],
    ['globalThis.process / require', 'function handler(w) { return globalThis.process.env; }', 'error', 'failed'],
    ['while(true)', 'function handler(w) { while (true) {} }', 'timeout', 'failed'],
    ['allocating 1 GB', 'function handler(w) { const a = []; for (let i = 0; i < 1024; i++) a.push("x".repeat(1024 * 1024) + i); return w; }', 'memory|timeout', 'failed'],
  ])('%s → transformation_failed:%s', async (_name, code, reasons, status) => {
    const endpoint = await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: ['hostile.try'], policy: fastPolicy(2), transformation: { code } });
    const before = receiver.requests.length;
    const delivery = await deliverTo(endpoint.id, 'hostile.try', { n: 1 });
    expect(delivery.status).toBe(status);
    const errors = delivery.attempts.map((a: any) => a.error);
    for (const error of errors) expect(reasons.split('|').map((r) => `transformation_failed:${r}`)).toContain(error);
    // timeout and memory are retried on the schedule (2 attempts here); the rest fail at once.
    expect(delivery.attempts).toHaveLength(errors[0].endsWith(':timeout') || errors[0].endsWith(':memory') ? 2 : 1);
    for (const a of delivery.attempts) expect(a).toMatchObject({ transformation: { version: 1, request: null }, requestHeaders: null });
    expect(receiver.requests.length).toBe(before);
    const after = await postern.api('GET', `/v1/endpoints/${endpoint.id}`, { key: apiKey });
    expect(after.body).toMatchObject({ status: 'active', consecutiveFailures: 0, consecutiveFailedAttempts: 0, lastFailureAt: null });
    await postern.api('DELETE', `/v1/endpoints/${endpoint.id}`, { key: apiKey });
  });
});

test('a while(true) storm of 50 deliveries: another endpoint\'s deliveries all arrive while the storm is still running', async () => {
  const plain = await startReceiver();
  try {
    const stormy = await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: ['storm.spin'], policy: fastPolicy(1), transformation: { code: 'function handler(w) { while (true) {} }' } });
    const steady = await postern.createEndpoint(apiKey, { url: plain.url, eventTypes: ['steady.tick'] });
    const storm = await Promise.all(Array.from({ length: 50 }, (_, i) => post('storm.spin', { i })));
    const stormIds = storm.map((e) => e.deliveries.find((d) => d.endpointId === stormy.id)!.id);
    const ticks = await Promise.all(Array.from({ length: 10 }, (_, i) => post('steady.tick', { i })));
    await plain.waitForRequests(10, 20_000);
    // All ten arrived, and when the last did the storm had not yet been worked through.
    const stormDone = await Promise.all(stormIds.map((id) => postern.api('GET', `/v1/deliveries/${id}`, { key: apiKey }).then((r) => r.body.status)));
    expect(stormDone.filter((s) => s === 'pending' || s === 'in_flight').length).toBeGreaterThan(0);
    for (const tick of ticks) expect((await finished(tick.deliveries[0]!.id)).status).toBe('succeeded');
    const failed = await Promise.all(stormIds.map(finished));
    for (const d of failed) expect(d).toMatchObject({ status: 'failed', lastError: 'transformation_failed:timeout' });
    // The sender is healthy after it: a plain delivery still goes through.
    expect((await deliverTo(steady.id, 'steady.tick', { after: true })).status).toBe('succeeded');
  } finally {
    await plain.close();
  }
}, 120_000);

test('a redelivery runs the endpoint\'s current version', async () => {
  const endpoint = await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: ['v.check'], transformation: { code: 'function handler(w) { w.payload = "one"; return w; }' } });
  const first = await deliverTo(endpoint.id, 'v.check', {});
  expect(receiver.requests.at(-1)!.body).toBe('"one"');
  await postern.api('PATCH', `/v1/endpoints/${endpoint.id}`, { key: apiKey, body: { transformation: { code: 'function handler(w) { w.payload = "two"; return w; }' } } });
  const again = await postern.api('POST', `/v1/deliveries/${first.id}/redeliver`, { key: apiKey });
  expect(again.status).toBe(202);
  const redelivered = await finished(again.body.delivery.id);
  expect(receiver.requests.at(-1)!.body).toBe('"two"');
  expect(redelivered.attempts[0].transformation.version).toBe(2);
});

test('a transformation removed and added again goes on from the highest version: in the log, one version is one code', async () => {
  const code = (payload: string) => `function handler(w) { w.payload = ${JSON.stringify(payload)}; return w; }`;
  const endpoint = await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: ['v.again'], transformation: { code: code('first') } });
  expect(endpoint.transformation.version).toBe(1);
  const first = await deliverTo(endpoint.id, 'v.again', {});
  expect(receiver.requests.at(-1)!.body).toBe('"first"');

  const removed = await postern.api('PATCH', `/v1/endpoints/${endpoint.id}`, { key: apiKey, body: { transformation: null } });
  expect(removed.body.transformation).toBeNull();
  const plain = await deliverTo(endpoint.id, 'v.again', { n: 1 });
  expect(plain.attempts[0].transformation).toBeUndefined();

  const added = await postern.api('PATCH', `/v1/endpoints/${endpoint.id}`, { key: apiKey, body: { transformation: { code: code('second') } } });
  expect(added.status).toBe(200);
  expect(added.body.transformation).toMatchObject({ code: code('second'), version: 2 });
  const second = await deliverTo(endpoint.id, 'v.again', {});
  // The new code runs, not a copy compiled for the old one under the same version.
  expect(receiver.requests.at(-1)!.body).toBe('"second"');
  expect([first.attempts[0].transformation.version, second.attempts[0].transformation.version]).toEqual([1, 2]);

  // Removed and added again once more, with the first code: still a new version.
  await postern.api('PATCH', `/v1/endpoints/${endpoint.id}`, { key: apiKey, body: { transformation: null } });
  const third = await postern.api('PATCH', `/v1/endpoints/${endpoint.id}`, { key: apiKey, body: { transformation: { code: code('first') } } });
  expect(third.body.transformation.version).toBe(3);
  expect((await postern.api('GET', `/v1/endpoints/${endpoint.id}`, { key: apiKey })).body.transformation.version).toBe(3);
});

describe('the API', () => {
  test('bad code is a 400: over 64 KiB, a syntax error naming its line, no handler', async () => {
    const big = await postern.api('POST', '/v1/endpoints', { key: apiKey, body: { url: receiver.url, transformation: { code: `function handler(w) { return w; }\n//${'x'.repeat(64 * 1024)}` } } });
    expect(big.status).toBe(400);
    expect(big.body.error.code).toBe('transformation_too_large');
    const syntax = await postern.api('POST', '/v1/endpoints', { key: apiKey, body: { url: receiver.url, transformation: { code: 'function handler(w) {\n  w.payload = ;\n  return w;\n}' } } });
    expect(syntax.status).toBe(400);
    expect(syntax.body.error).toMatchObject({ code: 'transformation_syntax_error', line: 2 });
    expect(syntax.body.error.message).toContain('line 2');
    const missing = await postern.api('POST', '/v1/endpoints', { key: apiKey, body: { url: receiver.url, transformation: { code: 'function handle(w) { return w; }' } } });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('transformation_handler_missing');
    const shape = await postern.api('POST', '/v1/endpoints', { key: apiKey, body: { url: receiver.url, transformation: 'function handler(w) {}' } });
    expect(shape.status).toBe(400);
    expect(shape.body.error.code).toBe('invalid_request');
  });

  test('POST /v1/transformations/test: the request that would be sent, logs and time; a runtime error with its line; a stored event', async () => {
    const before = receiver.requests.length;
    const ok = await postern.api('POST', '/v1/transformations/test', { key: apiKey, body: { code: template('slack').code.replace('function handler(webhook) {', 'function handler(webhook) {\n  console.log("event", webhook.eventType);'), eventType: 'invoice.paid', payload: template('slack').sample.payload } });
    expect(ok.status).toBe(200);
    expect(ok.body.error).toBeNull();
    expect(ok.body.result).toMatchObject({ cancel: false, method: 'POST', headers: { 'content-type': 'application/json' } });
    expect(JSON.parse(ok.body.result.body).text).toBe('invoice.paid for Ada Lovelace (42.00 EUR)');
    expect(ok.body.logs).toEqual(['event invoice.paid']);
    expect(ok.body.durationMs).toBeGreaterThanOrEqual(0);
    const thrown = await postern.api('POST', '/v1/transformations/test', { key: apiKey, body: { code: 'function handler(w) {\n  return w.payload.missing.deeper;\n}', eventType: 'a.b', payload: {} } });
    expect(thrown.status).toBe(200);
    expect(thrown.body).toMatchObject({ result: null, error: { code: 'transformation_failed:error', line: 2 } });
    const event = await post('stored.one', { amount: 12 });
    const stored = await postern.api('POST', '/v1/transformations/test', { key: apiKey, body: { code: template('pick-fields').code, eventId: event.id } });
    expect(JSON.parse(stored.body.result.body)).toEqual({ type: 'stored.one', id: event.id, data: { amount: 12 } });
    const syntax = await postern.api('POST', '/v1/transformations/test', { key: apiKey, body: { code: 'function handler(w) {', eventType: 'a.b', payload: {} } });
    expect(syntax.status).toBe(400);
    expect(syntax.body.error).toMatchObject({ code: 'transformation_syntax_error', line: 1 });
    const unknown = await postern.api('POST', '/v1/transformations/test', { key: apiKey, body: { code: 'function handler(w) { return w; }', eventId: 'evt_0000000000000000000000' } });
    expect(unknown.status).toBe(404);
    const erasedEvent = await post('stored.erased', { amount: 13 });
    expect((await postern.api('DELETE', `/v1/events/${erasedEvent.id}/data`, { key: apiKey })).status).toBe(200);
    const erased = await postern.api('POST', '/v1/transformations/test', { key: apiKey, body: { code: 'function handler(w) { return w; }', eventId: erasedEvent.id } });
    expect([erased.status, erased.body.error.code]).toEqual([409, 'data_erased']);
    expect(receiver.requests.length).toBe(before);
  });

  test('GET /v1/transformations/templates lists every template with a description and a sample', async () => {
    const got = await postern.api('GET', '/v1/transformations/templates', { key: apiKey });
    expect(got.status).toBe(200);
    expect(got.body.data.map((t: any) => t.id)).toEqual(['slack', 'discord', 'teams-adaptive-card', 'google-chat', 'form-encoded', 'pick-fields', 'drop-events']);
    for (const t of got.body.data) expect(t).toMatchObject({ description: expect.any(String), code: expect.stringContaining('function handler'), sample: { eventType: expect.any(String) } });
  });
});

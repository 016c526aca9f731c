import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * A producer that retries `POST /v1/events` with the same idempotency key gets the first answer
 * back, and the endpoint receives the event once.
 */

let postern: TestPostern;
let receiver: TestReceiver;
let otherReceiver: TestReceiver;
let key: string;
let otherKey: string;
let endpointId: string;

beforeAll(async () => {
  postern = await startPostern();
  receiver = await startReceiver();
  otherReceiver = await startReceiver();
  key = (await postern.createOrg('producer')).apiKey;
  otherKey = (await postern.createOrg('other-producer')).apiKey;
  endpointId = (await postern.createEndpoint(key, { url: receiver.url, policy: fastPolicy(3, 20) })).id;
  await postern.createEndpoint(otherKey, { url: otherReceiver.url, policy: fastPolicy(3, 20) });
});
afterAll(async () => {
  await postern.close();
  await receiver.close();
  await otherReceiver.close();
});

const postEvent = (apiKey: string, body: unknown, headers?: Record<string, string>) => postern.api('POST', '/v1/events', { key: apiKey, body, headers });

async function succeeded(apiKey: string, deliveryId: string): Promise<any> {
  return waitUntil(`delivery ${deliveryId} succeeded`, async () => {
    const r = await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey });
    return r.body.status === 'succeeded' ? r.body : undefined;
  });
}

const webhookIds = (r: TestReceiver) => r.requests.map((q) => q.headers['webhook-id']);

/**
 * Posts an unrelated event to the same endpoint and waits until it has been delivered: any
 * duplicate of an earlier event queued before it has had its chance to arrive by then.
 */
async function flushWithLaterEvent(apiKey: string, r: TestReceiver): Promise<string> {
  const later = await postEvent(apiKey, { type: 'flush.marker', data: { at: Date.now() } });
  expect(later.status).toBe(202);
  await waitUntil('the later event at the receiver', () => webhookIds(r).includes(later.body.id));
  await succeeded(apiKey, later.body.deliveries[0].id);
  return later.body.id as string;
}

test('the same idempotencyKey twice → the same event and deliveries, one request at the receiver', async () => {
  const body = { type: 'invoice.paid', data: { invoice: 'in_idem_1' }, idempotencyKey: 'order-1-paid' };
  const first = await postEvent(key, body);
  expect(first.status).toBe(202);
  expect(first.headers.get('idempotent-replayed')).toBeNull();
  expect(first.body.deliveries).toEqual([{ id: expect.stringMatching(/^dlv_/), endpointId }]);

  const second = await postEvent(key, body);
  expect(second.status).toBe(202);
  expect(second.body).toEqual(first.body);
  expect(second.headers.get('idempotent-replayed')).toBe('true');

  await succeeded(key, first.body.deliveries[0].id);
  // A retry after the delivery finished (its queue job is gone by now) must not send it again.
  const third = await postEvent(key, body);
  expect(third.status).toBe(202);
  expect(third.body).toEqual(first.body);

  const laterId = await flushWithLaterEvent(key, receiver);
  expect(webhookIds(receiver)).toEqual([first.body.id, laterId]);
  const delivery = await postern.api('GET', `/v1/deliveries/${first.body.deliveries[0].id}`, { key });
  expect(delivery.body).toMatchObject({ status: 'succeeded', attemptCount: 1 });
  const event = await postern.api('GET', `/v1/events/${first.body.id}`, { key });
  expect(event.body).toMatchObject({ idempotencyKey: 'order-1-paid', deliveryIds: [first.body.deliveries[0].id] });
});

test('the Idempotency-Key header works the same way', async () => {
  const sentBefore = receiver.requests.length;
  const body = { type: 'invoice.paid', data: { invoice: 'in_idem_2' } };
  const first = await postEvent(key, body, { 'Idempotency-Key': 'order-2-paid' });
  const second = await postEvent(key, body, { 'Idempotency-Key': 'order-2-paid' });
  expect([first.status, second.status]).toEqual([202, 202]);
  expect(second.body).toEqual(first.body);
  expect(second.headers.get('idempotent-replayed')).toBe('true');

  // Header and body field name the same key space.
  const viaBody = await postEvent(key, { ...body, idempotencyKey: 'order-2-paid' });
  expect(viaBody.status).toBe(202);
  expect(viaBody.body).toEqual(first.body);

  await succeeded(key, first.body.deliveries[0].id);
  const laterId = await flushWithLaterEvent(key, receiver);
  expect(webhookIds(receiver).slice(sentBefore)).toEqual([first.body.id, laterId]);
});

test('five concurrent posts with one key → one event, one request', async () => {
  const sentBefore = receiver.requests.length;
  const body = { type: 'invoice.paid', data: { invoice: 'in_idem_race' }, idempotencyKey: 'order-race-paid' };
  const answers = await Promise.all(Array.from({ length: 5 }, () => postEvent(key, body)));
  expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202, 202]);
  expect(new Set(answers.map((a) => JSON.stringify(a.body))).size).toBe(1);
  expect(answers.filter((a) => a.headers.get('idempotent-replayed') === null)).toHaveLength(1);

  await succeeded(key, answers[0]!.body.deliveries[0].id);
  const laterId = await flushWithLaterEvent(key, receiver);
  expect(webhookIds(receiver).slice(sentBefore)).toEqual([answers[0]!.body.id, laterId]);
});

test('without a key, the same body twice is two events', async () => {
  const body = { type: 'invoice.paid', data: { invoice: 'in_no_key' } };
  const a = await postEvent(key, body);
  const b = await postEvent(key, body);
  expect([a.status, b.status]).toEqual([202, 202]);
  expect(a.body.id).not.toBe(b.body.id);
  await waitUntil('both events at the receiver', () => webhookIds(receiver).includes(a.body.id) && webhookIds(receiver).includes(b.body.id));
});

test('the same key with different data or type → 409 idempotency_key_reused, nothing new stored', async () => {
  const first = await postEvent(key, { type: 'invoice.paid', data: { invoice: 'in_idem_3' }, idempotencyKey: 'order-3-paid' });
  expect(first.status).toBe(202);

  for (const conflicting of [
    { type: 'invoice.paid', data: { invoice: 'in_idem_3', amount: 1 }, idempotencyKey: 'order-3-paid' },
    { type: 'invoice.voided', data: { invoice: 'in_idem_3' }, idempotencyKey: 'order-3-paid' },
  ]) {
    const res = await postEvent(key, conflicting);
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ error: { code: 'idempotency_key_reused', message: expect.stringContaining('idempotencyKey') } });
  }
  // The header conflicts the same way.
  const viaHeader = await postEvent(key, { type: 'invoice.paid', data: { other: true } }, { 'idempotency-key': 'order-3-paid' });
  expect(viaHeader.status).toBe(409);
  expect(viaHeader.body.error.code).toBe('idempotency_key_reused');

  // The original still replays.
  const again = await postEvent(key, { type: 'invoice.paid', data: { invoice: 'in_idem_3' }, idempotencyKey: 'order-3-paid' });
  expect(again.status).toBe(202);
  expect(again.body).toEqual(first.body);

  await succeeded(key, first.body.deliveries[0].id);
  const laterId = await flushWithLaterEvent(key, receiver);
  const log = await postern.api('GET', `/v1/endpoints/${endpointId}/deliveries?limit=2`, { key });
  expect(log.body.data.map((d: { eventId: string }) => d.eventId)).toEqual([laterId, first.body.id]);
  const received = receiver.requests.map((r) => JSON.parse(r.body) as { type: string; data: unknown });
  expect(received.filter((r) => r.type === 'invoice.voided')).toEqual([]);
  expect(received.filter((r) => JSON.stringify(r.data).includes('in_idem_3'))).toHaveLength(1);
});

test('two orgs may use the same key independently', async () => {
  const sharedKey = 'order-4-paid';
  const mine = await postEvent(key, { type: 'invoice.paid', data: { org: 'mine' }, idempotencyKey: sharedKey });
  const theirs = await postEvent(otherKey, { type: 'invoice.paid', data: { org: 'theirs' }, idempotencyKey: sharedKey });
  expect([mine.status, theirs.status]).toEqual([202, 202]);
  expect(theirs.body.id).not.toBe(mine.body.id);
  expect(theirs.headers.get('idempotent-replayed')).toBeNull();

  // Each org's replay returns its own event.
  const mineAgain = await postEvent(key, { type: 'invoice.paid', data: { org: 'mine' }, idempotencyKey: sharedKey });
  const theirsAgain = await postEvent(otherKey, { type: 'invoice.paid', data: { org: 'theirs' }, idempotencyKey: sharedKey });
  expect(mineAgain.body).toEqual(mine.body);
  expect(theirsAgain.body).toEqual(theirs.body);

  const theirRequests = await otherReceiver.waitForRequests(1);
  expect(JSON.parse(theirRequests[0]!.body)).toMatchObject({ id: theirs.body.id, data: { org: 'theirs' } });
  await waitUntil('my event at my receiver', () => webhookIds(receiver).includes(mine.body.id));
  const mineSeen = receiver.requests.filter((r) => r.headers['webhook-id'] === mine.body.id);
  expect(JSON.parse(mineSeen[0]!.body).data).toEqual({ org: 'mine' });

  // Neither org can read the other's event.
  expect((await postern.api('GET', `/v1/events/${theirs.body.id}`, { key })).status).toBe(404);
});

test("a repeat is compared on type, orderingKey and data's JSON text byte for byte: the body's field order does not matter, data's spacing and key order do", async () => {
  const raw = (text: string) => postern.api('POST', '/v1/events', { key, rawBody: text, headers: { 'content-type': 'application/json' } });
  const first = await raw('{"type":"invoice.bytes","data":{"a":1,"b":2},"idempotencyKey":"bytes-1"}');
  expect(first.status).toBe(202);
  const reordered = await raw('{"idempotencyKey":"bytes-1", "data":{"a":1,"b":2},  "type":"invoice.bytes"}');
  expect([reordered.status, reordered.body]).toEqual([202, first.body]);
  for (const data of ['{"a": 1,"b":2}', '{"b":2,"a":1}', '{"a":1.0,"b":2}']) {
    const res = await raw(`{"type":"invoice.bytes","data":${data},"idempotencyKey":"bytes-1"}`);
    expect([data, res.status, res.body.error?.code]).toEqual([data, 409, 'idempotency_key_reused']);
  }
});

test('a key given twice in the body: the last one wins, at every level, and that is what is stored and sent', async () => {
  const res = await postern.api('POST', '/v1/events', { key, rawBody: '{"type":"invoice.first","data":{"v":1},"type":"invoice.dup","data":{"v":2, "w":{"x":1,"x":3}}}', headers: { 'content-type': 'application/json' } });
  expect(res.status).toBe(202);
  const event = await postern.api('GET', `/v1/events/${res.body.id}`, { key });
  expect(event.body.type).toBe('invoice.dup');
  expect(event.body.data).toEqual({ v: 2, w: { x: 3 } });
  expect(event.body.envelope).toContain('"data":{"v":2, "w":{"x":1,"x":3}}');
});

import { startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Issue 11 item 4: action routes take `Idempotency-Key`. Twenty concurrent redeliver calls with
 * one key create exactly one new delivery and all get the same answer; the same key with a
 * different request is 409; without a key every call acts as before. Keys are per org and route.
 */

let postern: TestPostern;
let receiver: TestReceiver;
let apiKey: string;
let endpointId: string;

beforeAll(async () => {
  postern = await startPostern();
  receiver = await startReceiver(() => 200);
  apiKey = (await postern.createOrg()).apiKey;
  endpointId = (await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: ['idem.action'] })).id;
});

afterAll(async () => {
  await postern.close();
  await receiver.close();
});

/** Sends one event and waits until its delivery has succeeded; returns the delivery id. */
async function finishedDelivery(): Promise<string> {
  const r = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'idem.action', data: { n: Math.random() } } });
  expect(r.status).toBe(202);
  const id = r.body.deliveries[0].id as string;
  await waitUntil('the delivery to succeed', async () => (await postern.api('GET', `/v1/deliveries/${id}`, { key: apiKey })).body.status === 'succeeded');
  return id;
}

/** Ids of the endpoint's deliveries that are redeliveries of `originalId`. */
async function redeliveriesOf(originalId: string): Promise<string[]> {
  const r = await postern.api('GET', `/v1/endpoints/${endpointId}/deliveries?limit=100`, { key: apiKey });
  return (r.body.data as any[]).filter((d) => d.redeliveredFromId === originalId).map((d) => d.id as string);
}

const redeliver = (id: string, headers: Record<string, string> = {}, body?: unknown) =>
  postern.api('POST', `/v1/deliveries/${id}/redeliver`, { key: apiKey, headers, body });

test('20 concurrent redeliver calls with one Idempotency-Key create exactly one delivery and get the same answer', async () => {
  const original = await finishedDelivery();
  const answers = await Promise.all(Array.from({ length: 20 }, () => redeliver(original, { 'idempotency-key': 'redeliver-once-1' })));
  expect(answers.map((a) => a.status)).toEqual(Array(20).fill(202));
  const ids = new Set(answers.map((a) => a.body.delivery.id as string));
  expect(ids.size).toBe(1);
  expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(19);
  expect(await redeliveriesOf(original)).toEqual([...ids]);

  // Later, the same key and request: the first answer again, still one delivery.
  const again = await redeliver(original, { 'idempotency-key': 'redeliver-once-1' });
  expect(again.status).toBe(202);
  expect(again.body).toEqual(answers[0]!.body);
  expect(await redeliveriesOf(original)).toHaveLength(1);
});

test('the same key for a different request is 409 idempotency_key_reused; nothing is created', async () => {
  const [a, b] = [await finishedDelivery(), await finishedDelivery()];
  expect((await redeliver(a, { 'idempotency-key': 'reused-key' })).status).toBe(202);
  const other = await redeliver(b, { 'idempotency-key': 'reused-key' });
  expect(other.status).toBe(409);
  expect(other.body.error.code).toBe('idempotency_key_reused');
  expect(await redeliveriesOf(b)).toEqual([]);
  // A different body on the same route and target is a different request too.
  const recover = (body: unknown) => postern.api('POST', `/v1/endpoints/${endpointId}/recover`, { key: apiKey, headers: { 'idempotency-key': 'recover-key' }, body });
  expect((await recover({ since: '2026-01-01T00:00:00Z' })).status).toBe(202);
  const changed = await recover({ since: '2026-02-01T00:00:00Z' });
  expect(changed.status).toBe(409);
  expect(changed.body.error.code).toBe('idempotency_key_reused');
});

test('without a key, every redeliver call redelivers', async () => {
  const original = await finishedDelivery();
  for (let i = 0; i < 3; i += 1) expect((await redeliver(original)).status).toBe(202);
  expect(await redeliveriesOf(original)).toHaveLength(3);
});

test('a key is scoped to its route and org: the same key on another action or by another org acts', async () => {
  const rotate = (key: string) => postern.api('POST', `/v1/endpoints/${endpointId}/rotate-secret`, { key, headers: { 'idempotency-key': 'shared-key' } });
  const first = await rotate(apiKey);
  const replay = await rotate(apiKey);
  expect(first.status).toBe(200);
  expect(replay.body.secret).toBe(first.body.secret);
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  // pause with the same key string is another route: it pauses.
  const pause = await postern.api('POST', `/v1/endpoints/${endpointId}/pause`, { key: apiKey, headers: { 'idempotency-key': 'shared-key' } });
  expect(pause.status).toBe(200);
  expect(pause.body.status).toBe('paused');
  expect(pause.headers.get('idempotent-replayed')).toBeNull();
  const resume = await postern.api('POST', `/v1/endpoints/${endpointId}/resume`, { key: apiKey, headers: { 'idempotency-key': 'shared-key' } });
  expect(resume.body.status).toBe('active');
  // Another org's key with the same string reaches its own (missing) endpoint: 404, not a replay.
  const otherOrg = (await postern.createOrg('other')).apiKey;
  expect((await rotate(otherOrg)).status).toBe(404);
});

test('an Idempotency-Key longer than 200 characters is refused with 400', async () => {
  const original = await finishedDelivery();
  const r = await redeliver(original, { 'idempotency-key': 'k'.repeat(201) });
  expect(r.status).toBe(400);
  expect(r.body.error.message).toContain('Idempotency-Key');
});

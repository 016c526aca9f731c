import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type ReceivedRequest, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Redelivery (docs/architecture.md redelivery row): a new delivery of the same event, attempt 1 again, the
 * original untouched; the 409 codes; recovery since a point in time.
 */

let postern: TestPostern;
let apiKey: string;
const receivers: TestReceiver[] = [];

const LONG_MS = 60_000;

beforeAll(async () => {
  postern = await startPostern();
  apiKey = (await postern.createOrg()).apiKey;
});
afterAll(async () => {
  await postern.close();
  for (const r of receivers) await r.close();
});

async function receiver(behaviour: Parameters<typeof startReceiver>[0]): Promise<TestReceiver> {
  const r = await startReceiver(behaviour);
  receivers.push(r);
  return r;
}

async function delivery(id: string): Promise<any> {
  const r = await postern.api('GET', `/v1/deliveries/${id}`, { key: apiKey });
  expect(r.status).toBe(200);
  return r.body;
}

function waitForDelivery(id: string, what: string, check: (d: any) => boolean): Promise<any> {
  return waitUntil(`delivery ${what}`, async () => {
    const d = await delivery(id);
    return check(d) ? d : undefined;
  }, 5000);
}

function redeliver(id: string) {
  return postern.api('POST', `/v1/deliveries/${id}/redeliver`, { key: apiKey });
}

/** Each test's endpoint gets its own receiver and event type, so fan-out never crosses tests. */
let typeCounter = 0;
async function endpointFor(hook: TestReceiver, policy: unknown): Promise<{ id: string; post: (data: unknown) => Promise<{ eventId: string; deliveryId: string }> }> {
  const type = `health.redelivery${++typeCounter}`;
  const endpoint = await postern.createEndpoint(apiKey, { url: hook.url, eventTypes: [type], policy });
  return {
    id: endpoint.id,
    post: async (data) => {
      const r = await postern.api('POST', '/v1/events', { key: apiKey, body: { type, data } });
      expect(r.status).toBe(202);
      expect(r.body.deliveries).toHaveLength(1);
      return { eventId: r.body.id, deliveryId: r.body.deliveries[0].id };
    },
  };
}

const header = (r: ReceivedRequest, name: string) => r.headers[name] as string;

test('redelivering a succeeded delivery twice sends the same event twice more, each as attempt 1 of a new delivery', async () => {
  const hook = await receiver((_req, n) => (n === 1 ? 500 : 200));
  const endpoint = await endpointFor(hook, fastPolicy(3, 20));
  const { eventId, deliveryId } = await endpoint.post({ n: 1 });
  const original = await waitForDelivery(deliveryId, 'succeeded', (d) => d.status === 'succeeded');
  expect(original.attemptCount).toBe(2);

  const first = await redeliver(deliveryId);
  const second = await redeliver(deliveryId);
  expect([first.status, second.status]).toEqual([202, 202]);
  const newIds = [first.body.delivery.id, second.body.delivery.id] as string[];
  expect(new Set([...newIds, deliveryId]).size).toBe(3);
  for (const r of [first, second]) {
    expect(r.body.delivery).toMatchObject({ eventId, endpointId: endpoint.id, status: 'pending', attemptCount: 0, redeliveredFromId: deliveryId });
  }

  const done = await Promise.all(newIds.map((id) => waitForDelivery(id, 'succeeded', (d) => d.status === 'succeeded')));
  expect(done.map((d) => [d.attemptCount, d.redeliveredFromId])).toEqual([[1, deliveryId], [1, deliveryId]]);

  const extra = hook.requests.slice(2);
  expect(extra).toHaveLength(2);
  expect(extra.map((r) => header(r, 'webhook-id'))).toEqual([eventId, eventId]);
  expect(extra.map((r) => header(r, 'webhook-attempt'))).toEqual(['1', '1']);
  expect(new Set(extra.map((r) => header(r, 'webhook-delivery-id')))).toEqual(new Set(newIds));
  expect(new Set(hook.requests.map((r) => r.body)).size).toBe(1);

  const after = await delivery(deliveryId);
  expect(after).toEqual(original);
});

test('409 in_flight: a delivery whose attempt is under way cannot be redelivered', async () => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const hook = await receiver(async () => {
    await released;
    return 200;
  });
  const endpoint = await endpointFor(hook, fastPolicy(3, 20));
  try {
    const { deliveryId } = await endpoint.post({ n: 2 });
    await hook.waitForRequests(1);
    expect((await delivery(deliveryId)).status).toBe('in_flight');
    const refused = await redeliver(deliveryId);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('in_flight');
  } finally {
    release();
  }
  const log = await postern.api('GET', `/v1/endpoints/${endpoint.id}/deliveries`, { key: apiKey });
  expect(log.body.data).toHaveLength(1);
});

test('409 delivery_pending: under standard, a delivery waiting for its next attempt cannot be redelivered', async () => {
  const hook = await receiver(() => 500);
  const endpoint = await endpointFor(hook, { preset: 'standard', ...fastPolicy(3, LONG_MS) });
  const { deliveryId } = await endpoint.post({ n: 3 });
  await waitForDelivery(deliveryId, 'waiting for a retry', (d) => d.status === 'pending' && d.attemptCount === 1);
  const refused = await redeliver(deliveryId);
  expect(refused.status).toBe(409);
  expect(refused.body.error.code).toBe('delivery_pending');
});

test('409 endpoint_inactive: nothing is redelivered to a paused endpoint', async () => {
  const hook = await receiver(() => 200);
  const endpoint = await endpointFor(hook, fastPolicy(3, 20));
  const { deliveryId } = await endpoint.post({ n: 4 });
  await waitForDelivery(deliveryId, 'succeeded', (d) => d.status === 'succeeded');
  expect((await postern.api('POST', `/v1/endpoints/${endpoint.id}/pause`, { key: apiKey })).status).toBe(200);
  const refused = await redeliver(deliveryId);
  expect(refused.status).toBe(409);
  expect(refused.body.error.code).toBe('endpoint_inactive');
  const bulk = await postern.api('POST', `/v1/endpoints/${endpoint.id}/redeliver-failed`, { key: apiKey });
  expect(bulk.status).toBe(409);
  expect(bulk.body.error.code).toBe('endpoint_inactive');
});

test('409 redelivery_not_offered: custral has no redelivery', async () => {
  const hook = await receiver(() => 200);
  const endpoint = await endpointFor(hook, 'custral');
  const { deliveryId } = await endpoint.post({ n: 5 });
  await waitForDelivery(deliveryId, 'succeeded', (d) => d.status === 'succeeded');
  const refused = await redeliver(deliveryId);
  expect(refused.status).toBe(409);
  expect(refused.body.error.code).toBe('redelivery_not_offered');
  expect(hook.requests).toHaveLength(1);
});

test('under tourical a pending delivery can be redelivered; the original keeps waiting for its own retry', async () => {
  const hook = await receiver((_req, n) => (n === 1 ? 500 : 200));
  const endpoint = await endpointFor(hook, { preset: 'tourical', schedule: { kind: 'fixed', waitsMs: Array(5).fill(LONG_MS) } });
  const { eventId, deliveryId } = await endpoint.post({ n: 6 });
  const waiting = await waitForDelivery(deliveryId, 'waiting for a retry', (d) => d.status === 'pending' && d.attemptCount === 1);

  const accepted = await redeliver(deliveryId);
  expect(accepted.status).toBe(202);
  const copy = await waitForDelivery(accepted.body.delivery.id, 'succeeded', (d) => d.status === 'succeeded');
  expect(copy).toMatchObject({ eventId, redeliveredFromId: deliveryId, attemptCount: 1 });
  expect(hook.requests.map((r) => [header(r, 'webhook-id'), header(r, 'webhook-attempt')])).toEqual([
    [eventId, '1'],
    [eventId, '1'],
  ]);
  expect(await delivery(deliveryId)).toEqual(waiting);
});

test('recover {since} redelivers only the failures since that time; a bad since is 400', async () => {
  const hook = await receiver(() => 500);
  const endpoint = await endpointFor(hook, fastPolicy(1, 20));
  const before = await endpoint.post({ n: 7 });
  const beforeFailed = await waitForDelivery(before.deliveryId, 'failed', (d) => d.status === 'failed');
  const since = new Date(Date.parse(beforeFailed.finishedAt) + 1).toISOString();
  await waitUntil('the clock past since', () => Date.now() > Date.parse(since));
  const after = await endpoint.post({ n: 8 });
  await waitForDelivery(after.deliveryId, 'failed', (d) => d.status === 'failed');

  for (const bad of [{ since: 'yesterday' }, { since: 12 }, {}]) {
    const r = await postern.api('POST', `/v1/endpoints/${endpoint.id}/recover`, { key: apiKey, body: bad });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('invalid_request');
    expect(r.body.error.message).toMatch('since' in bad ? /^since: since must be an ISO 8601 date-time/ : /^since: since is required$/);
  }

  hook.setBehaviour(() => 200);
  const recovered = await postern.api('POST', `/v1/endpoints/${endpoint.id}/recover`, { key: apiKey, body: { since } });
  expect(recovered.status).toBe(202);
  expect(recovered.body).toEqual({ count: 1, remaining: 0 });
  await hook.waitForRequests(3);
  const log = await waitUntil('the recovery succeeded', async () => {
    const r = await postern.api('GET', `/v1/endpoints/${endpoint.id}/deliveries?status=succeeded`, { key: apiKey });
    return r.body.data.length === 1 ? r.body.data : undefined;
  });
  expect(log[0]).toMatchObject({ eventId: after.eventId, redeliveredFromId: after.deliveryId });
  expect(hook.requests.map((r) => header(r, 'webhook-id'))).toEqual([before.eventId, after.eventId, after.eventId]);
});

test('bulk redelivery calls racing each other redeliver each failed delivery once between them', async () => {
  const hook = await receiver(() => 500);
  const endpoint = await endpointFor(hook, fastPolicy(1, 20));
  const posted = await Promise.all(Array.from({ length: 12 }, (_, n) => endpoint.post({ n })));
  for (const p of posted) await waitForDelivery(p.deliveryId, 'failed', (d) => d.status === 'failed');
  hook.setBehaviour(() => 200);
  // Eight calls at once, each reading the same failed deliveries before any has taken one.
  const calls = await Promise.all(Array.from({ length: 8 }, () => postern.api('POST', `/v1/endpoints/${endpoint.id}/redeliver-failed`, { key: apiKey })));
  expect(calls.map((c) => c.status)).toEqual(Array(8).fill(202));
  expect(calls.reduce((n, c) => n + (c.body.count as number), 0)).toBe(12);
  const redeliveries = await waitUntil('every redelivery succeeded', async () => {
    const r = await postern.api('GET', `/v1/endpoints/${endpoint.id}/deliveries?status=succeeded&limit=100`, { key: apiKey });
    return r.body.data.length >= 12 ? (r.body.data as { redeliveredFromId: string }[]) : undefined;
  });
  expect(redeliveries.map((d) => d.redeliveredFromId).sort()).toEqual(posted.map((p) => p.deliveryId).sort());
  const again = await postern.api('POST', `/v1/endpoints/${endpoint.id}/redeliver-failed`, { key: apiKey });
  expect(again.body).toEqual({ count: 0, remaining: 0 });
});

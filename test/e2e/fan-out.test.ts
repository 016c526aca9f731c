import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * One event fans out to every active endpoint of the org whose event-type filter matches, and each
 * delivery is retried on its own: one receiver failing does not resend to the others.
 */

let postern: TestPostern;
let key: string;
const receivers: Record<'paidOnly' | 'everything' | 'usersOnly' | 'paused' | 'otherOrg', TestReceiver> = {} as never;
const endpoints: Record<keyof typeof receivers, { id: string }> = {} as never;

beforeAll(async () => {
  postern = await startPostern();
  key = (await postern.createOrg('fan-out')).apiKey;
  const otherKey = (await postern.createOrg('other')).apiKey;
  receivers.paidOnly = await startReceiver((_req, n) => (n === 1 ? 503 : 200));
  receivers.everything = await startReceiver();
  receivers.usersOnly = await startReceiver();
  receivers.paused = await startReceiver();
  receivers.otherOrg = await startReceiver();
  const policy = fastPolicy(4, 20);
  endpoints.paidOnly = await postern.createEndpoint(key, { url: receivers.paidOnly.url, eventTypes: ['invoice.paid'], policy });
  endpoints.everything = await postern.createEndpoint(key, { url: receivers.everything.url, eventTypes: ['*'], policy });
  endpoints.usersOnly = await postern.createEndpoint(key, { url: receivers.usersOnly.url, eventTypes: ['user.created'], policy });
  // Cancels while inactive, so a paused endpoint gets no delivery at all (hold policies are tested below).
  endpoints.paused = await postern.createEndpoint(key, { url: receivers.paused.url, eventTypes: ['invoice.paid'], policy: { ...policy, onEndpointInactive: 'cancel' } });
  endpoints.otherOrg = await postern.createEndpoint(otherKey, { url: receivers.otherOrg.url, eventTypes: ['*'], policy });
  const paused = await postern.api('POST', `/v1/endpoints/${endpoints.paused.id}/pause`, { key });
  expect(paused.body.status).toBe('paused');
});
afterAll(async () => {
  await postern.close();
  await Promise.all(Object.values(receivers).map((r) => r.close()));
});

async function deliveryWhenFinished(deliveryId: string): Promise<any> {
  return waitUntil(`delivery ${deliveryId} finished`, async () => {
    const r = await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key });
    return ['succeeded', 'failed', 'cancelled'].includes(r.body.status) ? r.body : undefined;
  });
}

test('invoice.paid reaches only the active endpoints whose filter matches, each retried on its own', async () => {
  const posted = await postern.api('POST', '/v1/events', { key, body: { type: 'invoice.paid', data: { invoice: 'in_1', amount: 4200 } } });
  expect(posted.status).toBe(202);
  const eventId = posted.body.id as string;
  const byEndpoint = new Map<string, string>(posted.body.deliveries.map((d: { id: string; endpointId: string }) => [d.endpointId, d.id]));
  expect([...byEndpoint.keys()].sort()).toEqual([endpoints.paidOnly.id, endpoints.everything.id].sort());
  expect(new Set(byEndpoint.values()).size).toBe(2);

  const paidOnly = await deliveryWhenFinished(byEndpoint.get(endpoints.paidOnly.id)!);
  const everything = await deliveryWhenFinished(byEndpoint.get(endpoints.everything.id)!);

  // The failing receiver got a retry; the healthy one was sent to exactly once.
  expect(paidOnly).toMatchObject({ status: 'succeeded', attemptCount: 2, eventId, eventType: 'invoice.paid', endpointId: endpoints.paidOnly.id });
  expect(paidOnly.attempts.map((a: { number: number; responseStatus: number; error: string | null }) => [a.number, a.responseStatus, a.error])).toEqual([
    [1, 503, 'http_503'],
    [2, 200, null],
  ]);
  expect(everything).toMatchObject({ status: 'succeeded', attemptCount: 1, eventId, endpointId: endpoints.everything.id });
  expect(everything.attempts.map((a: { number: number; responseStatus: number; error: string | null }) => [a.number, a.responseStatus, a.error])).toEqual([[1, 200, null]]);

  expect(receivers.paidOnly.requests.map((r) => r.headers['webhook-attempt'])).toEqual(['1', '2']);
  expect(receivers.everything.requests.map((r) => r.headers['webhook-attempt'])).toEqual(['1']);
  for (const [name, r] of [['paidOnly', receivers.paidOnly], ['everything', receivers.everything]] as const) {
    for (const req of r.requests) {
      expect(req.headers['webhook-id']).toBe(eventId);
      expect(req.headers['webhook-delivery-id']).toBe(byEndpoint.get(endpoints[name].id));
      expect(JSON.parse(req.body)).toMatchObject({ id: eventId, type: 'invoice.paid', data: { invoice: 'in_1', amount: 4200 } });
    }
  }

  // Nothing was ever created for the non-matching, paused or other org's endpoints.
  for (const name of ['usersOnly', 'paused', 'otherOrg'] as const) {
    expect(receivers[name].requests).toHaveLength(0);
  }
  for (const name of ['usersOnly', 'paused'] as const) {
    const log = await postern.api('GET', `/v1/endpoints/${endpoints[name].id}/deliveries`, { key });
    expect(log.status).toBe(200);
    expect(log.body.data).toEqual([]);
  }
  const event = await postern.api('GET', `/v1/events/${eventId}`, { key });
  expect([...event.body.deliveryIds].sort()).toEqual([...byEndpoint.values()].sort());
});

test('user.created reaches the "*" and user.created endpoints only', async () => {
  const before = { everything: receivers.everything.requests.length, paidOnly: receivers.paidOnly.requests.length };
  const posted = await postern.api('POST', '/v1/events', { key, body: { type: 'user.created', data: { user: 'u_1' } } });
  expect(posted.status).toBe(202);
  expect(posted.body.deliveries.map((d: { endpointId: string }) => d.endpointId).sort()).toEqual([endpoints.everything.id, endpoints.usersOnly.id].sort());

  await receivers.usersOnly.waitForRequests(1);
  await receivers.everything.waitForRequests(before.everything + 1);
  for (const d of posted.body.deliveries) expect((await deliveryWhenFinished(d.id)).status).toBe('succeeded');

  expect(receivers.usersOnly.requests.map((r) => JSON.parse(r.body).type)).toEqual(['user.created']);
  expect(receivers.everything.requests.map((r) => JSON.parse(r.body).type)).toEqual(['invoice.paid', 'user.created']);
  // The later event was delivered, so the invoice.paid-only and paused endpoints would have had
  // their chance by now: they still have nothing new.
  expect(receivers.paidOnly.requests).toHaveLength(before.paidOnly);
  expect(receivers.paused.requests).toHaveLength(0);
  expect(receivers.otherOrg.requests).toHaveLength(0);
});

test('a type no filter names goes to the "*" endpoint only; with it paused, to a held delivery that sends nothing', async () => {
  const posted = await postern.api('POST', '/v1/events', { key, body: { type: 'nobody.cares', data: null } });
  expect(posted.status).toBe(202);
  expect(posted.body.deliveries.map((d: { endpointId: string }) => d.endpointId)).toEqual([endpoints.everything.id]);

  const delivered = await deliveryWhenFinished(posted.body.deliveries[0].id);
  expect(delivered.status).toBe('succeeded');

  expect((await postern.api('POST', `/v1/endpoints/${endpoints.everything.id}/pause`, { key })).status).toBe(200);
  const before = receivers.everything.requests.length;
  const heldEvent = await postern.api('POST', '/v1/events', { key, body: { type: 'nobody.cares', data: 1 } });
  expect(heldEvent.status).toBe(202);
  // The "*" endpoint's policy holds while inactive: the delivery waits, nothing is sent.
  expect(heldEvent.body.deliveries.map((d: { endpointId: string }) => d.endpointId)).toEqual([endpoints.everything.id]);
  const held = await waitUntil('delivery held', async () => {
    const r = await postern.api('GET', `/v1/deliveries/${heldEvent.body.deliveries[0].id}`, { key });
    return r.body.held ? r.body : undefined;
  });
  expect(held).toMatchObject({ status: 'pending', attemptCount: 0 });
  expect(receivers.everything.requests).toHaveLength(before);
});

test('a paused endpoint whose policy holds gets a held delivery and no request until it is resumed', async () => {
  const receiver = await startReceiver();
  try {
    const held = await postern.createEndpoint(key, { url: receiver.url, eventTypes: ['order.held'], policy: fastPolicy(3, 20) });
    expect((await postern.api('POST', `/v1/endpoints/${held.id}/pause`, { key })).status).toBe(200);
    const posted = await postern.api('POST', '/v1/events', { key, body: { type: 'order.held', data: { n: 1 } } });
    const mine = posted.body.deliveries.filter((d: { endpointId: string }) => d.endpointId === held.id);
    expect(mine).toHaveLength(1);
    const deliveryId = mine[0].id as string;
    const waiting = await waitUntil('delivery held', async () => {
      const r = await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key });
      return r.body.held ? r.body : undefined;
    });
    expect(waiting).toMatchObject({ status: 'pending', attemptCount: 0 });
    expect(receiver.requests).toHaveLength(0);

    const resumed = await postern.api('POST', `/v1/endpoints/${held.id}/resume`, { key });
    expect(resumed.body.requeued).toBe(1);
    await receiver.waitForRequests(1);
    expect((await deliveryWhenFinished(deliveryId)).status).toBe('succeeded');
  } finally {
    await receiver.close();
  }
});

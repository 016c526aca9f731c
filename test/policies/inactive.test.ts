import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type ReceiverBehaviour, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * An endpoint paused between attempts, under each `onEndpointInactive`: jitter-45h cancels the
 * delivery and keeps the reason, custral fails it (`endpoint_inactive`), and standard (like
 * tourical) holds it pending until the endpoint is resumed, then drains the held ones oldest first.
 *
 * The receiver pauses its own endpoint while answering the first request, so the pause lands
 * before the retry without any timing assumption. One attempt at a time (sender concurrency 1),
 * so arrival order is queue order.
 */

let postern: TestPostern;
let apiKey: string;
let orgId: string;
const receivers: TestReceiver[] = [];

beforeAll(async () => {
  // The reconciler runs only when a test calls it, and looks at deliveries of any age.
  postern = await startPostern({ senderConcurrency: 1, reconcileGraceMs: 0 });
  ({ apiKey, id: orgId } = await postern.createOrg());
});
afterAll(async () => {
  await postern.close();
  await Promise.all(receivers.map((r) => r.close()));
});

async function receiver(behaviour: ReceiverBehaviour): Promise<TestReceiver> {
  const r = await startReceiver(behaviour);
  receivers.push(r);
  return r;
}

async function pause(endpointId: string): Promise<void> {
  const r = await postern.api('POST', `/v1/endpoints/${endpointId}/pause`, { key: apiKey });
  expect(r.status).toBe(200);
}

async function getDelivery(deliveryId: string): Promise<any> {
  return (await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey })).body;
}

let runs = 0;

/** An endpoint whose receiver pauses it while failing the first request, and one event to it. */
async function failOnceAndPause(policy: unknown): Promise<{ endpointId: string; deliveryId: string; target: TestReceiver }> {
  let endpointId = '';
  const target = await receiver(async (_req, n) => {
    if (n === 1) await pause(endpointId);
    return 500;
  });
  const type = `inactive.probe${++runs}`;
  endpointId = (await postern.createEndpoint(apiKey, { url: target.url, eventTypes: [type], policy })).id;
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type, data: {} } });
  expect(posted.status).toBe(202);
  return { endpointId, deliveryId: posted.body.deliveries[0].id, target };
}

test("cancel (jitter-45h): the retry is cancelled with cancelReason endpoint_inactive, and resume does not replay it", async () => {
  const policy = { preset: 'jitter-45h', maxAttempts: 3, schedule: { kind: 'fixed', waitsMs: [30, 30] } };
  const { endpointId, deliveryId, target } = await failOnceAndPause(policy);

  const delivery = await waitUntil('delivery cancelled', async () => {
    const d = await getDelivery(deliveryId);
    return d.status === 'cancelled' ? d : undefined;
  });
  expect(delivery.cancelReason).toBe('endpoint_inactive');
  expect(delivery.attempts).toHaveLength(1);
  expect(target.requests).toHaveLength(1);

  const resumed = await postern.api('POST', `/v1/endpoints/${endpointId}/resume`, { key: apiKey });
  expect(resumed.body.requeued).toBe(0);
  expect((await getDelivery(deliveryId)).status).toBe('cancelled');
});

test('fail (custral): the retry ends the delivery failed with lastError endpoint_inactive', async () => {
  const policy = { preset: 'custral', maxAttempts: 3, schedule: { kind: 'fixed', waitsMs: [30, 30] } };
  const { deliveryId, target } = await failOnceAndPause(policy);

  const delivery = await waitUntil('delivery failed', async () => {
    const d = await getDelivery(deliveryId);
    return d.status === 'failed' ? d : undefined;
  });
  expect(delivery.lastError).toBe('endpoint_inactive');
  expect(delivery.cancelReason).toBeNull();
  expect(delivery.attempts.map((a: { error: string }) => a.error)).toEqual(['http_500']);
  expect(target.requests).toHaveLength(1);
});

test('hold (standard): the delivery stays pending and held; resume re-queues it and it succeeds', async () => {
  const { endpointId, deliveryId, target } = await failOnceAndPause(fastPolicy(3, 30));

  const held = await waitUntil('delivery held', async () => {
    const d = await getDelivery(deliveryId);
    return d.held ? d : undefined;
  });
  // Resume only once the held attempt's job is gone (see the reconciler test below for why).
  await waitUntil('the held attempt\'s job removed', async () => (await postern.queue.getJob(deliveryId)) === undefined);
  expect(held.status).toBe('pending');
  expect(held.nextAttemptAt).toBeNull();
  expect(held.attempts).toHaveLength(1);
  expect(target.requests).toHaveLength(1);

  target.setBehaviour(() => 200);
  const resumed = await postern.api('POST', `/v1/endpoints/${endpointId}/resume`, { key: apiKey });
  expect(resumed.status).toBe(200);
  expect(resumed.body).toMatchObject({ status: 'active', requeued: 1 });

  const delivered = await waitUntil('delivery succeeded', async () => {
    const d = await getDelivery(deliveryId);
    return d.status === 'succeeded' ? d : undefined;
  });
  expect(delivered.held).toBe(false);
  expect(delivered.attempts.map((a: { error: string | null }) => a.error)).toEqual(['http_500', null]);
  expect(target.requests.map((r) => r.headers['webhook-attempt'])).toEqual(['1', '2']);
});

test('hold (standard): three held deliveries drain oldest first on resume', async () => {
  let endpointId = '';
  let allPosted!: () => void;
  const posted = new Promise<void>((resolve) => (allPosted = resolve));
  // The first request waits until all three events exist, then pauses the endpoint and fails:
  // the first event is held before its retry, the other two before their first attempt.
  const target = await receiver(async (_req, n) => {
    if (n === 1) {
      await posted;
      await pause(endpointId);
    }
    return 500;
  });
  endpointId = (await postern.createEndpoint(apiKey, { url: target.url, eventTypes: ['held.order'], policy: fastPolicy(3, 30) })).id;

  const eventIds: string[] = [];
  const deliveryIds: string[] = [];
  for (let i = 0; i < 3; i++) {
    const r = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'held.order', data: { i } } });
    expect(r.status).toBe(202);
    eventIds.push(r.body.id);
    deliveryIds.push(r.body.deliveries[0].id);
  }
  allPosted();

  await waitUntil('three deliveries held', async () => {
    const all = await Promise.all(deliveryIds.map(getDelivery));
    return all.every((d) => d.status === 'pending' && d.held);
  });
  await waitUntil('the held attempts\' jobs removed', async () => (await Promise.all(deliveryIds.map((id) => postern.queue.getJob(id)))).every((j) => j === undefined));
  expect(target.requests.map((r) => r.headers['webhook-id'])).toEqual([eventIds[0]]);

  target.setBehaviour(() => 200);
  const resumed = await postern.api('POST', `/v1/endpoints/${endpointId}/resume`, { key: apiKey });
  expect(resumed.body.requeued).toBe(3);

  const requests = await target.waitForRequests(4);
  expect(requests.slice(1).map((r) => r.headers['webhook-id'])).toEqual(eventIds);
  // The first picks up where it left off; the other two start at attempt 1.
  expect(requests.slice(1).map((r) => r.headers['webhook-attempt'])).toEqual(['2', '1', '1']);
  await waitUntil('all three succeeded', async () => {
    const all = await Promise.all(deliveryIds.map(getDelivery));
    return all.every((d) => d.status === 'succeeded' && !d.held);
  });
});

test('hold: a held delivery whose endpoint is active again but has no job is re-queued by the reconciler', async () => {
  const { endpointId, deliveryId, target } = await failOnceAndPause(fastPolicy(3, 30));
  await waitUntil('delivery held', async () => (await getDelivery(deliveryId)).held);
  await waitUntil('the held attempt\'s job removed', async () => (await postern.queue.getJob(deliveryId)) === undefined);
  target.setBehaviour(() => 200);

  // What a resume racing the hold leaves behind: it re-queued while the held attempt's job was
  // still active, so BullMQ dropped the new job as a duplicate, and then the old one was removed.
  await postern.store.endpoints.update({ id: endpointId, orgId }, { status: 'active' }, Date.now());

  const swept = await postern.sender!.reconciler.runOnce();
  expect(swept.requeued).toBe(1);
  const delivered = await waitUntil('delivery succeeded', async () => {
    const d = await getDelivery(deliveryId);
    return d.status === 'succeeded' ? d : undefined;
  });
  expect(delivered.held).toBe(false);
  expect(target.requests.map((r) => r.headers['webhook-attempt'])).toEqual(['1', '2']);
});

test('the reconciler leaves a held delivery alone while its endpoint is still paused', async () => {
  const { deliveryId, target } = await failOnceAndPause(fastPolicy(3, 30));
  await waitUntil('delivery held', async () => (await getDelivery(deliveryId)).held);
  const swept = await postern.sender!.reconciler.runOnce();
  expect(swept.requeued).toBe(0);
  expect(await postern.queue.getJob(deliveryId)).toBeUndefined();
  expect(await getDelivery(deliveryId)).toMatchObject({ status: 'pending', held: true });
  expect(target.requests).toHaveLength(1);
});

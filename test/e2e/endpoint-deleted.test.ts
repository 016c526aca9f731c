import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/** Deleting an endpoint while a retry is pending cancels the delivery before its next attempt. */

let postern: TestPostern;
let receiver: TestReceiver;
let apiKey: string;
let orgId: string;

beforeAll(async () => {
  postern = await startPostern();
  receiver = await startReceiver(() => 500);
  ({ apiKey, id: orgId } = await postern.createOrg());
});
afterAll(async () => {
  await postern.close();
  await receiver.close();
});

test('an endpoint deleted while a retry waits gets no further request; the delivery is cancelled endpoint_deleted', async () => {
  const endpoint = await postern.createEndpoint(apiKey, { url: receiver.url, policy: fastPolicy(3, 500) });
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'invoice.paid', data: { n: 1 } } });
  expect(posted.status).toBe(202);
  const deliveryId = posted.body.deliveries[0].id as string;

  await receiver.waitForRequests(1);
  const deleted = await postern.api('DELETE', `/v1/endpoints/${endpoint.id}`, { key: apiKey });
  expect(deleted.status).toBe(204);

  const delivery = await waitUntil('delivery finished', async () => {
    const r = await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey });
    return ['succeeded', 'failed', 'cancelled'].includes(r.body.status) ? r.body : undefined;
  }, 5000);
  await waitUntil('the delivery job removed from the queue', async () => ((await postern.queue.getJob(deliveryId)) ? undefined : true), 3000);

  expect(delivery.status).toBe('cancelled');
  expect(delivery.cancelReason).toBe('endpoint_deleted');
  expect(delivery.attempts.map((a: { error: string }) => a.error)).toEqual(['http_500']);
  expect(receiver.requests).toHaveLength(1);
  const counts = await postern.queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized');
  expect(counts).toEqual({ waiting: 0, delayed: 0, active: 0, prioritized: 0 });
  expect((await postern.api('GET', `/v1/endpoints/${endpoint.id}`, { key: apiKey })).status).toBe(404);
});

test('an endpoint deleted while a retry waits an hour: the delivery is cancelled at once, not when the hour is up', async () => {
  const endpoint = await postern.createEndpoint(apiKey, { url: receiver.url, policy: fastPolicy(3, 3_600_000) });
  const before = receiver.requests.length;
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'invoice.paid', data: { n: 2 } } });
  expect(posted.status).toBe(202);
  const deliveryId = posted.body.deliveries[0].id as string;
  // The first attempt failed and the next is an hour away.
  const waiting = await waitUntil('the first attempt recorded, the retry scheduled', async () => {
    const r = await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey });
    return r.body.attempts?.length === 1 && r.body.status === 'pending' && Date.parse(r.body.nextAttemptAt) - Date.now() > 30 * 60_000 ? r.body : undefined;
  }, 10_000);
  expect(waiting.attempts[0].error).toBe('http_500');

  expect((await postern.api('DELETE', `/v1/endpoints/${endpoint.id}`, { key: apiKey })).status).toBe(204);
  const delivery = await waitUntil('the delivery cancelled', async () => {
    const r = await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey });
    return r.body.status !== 'pending' ? r.body : undefined;
  }, 15_000);
  expect(delivery.status).toBe('cancelled');
  expect(delivery.cancelReason).toBe('endpoint_deleted');
  expect(delivery.attempts.map((a: { error: string }) => a.error)).toEqual(['http_500']);
  expect(receiver.requests.length - before).toBe(1);
  await waitUntil('the delivery job removed from the queue', async () => ((await postern.queue.getJob(deliveryId)) ? undefined : true), 5000);
});

test('an endpoint deleted during an attempt: that attempt is recorded, no other follows, and the endpoint stays deleted', async () => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const holding = await startReceiver(async () => {
    await released;
    return 500;
  });
  try {
    const endpoint = await postern.createEndpoint(apiKey, { url: holding.url, policy: fastPolicy(3, 100) });
    // The endpoint of the test above is deleted; pick this one's delivery by endpoint id anyway.
    const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'invoice.paid', data: { n: 2 } } });
    expect(posted.status).toBe(202);
    const deliveryId = (posted.body.deliveries as { id: string; endpointId: string }[]).find((d) => d.endpointId === endpoint.id)!.id;

    await holding.waitForRequests(1);
    expect((await postern.api('DELETE', `/v1/endpoints/${endpoint.id}`, { key: apiKey })).status).toBe(204);
    release();

    const delivery = await waitUntil('delivery finished', async () => {
      const r = await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey });
      return ['succeeded', 'failed', 'cancelled'].includes(r.body.status) ? r.body : undefined;
    }, 5000);

    expect(delivery.status).toBe('cancelled');
    expect(delivery.cancelReason).toBe('endpoint_deleted');
    expect(delivery.attempts.map((a: { error: string; responseStatus: number }) => [a.error, a.responseStatus])).toEqual([['http_500', 500]]);
    expect(holding.requests).toHaveLength(1);
    // Recording the in-flight attempt's health must not re-create the endpoint as a half-written hash.
    expect(await postern.redis.exists(postern.store.keys.endpoint(orgId, endpoint.id))).toBe(0);
  } finally {
    release();
    await holding.close();
  }
});

import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * `POST /v1/endpoints/:id/test`: a `webhook.test` delivery to that endpoint only. vestiarion never
 * retries it and counts its failure toward the breaker; the standard policy retries it like any
 * other delivery and leaves it out of the breaker's count.
 */

let postern: TestPostern;
let apiKey: string;
const receivers: TestReceiver[] = [];

beforeAll(async () => {
  postern = await startPostern();
  apiKey = (await postern.createOrg()).apiKey;
});
afterAll(async () => {
  await postern.close();
  await Promise.all(receivers.map((r) => r.close()));
});

async function receiver(status: number): Promise<TestReceiver> {
  const r = await startReceiver(() => status);
  receivers.push(r);
  return r;
}

async function finished(deliveryId: string): Promise<any> {
  return waitUntil(`delivery ${deliveryId} finished`, async () => {
    const r = await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey });
    return ['succeeded', 'failed', 'cancelled'].includes(r.body.status) ? r.body : undefined;
  });
}

async function sendTest(endpointId: string): Promise<{ eventId: string; deliveryId: string }> {
  const r = await postern.api('POST', `/v1/endpoints/${endpointId}/test`, { key: apiKey });
  expect(r.status).toBe(202);
  expect(r.body.deliveries).toEqual([{ id: expect.any(String), endpointId }]);
  return { eventId: r.body.id, deliveryId: r.body.deliveries[0].id };
}

async function consecutiveFailures(endpointId: string): Promise<number> {
  const r = await postern.api('GET', `/v1/endpoints/${endpointId}`, { key: apiKey });
  return r.body.consecutiveFailures as number;
}

test('a test event goes only to the endpoint it was sent for, as webhook.test with isTest', async () => {
  const target = await receiver(200);
  const bystander = await receiver(200);
  const endpoint = await postern.createEndpoint(apiKey, { url: target.url });
  const other = await postern.createEndpoint(apiKey, { url: bystander.url });

  const { eventId, deliveryId } = await sendTest(endpoint.id);
  const delivery = await finished(deliveryId);
  expect(delivery).toMatchObject({ status: 'succeeded', eventType: 'webhook.test', endpointId: endpoint.id, isTest: true });

  expect(target.requests).toHaveLength(1);
  const envelope = JSON.parse(target.requests[0]!.body);
  expect(envelope).toMatchObject({ id: eventId, type: 'webhook.test' });
  expect(target.requests[0]!.headers['webhook-id']).toBe(eventId);

  const event = await postern.api('GET', `/v1/events/${eventId}`, { key: apiKey });
  expect(event.body.deliveryIds).toEqual([deliveryId]);
  const otherLog = await postern.api('GET', `/v1/endpoints/${other.id}/deliveries`, { key: apiKey });
  expect(otherLog.body.data).toEqual([]);
  expect(bystander.requests).toHaveLength(0);

  // An ordinary event to the same endpoint is not a test.
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'invoice.paid', data: {} } });
  const normal = await finished(posted.body.deliveries.find((d: { endpointId: string }) => d.endpointId === endpoint.id).id);
  expect(normal.isTest).toBe(false);
});

test('vestiarion: a failing test event gets exactly one request, fails, and counts against the endpoint', async () => {
  const failing = await receiver(500);
  const endpoint = await postern.createEndpoint(apiKey, {
    url: failing.url,
    eventTypes: ['never.sent'],
    policy: { preset: 'vestiarion', schedule: { kind: 'fixed', waitsMs: [20, 20, 20, 20, 20, 20] } },
  });
  const { deliveryId } = await sendTest(endpoint.id);
  const delivery = await finished(deliveryId);

  // Once the delivery is failed no later attempt can start, so one request now is one for good.
  expect(delivery.status).toBe('failed');
  expect(delivery.lastError).toBe('http_500');
  expect(delivery.attempts).toHaveLength(1);
  expect(failing.requests).toHaveLength(1);
  expect(await consecutiveFailures(endpoint.id)).toBe(1);
});

test('vestiarion: an ordinary event to the same kind of endpoint is retried (the rule is about tests only)', async () => {
  const failing = await receiver(500);
  const endpoint = await postern.createEndpoint(apiKey, {
    url: failing.url,
    eventTypes: ['ledger.appended'],
    policy: { preset: 'vestiarion', maxAttempts: 3, schedule: { kind: 'fixed', waitsMs: [20, 20] } },
  });
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'ledger.appended', data: {} } });
  const delivery = await finished(posted.body.deliveries.find((d: { endpointId: string }) => d.endpointId === endpoint.id).id);
  expect(delivery.status).toBe('failed');
  expect(failing.requests).toHaveLength(3);
  expect(await consecutiveFailures(endpoint.id)).toBe(3);
});

test('standard: a failing test event is retried to maxAttempts, leaves the breaker streak at 0 and shows in the failure counts', async () => {
  const failing = await receiver(500);
  const endpoint = await postern.createEndpoint(apiKey, { url: failing.url, eventTypes: ['never.sent'], policy: fastPolicy(3, 20) });
  const { deliveryId } = await sendTest(endpoint.id);
  const delivery = await finished(deliveryId);

  expect(delivery.status).toBe('failed');
  expect(delivery.attempts.map((a: { error: string }) => a.error)).toEqual(['http_500', 'http_500', 'http_500']);
  expect(failing.requests.map((r) => r.headers['webhook-attempt'])).toEqual(['1', '2', '3']);
  const ep = await postern.api('GET', `/v1/endpoints/${endpoint.id}`, { key: apiKey });
  // The breaker ignores test events; the endpoint's health still shows they failed (issue 14).
  expect(ep.body.consecutiveFailures).toBe(0);
  expect(ep.body).toMatchObject({ failedAttempts: 3, consecutiveFailedAttempts: 3 });
  expect(ep.body.lastFailureAt).not.toBeNull();
});

test('a test to a paused endpoint is refused with 409 endpoint_inactive and creates nothing', async () => {
  const r = await receiver(200);
  const endpoint = await postern.createEndpoint(apiKey, { url: r.url, eventTypes: ['never.sent'] });
  expect((await postern.api('POST', `/v1/endpoints/${endpoint.id}/pause`, { key: apiKey })).status).toBe(200);

  const refused = await postern.api('POST', `/v1/endpoints/${endpoint.id}/test`, { key: apiKey });
  expect(refused.status).toBe(409);
  expect(refused.body.error.code).toBe('endpoint_inactive');
  const log = await postern.api('GET', `/v1/endpoints/${endpoint.id}/deliveries`, { key: apiKey });
  expect(log.body.data).toEqual([]);
});

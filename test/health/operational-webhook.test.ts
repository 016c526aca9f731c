import { Webhook } from 'standardwebhooks';
import { startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Issue 4: a breaker trip reaches the org's operations URL as one signed `endpoint.disabled`
 * webhook — an endpoint that names the operational type in its filter; `*` does not take it.
 */

let postern: TestPostern;
let failing: TestReceiver;
let operations: TestReceiver;
let everything: TestReceiver;

beforeAll(async () => {
  postern = await startPostern({ senderConcurrency: 10 });
  failing = await startReceiver(() => 500);
  operations = await startReceiver(() => 200);
  everything = await startReceiver(() => 200);
});
afterAll(async () => {
  await postern.close();
  await Promise.all([failing, operations, everything].map((r) => r.close()));
});

test('one trip sends exactly one signed endpoint.disabled webhook to the operations endpoint, none to "*" endpoints', async () => {
  const { apiKey } = await postern.createOrg();
  const ops = await postern.createEndpoint(apiKey, { url: operations.url, eventTypes: ['endpoint.disabled', 'endpoint.paused'] });
  await postern.createEndpoint(apiKey, { url: everything.url, eventTypes: ['*'] });
  const tripped = await postern.createEndpoint(apiKey, {
    url: failing.url,
    eventTypes: ['invoice.paid'],
    policy: { preset: 'vestiarion', maxAttempts: 1, breaker: { threshold: 3 } },
  });
  for (let i = 0; i < 5; i++) await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'invoice.paid', data: { i } } });

  const [notice] = await operations.waitForRequests(1);
  expect(JSON.parse(notice!.body)).toMatchObject({ type: 'endpoint.disabled', data: { endpointId: tripped.id, endpointUrl: failing.url } });
  expect(() => new Webhook(ops.secret).verify(notice!.body, notice!.headers as Record<string, string>)).not.toThrow();

  // Every attempt of the tripped endpoint has finished, so any second notice would have been queued by now.
  await waitUntil('the tripped endpoint settled', async () => {
    const log = await postern.api('GET', `/v1/endpoints/${tripped.id}/deliveries?limit=100`, { key: apiKey });
    return log.body.data.every((d: { status: string }) => d.status === 'failed') ? true : undefined;
  });
  const notifications = await postern.api('GET', '/v1/notifications', { key: apiKey });
  expect(notifications.body.data).toHaveLength(1);
  // The "*" endpoint got the five invoices and no operational event.
  await everything.waitForRequests(5);
  const opsLog = await postern.api('GET', `/v1/endpoints/${ops.id}/deliveries`, { key: apiKey });
  await waitUntil('the notice delivered', async () => (await postern.api('GET', `/v1/endpoints/${ops.id}/deliveries`, { key: apiKey })).body.data[0]?.status === 'succeeded');
  expect(opsLog.body.data).toHaveLength(1);
  expect(operations.requests).toHaveLength(1);
  expect(everything.requests.map((r) => JSON.parse(r.body).type)).toEqual(Array(5).fill('invoice.paid'));

  const spoof = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'endpoint.disabled', data: {} } });
  expect(spoof.status).toBe(400);
});

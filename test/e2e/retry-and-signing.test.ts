import { Webhook } from 'standardwebhooks';
import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

let postern: TestPostern;
let receiver: TestReceiver;
let apiKey: string;

beforeAll(async () => {
  postern = await startPostern();
  receiver = await startReceiver((_req, n) => (n <= 2 ? 500 : 200));
  apiKey = (await postern.createOrg()).apiKey;
});
afterAll(async () => {
  await postern.close();
  await receiver.close();
});

test('a receiver failing twice then answering 200 gets 3 signed attempts of the same body', async () => {
  const endpoint = await postern.createEndpoint(apiKey, { url: receiver.url, policy: fastPolicy(5, 30) });
  const rawData = '{"amount":12345678901234567890123,"ratio":1.0,"note":"caf\\u00e9 \\"quoted\\""}';
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, rawBody: `{"type":"invoice.paid","data":${rawData}}`, headers: { 'content-type': 'application/json' } });
  expect(posted.status).toBe(202);
  const deliveryId = posted.body.deliveries[0].id as string;

  const requests = await receiver.waitForRequests(3);
  const delivery = await waitUntil('delivery succeeded', async () => {
    const r = await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey });
    return r.body.status === 'succeeded' ? r.body : undefined;
  });

  expect(delivery.attempts.map((a: { error: string | null }) => a.error)).toEqual(['http_500', 'http_500', null]);
  expect(delivery.attempts.map((a: { responseStatus: number }) => a.responseStatus)).toEqual([500, 500, 200]);
  expect(requests.map((r) => r.headers['webhook-attempt'])).toEqual(['1', '2', '3']);
  expect(new Set(requests.map((r) => r.headers['webhook-id']))).toEqual(new Set([posted.body.id]));
  expect(new Set(requests.map((r) => r.body)).size).toBe(1);
  expect(requests[0]!.body).toContain(`"data":${rawData}`);
  expect(requests.map((r) => r.headers['webhook-request-id'])).toEqual([1, 2, 3].map((n) => `${deliveryId}.${n}`));

  const wh = new Webhook(endpoint.secret);
  for (const r of requests) {
    expect(() => wh.verify(r.body, r.headers as Record<string, string>)).not.toThrow();
  }
});

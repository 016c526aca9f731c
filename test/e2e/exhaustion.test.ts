import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/** A delivery whose every attempt fails ends `failed` after exactly `maxAttempts`, and leaves no queue job behind. */

let postern: TestPostern;
let receiver: TestReceiver;
let apiKey: string;

beforeAll(async () => {
  postern = await startPostern();
  receiver = await startReceiver(() => 500);
  apiKey = (await postern.createOrg()).apiKey;
});
afterAll(async () => {
  await postern.close();
  await receiver.close();
});

test('an always-failing receiver gets exactly maxAttempts (4) requests, then the delivery is failed and its job gone', async () => {
  await postern.createEndpoint(apiKey, { url: receiver.url, policy: fastPolicy(4, 20) });
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'invoice.paid', data: { n: 1 } } });
  expect(posted.status).toBe(202);
  const deliveryId = posted.body.deliveries[0].id as string;

  const delivery = await waitUntil('delivery finished', async () => {
    const r = await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey });
    return ['succeeded', 'failed', 'cancelled'].includes(r.body.status) ? r.body : undefined;
  });
  // The job is removed when BullMQ records the final failure, just after the delivery is written.
  await waitUntil('the delivery job removed from the queue', async () => ((await postern.queue.getJob(deliveryId)) ? undefined : true), 3000);

  expect(delivery.status).toBe('failed');
  expect(delivery.lastError).toBe('http_500');
  expect(delivery.lastResponseStatus).toBe(500);
  expect(delivery.nextAttemptAt ?? null).toBeNull();
  expect(delivery.attempts.map((a: { number: number; error: string; responseStatus: number }) => [a.number, a.error, a.responseStatus])).toEqual([
    [1, 'http_500', 500],
    [2, 'http_500', 500],
    [3, 'http_500', 500],
    [4, 'http_500', 500],
  ]);
  expect(receiver.requests.map((r) => r.headers['webhook-attempt'])).toEqual(['1', '2', '3', '4']);
  const counts = await postern.queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized', 'waiting-children', 'failed', 'completed');
  expect(counts).toEqual({ waiting: 0, delayed: 0, active: 0, prioritized: 0, 'waiting-children': 0, failed: 0, completed: 0 });
  expect(receiver.requests).toHaveLength(4);
});

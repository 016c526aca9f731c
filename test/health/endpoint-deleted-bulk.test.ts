import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * An endpoint deleted with a backlog: every queued delivery ends `cancelled` / `endpoint_deleted`
 * before anything is sent, and the queue drains without a single job failing.
 */

const BACKLOG = 100;

let postern: TestPostern;
let receiver: TestReceiver;
let apiKey: string;
let orgId: string;

beforeAll(async () => {
  // No sender yet: the deliveries stay queued until the endpoint is gone.
  postern = await startPostern({ sender: false });
  receiver = await startReceiver(() => 200);
  ({ apiKey, id: orgId } = await postern.createOrg());
});
afterAll(async () => {
  await postern.close();
  await receiver.close();
});

test(`deleting an endpoint with ${BACKLOG} queued deliveries cancels all of them and empties the queue`, async () => {
  const endpoint = await postern.createEndpoint(apiKey, { url: receiver.url, policy: fastPolicy(3, 20) });
  const deliveryIds: string[] = [];
  for (let n = 0; n < BACKLOG; n++) {
    const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'order.created', data: { n } } });
    expect(posted.status).toBe(202);
    deliveryIds.push(...(posted.body.deliveries as { id: string }[]).map((d) => d.id));
  }
  expect(deliveryIds).toHaveLength(BACKLOG);
  expect(await postern.queue.getJobCounts('waiting')).toEqual({ waiting: BACKLOG });

  expect((await postern.api('DELETE', `/v1/endpoints/${endpoint.id}`, { key: apiKey })).status).toBe(204);

  await postern.startSender();
  const worker = postern.sender!.worker;
  const failedJobs: string[] = [];
  worker.on('failed', (job, err) => failedJobs.push(`${job?.id}: ${err.message}`));

  const rows = await waitUntil('every delivery finished', async () => {
    const got = await Promise.all(deliveryIds.map((id) => postern.api('GET', `/v1/deliveries/${id}`, { key: apiKey })));
    return got.every((r) => r.body.status !== 'pending' && r.body.status !== 'in_flight') ? got.map((r) => r.body) : undefined;
  }, 15_000, 50);
  await waitUntil('the queue drained', async () => {
    const c = await postern.queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized');
    return Object.values(c).every((n) => n === 0) ? true : undefined;
  }, 5000);

  expect(rows.map((d) => [d.status, d.cancelReason, d.attemptCount])).toEqual(deliveryIds.map(() => ['cancelled', 'endpoint_deleted', 0]));
  expect(receiver.requests).toHaveLength(0);
  expect(failedJobs).toEqual([]);
  expect(await postern.queue.getJobCounts('waiting', 'delayed', 'active', 'failed', 'prioritized')).toEqual({
    waiting: 0,
    delayed: 0,
    active: 0,
    failed: 0,
    prioritized: 0,
  });
  expect(await postern.store.unfinished.count(orgId)).toBe(0);
});

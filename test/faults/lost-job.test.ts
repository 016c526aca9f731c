import { startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';
import { postEvents } from './support/load.js';

/**
 * A parked delivery whose queue job is gone (a move to `delayed` lost to Redis trouble, which
 * BullMQ would turn into a failed, removed job) and that stands first in its endpoint's line must
 * not hold the line until the reconciler's grace (5 minutes) runs out: the release that calls it
 * finds no job to promote and queues one again, and the line moves on. The soak on Redis Cluster
 * saw an endpoint stand still for 167 s behind two such deliveries.
 */

/** Well under the park safety delay (60 s) and the reconciler's grace (300 s, and off here). */
const MOVES_ON_WITHIN_MS = 20_000;
/**
 * A woken delivery without a job gets one only once this old (30 s by default: ingest writes a
 * delivery a moment before its job). Younger, the line's next call (the sender's sweep) retries.
 */
const MIN_AGE_MS = 2000;

let postern: TestPostern;
let receiver: TestReceiver;
/** While set, requests to the held path wait until it resolves. */
let release: (() => void) | null = null;
const held = new Promise<void>((resolve) => {
  release = resolve;
});

beforeAll(async () => {
  postern = await startPostern({ wakeRequeueMinAgeMs: MIN_AGE_MS });
  receiver = await startReceiver(async (req) => {
    if (req.path.endsWith('/held') && req.headers['webhook-attempt'] === '1' && !releasedIds.has(req.headers['webhook-delivery-id'] as string)) await held;
    return 200;
  });
});
afterAll(async () => {
  release?.();
  await receiver?.close();
  await postern?.close();
});

const releasedIds = new Set<string>();

test('a parked delivery that lost its job does not hold its endpoint\'s line: the call that finds no job queues it again', async () => {
  const { apiKey, id: orgId } = await postern.createOrg();
  const endpoint = await postern.createEndpoint(apiKey, {
    url: `${receiver.url}/held`,
    policy: { concurrency: { perEndpoint: 1, perOrg: 10 }, timeout: { ms: 30_000 } },
  });
  const [first] = await postEvents(postern.api, apiKey, 1);
  const firstId = first!.deliveryIds[0]!;
  await waitUntil('the first delivery is at the receiver, holding the only slot', () => receiver.requests.some((r) => r.headers['webhook-delivery-id'] === firstId));
  const behind = await postEvents(postern.api, apiKey, 2, 1);
  const [secondId, thirdId] = behind.map((e) => e.deliveryIds[0]!) as [string, string];
  const parkedKey = postern.store.keys.endpointParked(orgId, endpoint.id);
  await waitUntil('both later deliveries are parked in line behind it', async () => (await postern.redis.zscore(parkedKey, secondId)) !== null && (await postern.redis.zscore(parkedKey, thirdId)) !== null);
  await waitUntil('the second one\'s job waits, delayed', async () => (await postern.queue.getJob(secondId).then((j) => j?.getState())) === 'delayed');

  // The second delivery, first in line, loses its job.
  await (await postern.queue.getJob(secondId))!.remove();
  expect(await postern.queue.getJob(secondId)).toBeUndefined();

  const lostAt = Date.now();
  releasedIds.add(secondId).add(thirdId);
  release?.();
  for (const id of [secondId, thirdId]) {
    await waitUntil(`delivery ${id} reaches the receiver`, () => receiver.requests.some((r) => r.headers['webhook-delivery-id'] === id), MOVES_ON_WITHIN_MS);
  }
  expect(Date.now() - lostAt).toBeLessThan(MOVES_ON_WITHIN_MS);
  for (const id of [firstId, secondId, thirdId]) {
    await waitUntil(`delivery ${id} succeeded`, async () => (await postern.api('GET', `/v1/deliveries/${id}`, { key: apiKey })).body.status === 'succeeded');
  }
});

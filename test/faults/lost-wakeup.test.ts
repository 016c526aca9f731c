import { startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';
import { postEvents } from './support/load.js';

/**
 * A wake-up lost by a live sender (the release was stored, promoting the woken job failed: Redis
 * trouble at that moment) holds the parked delivery back for seconds, not for the park safety delay
 * (60 s here, the default): the sender's heartbeat calls again the lines of the endpoints it
 * worked lately and wakes whom they name (README, "Crashes and restarts").
 */

/** Well under the 60-s park safety delay, well over the sweep's two-beat period. */
const WOKEN_WITHIN_MS = 20_000;

let postern: TestPostern;
let receiver: TestReceiver;
/** While set, requests to the held path wait until it resolves. */
let release: (() => void) | null = null;
const held = new Promise<void>((resolve) => {
  release = resolve;
});

beforeAll(async () => {
  postern = await startPostern();
  receiver = await startReceiver(async (req) => {
    if (req.path.endsWith('/held')) await held;
    return 200;
  });
});
afterAll(async () => {
  release?.();
  await receiver?.close();
  await postern?.close();
});

test('a parked delivery whose wake-up was lost is woken by the sweep within seconds', async () => {
  const { apiKey, id: orgId } = await postern.createOrg();
  const endpoint = await postern.createEndpoint(apiKey, {
    url: `${receiver.url}/held`,
    policy: { concurrency: { perEndpoint: 1, perOrg: 10 }, timeout: { ms: 30_000 } },
  });
  const [first] = await postEvents(postern.api, apiKey, 1);
  const firstId = first!.deliveryIds[0]!;
  await waitUntil('the first delivery is at the receiver, holding the only slot', () => receiver.requests.some((r) => r.headers['webhook-delivery-id'] === firstId));
  const [second] = await postEvents(postern.api, apiKey, 1);
  const secondId = second!.deliveryIds[0]!;
  const keys = postern.store.keys;
  await waitUntil('the second delivery is parked behind it', async () => (await postern.redis.zscore(keys.endpointParked(orgId, endpoint.id), secondId)) !== null);

  // A release stored without its wake-up: the slot is free, nobody promotes the parked job.
  const lostAt = Date.now();
  await postern.redis.zrem(keys.endpointLeases(orgId, endpoint.id), firstId);
  await postern.redis.zrem(keys.orgLeases(orgId), firstId);

  const arrived = await waitUntil(
    'the parked delivery reaches the receiver',
    () => receiver.requests.find((r) => r.headers['webhook-delivery-id'] === secondId),
    WOKEN_WITHIN_MS,
  );
  expect(arrived).toBeDefined();
  expect(Date.now() - lostAt).toBeLessThan(WOKEN_WITHIN_MS);
});

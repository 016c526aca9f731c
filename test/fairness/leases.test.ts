import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { createRedisConnection, createStore, type LeaseKey, type Store } from '@postern/store';
import { deleteByPrefix, TEST_REDIS_URL } from '../support/postern.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * The lease semaphore behind the concurrency limits (issue 5), against real Redis: what a refusal
 * parks, what a release wakes, the event claim, and expiry.
 */

let redis: Redis;
let store: Store;
const prefix = `test:${randomBytes(6).toString('hex')}`;

beforeAll(() => {
  redis = createRedisConnection(TEST_REDIS_URL, 'worker');
  store = createStore({ redis, prefix });
});
afterAll(async () => {
  await deleteByPrefix(redis, prefix);
  await redis.quit();
});

const limits = { perEndpoint: 2, perOrg: 3 };
let n = 0;
/** A delivery of its own event (unless `eventId` is given) to endpoint `ep` of org `org`; createdAt = its number. */
function delivery(ep: string, org = 'org_a', eventId?: string): LeaseKey & { createdAt: number } {
  n += 1;
  return { deliveryId: `dlv_${n}`, eventId: eventId ?? `evt_${n}`, endpointId: ep, orgId: org, createdAt: n };
}
const acquire = (d: ReturnType<typeof delivery>, nowMs = 1_000, leaseMs = 60_000) =>
  store.leases.acquire({ ...d, ...limits, nowMs, leaseMs, parkOrder: d.createdAt });
const release = (d: LeaseKey, nowMs = 1_000) => store.leases.release({ ...d, ...limits, nowMs });

test('refused by the endpoint limit: parked in line; a release calls the oldest, as many as it frees, and newcomers wait behind them', async () => {
  const [a, b, c, d] = [delivery('ep_1'), delivery('ep_1'), delivery('ep_1'), delivery('ep_1')];
  expect(await acquire(a)).toBe('acquired');
  expect(await acquire(b)).toBe('acquired');
  // Parked out of order; woken oldest first.
  expect(await acquire(d)).toBe('endpoint_full');
  expect(await acquire(c)).toBe('endpoint_full');
  expect(await store.leases.isParked(c)).toBe(true);
  // Taking the same lease again renews it (a re-run of the same attempt), it takes no second slot.
  expect(await acquire(a)).toBe('acquired');
  expect(await store.leases.inFlight('org_a', 'ep_1', 1_000)).toBe(2);

  expect(await release(a)).toEqual({ released: true, woken: [c.deliveryId] });
  expect(await store.leases.isParked(c)).toBe(false);
  expect(await store.leases.isParked(d)).toBe(true);
  // Releasing twice frees nothing more; the slot is c's (called, first in line): c is called again
  // (its wake-up may have been lost), and d, behind it, is not.
  expect(await release(a)).toEqual({ released: false, woken: [c.deliveryId] });
  // A newcomer does not take c's slot: it waits in line behind c and d.
  const e = delivery('ep_1');
  expect(await acquire(e)).toBe('endpoint_full');
  expect(await acquire(c)).toBe('acquired');
  expect(await acquire(d)).toBe('endpoint_full');
  expect(await store.leases.isParked(d)).toBe(true);
});

test('refused by the org limit: parked on the org, woken by a release of any of its endpoints', async () => {
  const org = 'org_b';
  const held = [delivery('ep_2', org), delivery('ep_3', org), delivery('ep_4', org)];
  for (const d of held) expect(await acquire(d)).toBe('acquired');
  const waiting = delivery('ep_5', org);
  expect(await acquire(waiting)).toBe('org_full');
  expect(await release(held[1]!)).toEqual({ released: true, woken: [waiting.deliveryId] });
  expect(await acquire(waiting)).toBe('acquired');
});

test('one claim per event and endpoint: a second delivery of the event waits, and is woken when the first ends', async () => {
  const first = delivery('ep_6', 'org_c');
  const redelivery = delivery('ep_6', 'org_c', first.eventId);
  expect(await acquire(first)).toBe('acquired');
  expect(await acquire(redelivery)).toBe('event_claimed');
  expect(await store.leases.isParked(redelivery)).toBe(true);
  // The holder's re-run of the same attempt renews its claim and still wakes the waiter at its end.
  expect(await acquire(first)).toBe('acquired');
  // The same event at another endpoint is another claim.
  expect(await acquire({ ...delivery('ep_7', 'org_c', first.eventId) })).toBe('acquired');
  expect(await release(first)).toEqual({ released: true, woken: [redelivery.deliveryId] });
  expect(await acquire(redelivery)).toBe('acquired');
});

test('a release nobody waits for wakes nobody, and its claim is gone', async () => {
  const only = delivery('ep_9', 'org_e');
  expect(await acquire(only)).toBe('acquired');
  expect(await release(only)).toEqual({ released: true, woken: [] });
  expect(await acquire(delivery('ep_9', 'org_e', only.eventId))).toBe('acquired');
});

test("a holder whose lease ran out releases late: the claim another delivery took since is left to it", async () => {
  const late = delivery('ep_10', 'org_f');
  const taker = delivery('ep_10', 'org_f', late.eventId);
  const third = delivery('ep_10', 'org_f', late.eventId);
  const startedAt = Date.now();
  expect(await acquire(late, startedAt, 200)).toBe('acquired');
  await waitUntil("the late holder's claim ran out", async () => (await acquire(taker, Date.now())) === 'acquired', 5_000);
  expect(await acquire(third, Date.now())).toBe('event_claimed');
  // The late release gives back its own slot only: the taker still holds the claim, with its waiter.
  expect((await release(late, Date.now())).woken).not.toContain(third.deliveryId);
  expect(await acquire(third, Date.now())).toBe('event_claimed');
  expect((await release(taker, Date.now())).woken).toContain(third.deliveryId);
  expect(await acquire(third, Date.now())).toBe('acquired');
});

test("a crashed holder's lease expires: its slot and its claim come back without a release", async () => {
  const crashed = delivery('ep_8', 'org_d');
  const sameEvent = delivery('ep_8', 'org_d', crashed.eventId);
  const leaseMs = 1_000;
  const startedAt = Date.now();
  expect(await acquire(crashed, startedAt, leaseMs)).toBe('acquired');
  expect(await acquire(delivery('ep_8', 'org_d'), startedAt, leaseMs)).toBe('acquired');
  // The claim runs out in Redis's own time (PX): seen taken by a look made before then. A machine
  // too busy to look that soon skips this check rather than failing it.
  const look = await acquire(sameEvent, startedAt);
  if (Date.now() - startedAt < leaseMs) expect(look).toBe('event_claimed');
  expect(await acquire(delivery('ep_8', 'org_d'), startedAt)).toBe('endpoint_full');
  // Nobody releases: the leases (scored by expiry) and the claim (PX) run out by themselves.
  await waitUntil('the crashed lease and claim expired', async () => (await acquire(sameEvent, Date.now())) === 'acquired', 15_000);
  expect(Date.now() - startedAt).toBeGreaterThanOrEqual(leaseMs);
  expect(await store.leases.inFlight('org_d', 'ep_8', Date.now())).toBe(1);
});

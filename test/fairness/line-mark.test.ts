import { markEndpointsForClaim, type AttemptIds } from '@postern/store';
import { fastPolicy, startPostern, type TestPostern } from '../support/postern.js';

/**
 * The endpoint's `lined` mark (lua/includes/lease.lua): the claim looks at the endpoint's line only
 * when its hash carries the mark, so the mark must be there whenever the line has members. Driven
 * claim by claim against real Redis (no sender), checking after every step that a line with
 * members is marked, and that the line still decides who goes first.
 */

let postern: TestPostern;
let apiKey: string;
let orgId: string;
const PER_ORG = 20;

beforeAll(async () => {
  postern = await startPostern({ sender: false });
});
beforeEach(async () => {
  ({ apiKey, id: orgId } = await postern.createOrg());
});
afterAll(async () => {
  await postern.close();
});

async function endpoint(extra: Record<string, unknown> = {}): Promise<string> {
  const ep = await postern.createEndpoint(apiKey, { url: 'http://127.0.0.1:9/hook', policy: fastPolicy(3, 20, { concurrency: { perEndpoint: 1, perOrg: PER_ORG }, ...extra }) });
  return ep.id as string;
}

/** One event to the org's only endpoint: its delivery's ids. */
async function delivery(endpointId: string): Promise<AttemptIds> {
  const r = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'line.test', data: {} } });
  expect(r.status).toBe(202);
  return { deliveryId: r.body.deliveries[0].id as string, endpointId, eventId: r.body.id as string, orgId };
}

const claim = (ids: AttemptIds, nowMs = Date.now()) => postern.store.attempts.claim(ids, nowMs);
const release = (ids: AttemptIds) => postern.store.leases.release({ ...ids, perEndpoint: 1, perOrg: PER_ORG, nowMs: Date.now() });
const mark = (endpointId: string) => postern.redis.hget(postern.store.keys.endpoint(orgId, endpointId), 'lined');
const line = (endpointId: string) => postern.redis.zrange(postern.store.keys.endpointParked(orgId, endpointId), 0, -1);

/** The invariant the claim relies on: a line with members is marked. */
async function expectMarkedWhileLined(endpointId: string): Promise<void> {
  if ((await line(endpointId)).length > 0) expect(await mark(endpointId)).toBe('1');
}

test('parked deliveries keep their order under the mark; a newcomer never overtakes them; the emptied line loses its mark', async () => {
  const ep = await endpoint();
  const [a, b, c] = [await delivery(ep), await delivery(ep), await delivery(ep)];
  expect(await claim(a)).toMatchObject({ kind: 'claimed' });
  expect(await mark(ep)).toBeNull();

  expect(await claim(c)).toEqual({ kind: 'parked', limit: 'endpoint', ahead: 0 });
  expect(await mark(ep)).toBe('1');
  expect(await claim(b)).toEqual({ kind: 'parked', limit: 'endpoint', ahead: 0 });
  expect(await line(ep)).toEqual([b.deliveryId, c.deliveryId]);
  await expectMarkedWhileLined(ep);

  // The freed slot is b's (first in line): a newcomer, and c, wait behind it.
  expect((await release(a)).woken).toEqual([b.deliveryId]);
  const d = await delivery(ep);
  expect(await claim(d)).toEqual({ kind: 'parked', limit: 'endpoint', ahead: 2 });
  expect(await claim(c)).toEqual({ kind: 'parked', limit: 'endpoint', ahead: 1 });
  await expectMarkedWhileLined(ep);

  const started = [a.deliveryId];
  for (const [next, after] of [[b, c], [c, d], [d, null]] as const) {
    expect(await claim(next)).toMatchObject({ kind: 'claimed' });
    started.push(next.deliveryId);
    await expectMarkedWhileLined(ep);
    expect((await release(next)).woken).toEqual(after ? [after.deliveryId] : []);
  }
  expect(started).toEqual([a, b, c, d].map((x) => x.deliveryId));
  expect(await line(ep)).toEqual([]);

  // The next claim finds the line empty: it drops the mark, and later claims skip the line.
  const e = await delivery(ep);
  expect(await claim(e)).toMatchObject({ kind: 'claimed' });
  expect(await mark(ep)).toBeNull();
  const f = await delivery(ep);
  expect(await claim(f)).toEqual({ kind: 'parked', limit: 'endpoint', ahead: 0 });
  expect(await mark(ep)).toBe('1');
});

test('a delivery parked by an adaptive pause marks the line, and the newcomer after the pause waits behind it', async () => {
  const ep = await endpoint({ pacing: 'adaptive' });
  const [a, b] = [await delivery(ep), await delivery(ep)];
  const pausedUntil = Date.now() + 60_000;
  await postern.redis.hset(postern.store.keys.endpoint(orgId, ep), 'pace', JSON.stringify({ perSecond: 10, concurrency: 1, pausedUntil, cutAt: Date.now(), changedAt: Date.now(), goodPerSecond: null }));
  expect(await claim(a)).toEqual({ kind: 'parked', limit: 'pace', retryAt: pausedUntil });
  expect(await line(ep)).toEqual([a.deliveryId]);
  expect(await mark(ep)).toBe('1');
  // After the pause, b (newer) claims before a's job comes back: the slot is a's.
  expect(await claim(b, pausedUntil + 1)).toEqual({ kind: 'parked', limit: 'endpoint', ahead: 1 });
  expect(await claim(a, pausedUntil + 1)).toMatchObject({ kind: 'claimed' });
});

test('the lease repository marks an existing endpoint when it parks, and makes no hash for one that does not exist', async () => {
  const ep = await endpoint();
  const [a, b] = [await delivery(ep), await delivery(ep)];
  const acquire = (ids: AttemptIds, endpointId = ids.endpointId) =>
    postern.store.leases.acquire({ ...ids, endpointId, perEndpoint: 1, perOrg: PER_ORG, nowMs: Date.now(), leaseMs: 60_000, parkOrder: 1 });
  expect(await acquire(a)).toBe('acquired');
  expect(await acquire(b)).toBe('endpoint_full');
  expect(await mark(ep)).toBe('1');

  expect(await acquire(a, 'ep_gone')).toBe('acquired');
  expect(await acquire(b, 'ep_gone')).toBe('endpoint_full');
  expect(await line('ep_gone')).toEqual([b.deliveryId]);
  expect(await postern.redis.exists(postern.store.keys.endpoint(orgId, 'ep_gone'))).toBe(0);
});

test('a line filled by an older Postern (no mark) is marked by markEndpointsForClaim, and its parked delivery keeps its place', async () => {
  const ep = await endpoint();
  const [a, b] = [await delivery(ep), await delivery(ep)];
  expect(await claim(a)).toMatchObject({ kind: 'claimed' });
  expect(await claim(b)).toMatchObject({ kind: 'parked', limit: 'endpoint' });
  // What an older Postern left: b in line, no mark.
  await postern.redis.hdel(postern.store.keys.endpoint(orgId, ep), 'lined');

  const marks = await markEndpointsForClaim(postern.redis, postern.store.keys, { always: true });
  expect(marks.linesMarked).toBeGreaterThanOrEqual(1);
  expect(await mark(ep)).toBe('1');
  expect((await release(a)).woken).toEqual([b.deliveryId]);
  const newcomer = await delivery(ep);
  expect(await claim(newcomer)).toEqual({ kind: 'parked', limit: 'endpoint', ahead: 1 });
  expect(await claim(b)).toMatchObject({ kind: 'claimed' });
  // Run again, it changes nothing.
  expect((await markEndpointsForClaim(postern.redis, postern.store.keys, { always: true })).linesMarked).toBe(0);
});

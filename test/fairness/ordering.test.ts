import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type ReceivedRequest, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

// Issue 13: oldest first (a freed slot goes to the oldest delivery waiting for the endpoint) and
// per-key ordering. Real Redis, real HTTP receivers; every wait is a condition with a deadline.

let postern: TestPostern;
let apiKey: string;
let orgId: string;
const receivers: TestReceiver[] = [];

/**
 * Start order at `perEndpoint: n` (README, "Ordering"): up to n deliveries are let in together (a
 * release calls the first ones of the line) and may start in any order among themselves, a few ms
 * apart; none may start before a delivery n or more places older. `late`: starts before any older
 * one; `overtook`: starts before one n or more places older (must be 0).
 */
function startOrder(started: readonly number[], n: number): { late: number; overtook: number } {
  let late = 0;
  let overtook = 0;
  for (let i = 1; i < started.length; i++) {
    if (started[i]! < Math.max(...started.slice(0, i))) late++;
    if (i >= n && started[i]! < Math.max(...started.slice(0, i - n + 1))) overtook++;
  }
  return { late, overtook };
}

beforeAll(async () => {
  postern = await startPostern({ senderConcurrency: 50 });
});
// Each test its own org, so events reach only its endpoint.
beforeEach(async () => {
  ({ apiKey, id: orgId } = await postern.createOrg());
});
afterAll(async () => {
  await postern.close();
  for (const r of receivers) await r.close();
});

async function receiver(behaviour?: Parameters<typeof startReceiver>[0]): Promise<TestReceiver> {
  const r = await startReceiver(behaviour);
  receivers.push(r);
  return r;
}

/** Pairs (i < j) where the later one came first: 0 = exactly in order. */
function inversions(order: readonly number[]): number {
  let n = 0;
  for (let i = 0; i < order.length; i++) for (let j = i + 1; j < order.length; j++) if (order[i]! > order[j]!) n++;
  return n;
}

const dataOf = (r: ReceivedRequest) => (JSON.parse(r.body) as { data: { i: number; key?: string } }).data;

async function send(n: number, body: (i: number) => Record<string, unknown> = () => ({})): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'order.test', data: { i }, ...body(i) } });
    expect(r.status).toBe(202);
    ids.push(...(r.body.deliveries as { id: string }[]).map((d) => d.id));
  }
  return ids;
}

test('perEndpoint 1, 50 events sent back to back: attempts start in acceptance order (zero inversions)', async () => {
  // A slow receiver, so most deliveries wait for the slot and the wake order decides.
  const r = await receiver(async () => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    return 200;
  });
  await postern.createEndpoint(apiKey, { url: r.url, policy: fastPolicy(3, 20, { concurrency: { perEndpoint: 1, perOrg: 20 } }) });
  await send(50);
  await r.waitForRequests(50, 30_000);
  const order = r.requests.map((q) => dataOf(q).i);
  const found = inversions(order);
  console.log(`perEndpoint 1, 50 events: ${found} inversions in start order`);
  expect(order).toHaveLength(50);
  expect(found).toBe(0);
}, 60_000);

test('perEndpoint 3: attempts start in acceptance order, three at a time', async () => {
  const r = await receiver(async () => {
    await new Promise((resolve) => setTimeout(resolve, 10));
    return 200;
  });
  const ep = await postern.createEndpoint(apiKey, { url: r.url, policy: fastPolicy(3, 20, { concurrency: { perEndpoint: 3, perOrg: 20 } }) });
  const ids = await send(40);
  await r.waitForRequests(40, 30_000);
  await waitUntil('every delivery succeeded', async () => (await postern.store.deliveries.getMany(orgId, ids)).every((d) => d.status === 'succeeded'), 20_000);
  // Start order as recorded (the claim's clock): never an older delivery starting after a newer one.
  const started = await Promise.all(ids.map(async (id) => (await postern.store.deliveries.getAttempts(orgId, id))[0]!.startedAt));
  const { late, overtook } = startOrder(started, 3);
  console.log(`perEndpoint 3, 40 events: ${late} started before an older one of its group of 3, ${overtook} before one 3 or more places older`);
  expect(overtook).toBe(0);
  expect(ep.policy.concurrency.perEndpoint).toBe(3);
}, 60_000);

test('resume after pause drains strictly oldest first (zero inversions)', async () => {
  const r = await receiver();
  const ep = await postern.createEndpoint(apiKey, { url: r.url, policy: fastPolicy(3, 20, { concurrency: { perEndpoint: 1, perOrg: 20 } }) });
  expect((await postern.api('POST', `/v1/endpoints/${ep.id}/pause`, { key: apiKey })).status).toBe(200);
  const ids = await send(30);
  await waitUntil('every delivery held', async () => (await postern.store.deliveries.getMany(orgId, ids)).every((d) => d.held), 20_000);
  expect(r.requests).toHaveLength(0);
  expect((await postern.api('POST', `/v1/endpoints/${ep.id}/resume`, { key: apiKey })).status).toBe(200);
  // Events accepted while it drains join the line behind the held ones.
  await send(10, () => ({}));
  await r.waitForRequests(40, 30_000);
  const order = r.requests.map((q) => dataOf(q).i);
  const held = order.filter((_, n) => n < 30);
  const found = inversions(held);
  console.log(`resume after pause, 30 held: ${found} inversions in drain order`);
  expect(held).toEqual(Array.from({ length: 30 }, (_, i) => i));
  expect(found).toBe(0);
}, 60_000);

test('resume after pause at perEndpoint 4: the held deliveries start oldest first, four at a time (never before one 4 places older)', async () => {
  const r = await receiver(async () => {
    await new Promise((resolve) => setTimeout(resolve, 10));
    return 200;
  });
  const ep = await postern.createEndpoint(apiKey, { url: r.url, policy: fastPolicy(3, 20, { concurrency: { perEndpoint: 4, perOrg: 20 } }) });
  expect((await postern.api('POST', `/v1/endpoints/${ep.id}/pause`, { key: apiKey })).status).toBe(200);
  const ids = await send(20);
  await waitUntil('every delivery held', async () => (await postern.store.deliveries.getMany(orgId, ids)).every((d) => d.held), 20_000);
  expect((await postern.api('POST', `/v1/endpoints/${ep.id}/resume`, { key: apiKey })).status).toBe(200);
  await waitUntil('every delivery succeeded', async () => (await postern.store.deliveries.getMany(orgId, ids)).every((d) => d.status === 'succeeded'), 20_000);
  const started = await Promise.all(ids.map(async (id) => (await postern.store.deliveries.getAttempts(orgId, id))[0]!.startedAt));
  const { late, overtook } = startOrder(started, 4);
  console.log(`resume after pause at perEndpoint 4, 20 held: ${late} started before an older one of its group of 4, ${overtook} before one 4 or more places older`);
  expect(overtook).toBe(0);
}, 60_000);

test('per-key order under failure: A waits for its failing 5th event, B is not held up; headers carry key and sequence; an ended delivery leaves a visible gap', async () => {
  const attemptsOf = new Map<string, number>();
  const r = await receiver((req) => {
    const { key, i } = dataOf(req);
    const name = `${key}${i}`;
    const n = (attemptsOf.get(name) ?? 0) + 1;
    attemptsOf.set(name, n);
    if (name === 'A5' && n <= 2) return 500;
    if (name === 'C2') return 500;
    return 200;
  });
  const policy = fastPolicy(3, 400, { ordering: 'per-key', concurrency: { perEndpoint: 4, perOrg: 20 } });
  const ep = await postern.createEndpoint(apiKey, { url: r.url, policy });
  expect(ep.policy.ordering).toBe('per-key');
  const ids: string[] = [];
  for (let i = 1; i <= 10; i++) {
    for (const key of ['A', 'B']) {
      const res = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'order.test', data: { key, i }, orderingKey: key } });
      expect(res.status).toBe(202);
      ids.push(res.body.deliveries[0].id as string);
    }
  }
  for (let i = 1; i <= 3; i++) {
    const res = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'order.test', data: { key: 'C', i }, orderingKey: 'C' } });
    ids.push(res.body.deliveries[0].id as string);
  }
  await waitUntil('every delivery ended', async () => (await postern.store.deliveries.getMany(orgId, ids)).every((d) => d.status === 'succeeded' || d.status === 'failed'), 30_000);

  const of = (key: string) => r.requests.filter((q) => dataOf(q).key === key);
  const a = of('A').map((q) => dataOf(q).i);
  // A in order, its 5th three times (two failures, then success), nothing after it before it.
  expect(a).toEqual([1, 2, 3, 4, 5, 5, 5, 6, 7, 8, 9, 10]);
  expect(of('A').map((q) => q.headers['webhook-sequence'])).toEqual(['1', '2', '3', '4', '5', '5', '5', '6', '7', '8', '9', '10']);
  expect(of('A').every((q) => q.headers['webhook-ordering-key'] === 'A')).toBe(true);
  // B finished while A waited on its 5th.
  const b = of('B');
  expect(b.map((q) => dataOf(q).i)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  const aFifthSucceededAt = of('A').filter((q) => dataOf(q).i === 5)[2]!.at;
  expect(b[b.length - 1]!.at).toBeLessThan(aFifthSucceededAt);
  // C's 2nd failed for good: the line moved on, and the receiver sees the gap in the sequence.
  const c = of('C');
  expect(c.map((q) => `${dataOf(q).i}:${q.headers['webhook-sequence']}`)).toEqual(['1:1', '2:2', '2:2', '2:2', '3:3']);
  // The delivery API and log show the key and the sequence.
  const detail = await postern.api('GET', `/v1/deliveries/${ids[ids.length - 2]}`, { key: apiKey });
  expect(detail.body).toMatchObject({ status: 'failed', orderingKey: 'C', sequence: 2 });
  expect(detail.body.attempts[0].requestHeaders).toMatchObject({ 'webhook-ordering-key': 'C', 'webhook-sequence': '2' });
}, 60_000);

test('orderingKey is validated: a string of 1 to 256 printable characters', async () => {
  for (const orderingKey of ['', 'x'.repeat(257), 42, 'line\nbreak']) {
    const r = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'order.test', data: {}, orderingKey } });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('invalid_request');
    expect(r.body.error.message).toContain('orderingKey');
  }
  expect((await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'order.test', data: {}, orderingKey: 'k'.repeat(256) } })).status).toBe(202);
});

import type { ServerResponse } from 'node:http';
import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * A changed or removed `rateLimit`, `ordering` or `pacing` applies to the deliveries already
 * waiting, at once: the PATCH calls the endpoint's line again. Before, they waited for their own
 * next look: one old rate interval, the end of an adaptive pause, or the park safety delay (a
 * minute). Each case below would wait 10 s or more per delivery without that (the slowest rate a
 * policy takes is 0.1/s); the deadlines are well inside what the old waits add up to.
 */

/** The slowest rate limit: one request per 10 s. */
const SLOWEST_PER_SECOND = 0.1;
const DEADLINE_MS = 8_000;

let postern: TestPostern;
const receivers: TestReceiver[] = [];

beforeAll(async () => {
  postern = await startPostern({ senderConcurrency: 20 });
});
afterAll(async () => {
  for (const r of receivers) await r.close();
  await postern.close();
});

async function receiver(behaviour?: Parameters<typeof startReceiver>[0]): Promise<TestReceiver> {
  const r = await startReceiver(behaviour);
  receivers.push(r);
  return r;
}

async function postEvent(apiKey: string, body: Record<string, unknown>): Promise<string> {
  const r = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'change.test', data: {}, ...body } });
  expect(r.status).toBe(202);
  return r.body.deliveries[0].id as string;
}

const patchPolicy = async (apiKey: string, endpointId: string, policy: Record<string, unknown>) => {
  const r = await postern.api('PATCH', `/v1/endpoints/${endpointId}`, { key: apiKey, body: { policy } });
  expect(r.status).toBe(200);
};

test('a rate limit removed: deliveries waiting on the old rate go at once', async () => {
  const { apiKey, id: orgId } = await postern.createOrg();
  const r = await receiver();
  const base = fastPolicy(3, 20);
  const ep = await postern.createEndpoint(apiKey, { url: r.url, policy: { ...base, rateLimit: { perSecond: SLOWEST_PER_SECOND, burst: 0 } } });
  const ids = [await postEvent(apiKey, {}), await postEvent(apiKey, {}), await postEvent(apiKey, {})];
  await r.waitForRequests(1);
  // The other two wait their turns, 10 s and 20 s away.
  await waitUntil('the others wait on the rate', async () => (await postern.store.deliveries.getMany(orgId, ids)).filter((d) => d.status === 'pending' && d.parked).length === 2);
  await patchPolicy(apiKey, ep.id, { ...base, rateLimit: null });
  await waitUntil('every delivery succeeded', async () => (await postern.store.deliveries.getMany(orgId, ids)).every((d) => d.status === 'succeeded'), DEADLINE_MS, 50);
  expect(r.requests).toHaveLength(3);
});

test('a slower rate limit raised: the next turn is the new rate\'s, not the old one\'s', async () => {
  const { apiKey, id: orgId } = await postern.createOrg();
  const r = await receiver();
  const base = fastPolicy(3, 20);
  const ep = await postern.createEndpoint(apiKey, { url: r.url, policy: { ...base, rateLimit: { perSecond: SLOWEST_PER_SECOND, burst: 0 } } });
  const ids = [await postEvent(apiKey, {}), await postEvent(apiKey, {})];
  await r.waitForRequests(1);
  await waitUntil('the second waits on the rate', async () => (await postern.store.deliveries.get(orgId, ids[1]!))?.parked === true);
  await patchPolicy(apiKey, ep.id, { ...base, rateLimit: { perSecond: 10, burst: 0 } });
  await waitUntil('both succeeded', async () => (await postern.store.deliveries.getMany(orgId, ids)).every((d) => d.status === 'succeeded'), DEADLINE_MS, 50);
});

test('per-key ordering switched off: deliveries waiting behind an earlier one of their key go while it is still in flight', async () => {
  const { apiKey, id: orgId } = await postern.createOrg();
  let holdFirst: ServerResponse | null = null;
  const r = await receiver((_req, n, res) => {
    if (n === 1) {
      holdFirst = res;
      return 'handled';
    }
    return 200;
  });
  const base = fastPolicy(3, 20, { timeout: { ms: 30_000 } });
  const ep = await postern.createEndpoint(apiKey, { url: r.url, policy: { ...base, ordering: 'per-key' } });
  const ids = [await postEvent(apiKey, { orderingKey: 'k' }), await postEvent(apiKey, { orderingKey: 'k' }), await postEvent(apiKey, { orderingKey: 'k' })];
  await r.waitForRequests(1);
  await waitUntil('the later two have been turned away by their key', async () => {
    const ds = await postern.store.deliveries.getMany(orgId, ids.slice(1));
    const jobs = await Promise.all(ids.slice(1).map(async (id) => (await postern.queue.getJob(id))?.getState()));
    return ds.every((d) => d.status === 'pending') && jobs.every((s) => s === 'delayed');
  });
  await patchPolicy(apiKey, ep.id, { ...base, ordering: 'none' });
  await r.waitForRequests(3, DEADLINE_MS);
  expect(holdFirst).not.toBeNull();
  (holdFirst as unknown as ServerResponse).end();
  await waitUntil('every delivery succeeded', async () => (await postern.store.deliveries.getMany(orgId, ids)).every((d) => d.status === 'succeeded'), DEADLINE_MS, 50);
});

test('adaptive pacing switched off during an hour-long Retry-After pause: the waiting deliveries go at once', async () => {
  const { apiKey, id: orgId } = await postern.createOrg();
  const r = await receiver((_req, n, res) => {
    if (n === 1) {
      res.statusCode = 429;
      res.setHeader('retry-after', '3600');
      res.end();
      return 'handled';
    }
    return 200;
  });
  const base = fastPolicy(5, 20, { retryAfter: 'honour', concurrency: { perEndpoint: 1, perOrg: 20 } });
  const ep = await postern.createEndpoint(apiKey, { url: r.url, policy: { ...base, pacing: 'adaptive' } });
  const first = await postEvent(apiKey, {});
  await r.waitForRequests(1);
  await waitUntil('the endpoint is paused', async () => {
    const e = await postern.store.endpoints.get(orgId, ep.id);
    return e?.pace?.pausedUntil !== null && e?.pace?.pausedUntil !== undefined && e.pace.pausedUntil > Date.now() + 60_000;
  });
  const later = [await postEvent(apiKey, {}), await postEvent(apiKey, {})];
  await waitUntil('the later ones wait out the pause', async () => (await postern.store.deliveries.getMany(orgId, later)).every((d) => d.status === 'pending' && d.parked));
  await patchPolicy(apiKey, ep.id, { ...base, pacing: 'none' });
  await waitUntil('the later ones succeeded', async () => (await postern.store.deliveries.getMany(orgId, later)).every((d) => d.status === 'succeeded'), DEADLINE_MS, 50);
  expect((await postern.store.endpoints.get(orgId, ep.id))?.pace ?? null).toBeNull();
  expect(first).toBeDefined();
});

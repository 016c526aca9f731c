import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { countingReceiver, type CountingReceiver } from '../support/counting-receiver.js';
import type { TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

let postern: TestPostern;
let counting: CountingReceiver;
let receiver: TestReceiver;

beforeAll(async () => {
  postern = await startPostern({ senderConcurrency: 40 });
  counting = await countingReceiver(40);
  receiver = counting.receiver;
});
afterAll(async () => {
  await postern.close();
  await receiver.close();
});

test('per-endpoint and per-org limits hold, and every delivery still succeeds', async () => {
  const { apiKey, id: orgId } = await postern.createOrg();
  const base = receiver.url.replace(/\/hook$/, '');
  const concurrency = { perEndpoint: 2, perOrg: 5 };
  const endpoints = [];
  for (let i = 0; i < 4; i++) {
    endpoints.push(await postern.createEndpoint(apiKey, { url: `${base}/ep${i}`, policy: fastPolicy(3, 20, { concurrency }) }));
  }
  const deliveryIds: string[] = [];
  for (let i = 0; i < 60; i++) {
    const r = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'load.test', data: { i } } });
    expect(r.status).toBe(202);
    deliveryIds.push(...r.body.deliveries.map((d: { id: string }) => d.id));
  }
  expect(deliveryIds).toHaveLength(240);
  await receiver.waitForRequests(240, 30_000);
  await waitUntil('every delivery succeeded', async () => {
    const ds = await postern.store.deliveries.getMany(orgId, deliveryIds);
    return ds.every((d) => d.status === 'succeeded');
  }, 20_000);
  for (let i = 0; i < 4; i++) expect(counting.peak.get(`/ep${i}`)).toBeLessThanOrEqual(2);
  expect(counting.orgPeak()).toBeLessThanOrEqual(5);
  // The limits were actually exercised, not trivially met.
  expect(counting.orgPeak()).toBeGreaterThanOrEqual(4);
  const ds = await postern.store.deliveries.getMany(orgId, deliveryIds);
  expect(ds.every((d) => d.attempts === 1)).toBe(true);
}, 60_000);

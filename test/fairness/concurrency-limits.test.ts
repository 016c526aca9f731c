import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/** A receiver that counts requests in flight per path and holds each one for `holdMs`. */
async function countingReceiver(holdMs: number) {
  const inFlight = new Map<string, number>();
  const peak = new Map<string, number>();
  let orgInFlight = 0;
  let orgPeak = 0;
  const receiver = await startReceiver(async (req) => {
    const n = (inFlight.get(req.path) ?? 0) + 1;
    inFlight.set(req.path, n);
    peak.set(req.path, Math.max(peak.get(req.path) ?? 0, n));
    orgInFlight += 1;
    orgPeak = Math.max(orgPeak, orgInFlight);
    await new Promise((r) => setTimeout(r, holdMs));
    inFlight.set(req.path, (inFlight.get(req.path) ?? 1) - 1);
    orgInFlight -= 1;
    return 200;
  });
  return { receiver, peak, orgPeak: () => orgPeak };
}

let postern: TestPostern;
let counting: Awaited<ReturnType<typeof countingReceiver>>;
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
  const { apiKey } = await postern.createOrg();
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
    const ds = await postern.store.deliveries.getMany(deliveryIds);
    return ds.every((d) => d.status === 'succeeded');
  }, 20_000);
  for (let i = 0; i < 4; i++) expect(counting.peak.get(`/ep${i}`)).toBeLessThanOrEqual(2);
  expect(counting.orgPeak()).toBeLessThanOrEqual(5);
  // The limits were actually exercised, not trivially met.
  expect(counting.orgPeak()).toBeGreaterThanOrEqual(4);
  const ds = await postern.store.deliveries.getMany(deliveryIds);
  expect(ds.every((d) => d.attempts === 1)).toBe(true);
}, 60_000);

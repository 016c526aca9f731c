import { startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * One compressed run of each schedule kind through Redis and BullMQ. Two views of each retry:
 * the wait the sender scheduled (from the org's live feed, which records each failed attempt's end
 * and its `nextAttemptAt`: exact, whatever the machine's load), checked against the schedule's
 * bounds; and the gap between attempts arriving at a receiver that always fails, which can never
 * be shorter than that wait. How much longer a gap runs (the queue's pick-up on a busy machine) is
 * latency, measured by the bench, not here.
 */

/**
 * Values the sender's `random` hands out next (then Math.random). Forcing the extremes of a
 * range makes "the wait reached its bound" observable instead of a matter of luck.
 */
const forcedRandoms: number[] = [];
const HIGH = 0.999_999;

let postern: TestPostern;
let receiver: TestReceiver;
let org: { id: string; apiKey: string };
let runs = 0;

beforeAll(async () => {
  postern = await startPostern({ random: () => forcedRandoms.shift() ?? Math.random() });
  receiver = await startReceiver(() => 500);
  org = await postern.createOrg();
});
afterEach(() => {
  forcedRandoms.length = 0;
});
afterAll(async () => {
  await postern.close();
  await receiver.close();
});

/** One delivery's retries: each scheduled wait (ms, from the attempt's end) and each gap between arrivals (ms). */
interface Retries {
  waits: number[];
  gaps: number[];
}

/** Sends one event to a new endpoint with `policy` and follows it until it failed after `attempts` attempts. */
async function runRetries(policy: Record<string, unknown>, attempts: number): Promise<Retries> {
  // Each run has its own event type, so only its endpoint subscribes.
  const type = `schedule.probe${++runs}`;
  const endpoint = await postern.createEndpoint(org.apiKey, { url: receiver.url, eventTypes: [type], policy });
  const posted = await postern.api('POST', '/v1/events', { key: org.apiKey, body: { type, data: {} } });
  expect(posted.status).toBe(202);
  expect(posted.body.deliveries).toEqual([{ id: expect.any(String), endpointId: endpoint.id }]);
  const deliveryId = posted.body.deliveries[0].id as string;
  const delivery = await waitUntil('delivery failed', async () => {
    const r = await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: org.apiKey });
    return r.body.status === 'failed' ? r.body : undefined;
  }, 15_000);

  expect(delivery.attemptCount).toBe(attempts);
  const arrivals = receiver.requests.filter((r) => r.headers['webhook-delivery-id'] === deliveryId);
  expect(arrivals.map((r) => r.headers['webhook-attempt'])).toEqual(Array.from({ length: attempts }, (_, i) => String(i + 1)));
  // Every failed attempt but the last was recorded with the time it ended and when the next is due.
  const retried = (await postern.store.liveFeed.after(org.id, '0-0', 10_000)).filter((e) => e.change.deliveryId === deliveryId && e.change.status === 'pending');
  expect(retried.map((e) => e.change.attempt)).toEqual(Array.from({ length: attempts - 1 }, (_, i) => i + 1));
  return {
    waits: retried.map((e) => (e.change.nextAttemptAt as number) - e.change.at),
    gaps: arrivals.slice(1).map((r, i) => r.at - (arrivals[i] as { at: number }).at),
  };
}

/** Each arrival gap is at least its scheduled wait: no retry runs early. */
function expectNoEarlyRetry({ waits, gaps }: Retries): void {
  gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(waits[i] as number));
}

test('fixed waits [100, 300, 600]: each retry waits exactly its wait, and arrives no earlier', async () => {
  const waits = [100, 300, 600];
  const retries = await runRetries({ maxAttempts: 4, schedule: { kind: 'fixed', waitsMs: waits }, jitterRatio: 0 }, 4);
  expect(retries.waits).toEqual(waits);
  expectNoEarlyRetry(retries);
});

test('random-up-to {floor 100, caps 200}: waits stay between floor and cap', async () => {
  const policy = { maxAttempts: 4, schedule: { kind: 'random-up-to', floorMs: 100, capsMs: [200, 200, 200] }, jitterRatio: 0 };
  const retries = await runRetries(policy, 4);
  for (const wait of retries.waits) {
    expect(wait).toBeGreaterThanOrEqual(100);
    expect(wait).toBeLessThanOrEqual(200);
  }
  expectNoEarlyRetry(retries);
});

test('random-up-to at the extremes of its range: the floor is a floor, the cap is reached', async () => {
  // r = 0 would be a zero wait without the floor; r ≈ 1 is the cap.
  forcedRandoms.push(0, HIGH);
  const policy = { maxAttempts: 3, schedule: { kind: 'random-up-to', floorMs: 100, capsMs: [300, 300] }, jitterRatio: 0 };
  const retries = await runRetries(policy, 3);
  const [low, high] = retries.waits as [number, number];
  expect(low).toBe(100);
  expect(high).toBeGreaterThanOrEqual(299);
  expect(high).toBeLessThanOrEqual(300);
  expectNoEarlyRetry(retries);
});

test('exponential-full-jitter {base 50, cap 200}: no wait exceeds the capped bound', async () => {
  const policy = { maxAttempts: 6, schedule: { kind: 'exponential-full-jitter', baseMs: 50, capMs: 200 }, jitterRatio: 0 };
  const retries = await runRetries(policy, 6);
  expect(retries.waits).toHaveLength(5);
  retries.waits.forEach((wait, i) => {
    expect(wait).toBeGreaterThanOrEqual(0);
    expect(wait).toBeLessThanOrEqual(Math.min(200, 50 * 2 ** i));
  });
  expectNoEarlyRetry(retries);
});

test('exponential-full-jitter at the top of its range doubles from the base and stops at the cap', async () => {
  forcedRandoms.push(HIGH, HIGH, HIGH, HIGH, HIGH);
  const policy = { maxAttempts: 6, schedule: { kind: 'exponential-full-jitter', baseMs: 50, capMs: 200 }, jitterRatio: 0 };
  const retries = await runRetries(policy, 6);
  // Bounds 50, 100, 200, then capped at 200 (uncapped they would be 400 and 800).
  const bounds = [50, 100, 200, 200, 200];
  retries.waits.forEach((wait, i) => {
    expect(wait).toBeGreaterThanOrEqual((bounds[i] as number) - 1);
    expect(wait).toBeLessThanOrEqual(bounds[i] as number);
  });
  expectNoEarlyRetry(retries);
});

test('jitterRatio 0.2 on fixed [300, 300]: waits within 300 ± 20 %', async () => {
  const policy = { maxAttempts: 3, schedule: { kind: 'fixed', waitsMs: [300, 300] }, jitterRatio: 0.2 };
  const retries = await runRetries(policy, 3);
  for (const wait of retries.waits) {
    expect(wait).toBeGreaterThanOrEqual(240);
    expect(wait).toBeLessThanOrEqual(360);
  }
  expectNoEarlyRetry(retries);
});

test('jitterRatio 0.2 at the top of its range lengthens a 300 ms wait to 360 ms', async () => {
  forcedRandoms.push(HIGH, HIGH);
  const policy = { maxAttempts: 3, schedule: { kind: 'fixed', waitsMs: [300, 300] }, jitterRatio: 0.2 };
  const retries = await runRetries(policy, 3);
  for (const wait of retries.waits) {
    expect(wait).toBeGreaterThanOrEqual(359);
    expect(wait).toBeLessThanOrEqual(360);
  }
  expectNoEarlyRetry(retries);
});

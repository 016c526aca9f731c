import { startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * One compressed run of each schedule kind through Redis and BullMQ, measured where users see
 * it: the gaps between attempts arriving at a receiver that always fails. A gap is the wait plus
 * one round trip and the queue's pick-up, so it is never below the wait and, on a loaded 2-core
 * machine, stays well within SLACK_MS above it.
 */
const SLACK_MS = 400;

/**
 * Values the sender's `random` hands out next (then Math.random). Forcing the extremes of a
 * range makes "the wait reached its bound" observable instead of a matter of luck.
 */
const forcedRandoms: number[] = [];
const HIGH = 0.999_999;

let postern: TestPostern;
let receiver: TestReceiver;
let apiKey: string;
let runs = 0;

beforeAll(async () => {
  postern = await startPostern({ random: () => forcedRandoms.shift() ?? Math.random() });
  receiver = await startReceiver(() => 500);
  apiKey = (await postern.createOrg()).apiKey;
});
afterEach(() => {
  forcedRandoms.length = 0;
});
afterAll(async () => {
  await postern.close();
  await receiver.close();
});

/** Sends one event to a new endpoint with `policy`; returns the gaps between its attempts' arrivals, ms. */
async function runGaps(policy: Record<string, unknown>, attempts: number): Promise<number[]> {
  // Each run has its own event type, so only its endpoint subscribes.
  const type = `schedule.probe${++runs}`;
  const endpoint = await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: [type], policy });
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type, data: {} } });
  expect(posted.status).toBe(202);
  expect(posted.body.deliveries).toEqual([{ id: expect.any(String), endpointId: endpoint.id }]);
  const deliveryId = posted.body.deliveries[0].id as string;
  const delivery = await waitUntil('delivery failed', async () => {
    const r = await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey });
    return r.body.status === 'failed' ? r.body : undefined;
  }, 15_000);

  expect(delivery.attemptCount).toBe(attempts);
  const arrivals = receiver.requests.filter((r) => r.headers['webhook-delivery-id'] === deliveryId);
  expect(arrivals.map((r) => r.headers['webhook-attempt'])).toEqual(Array.from({ length: attempts }, (_, i) => String(i + 1)));
  return arrivals.slice(1).map((r, i) => r.at - (arrivals[i] as { at: number }).at);
}

test('fixed waits [100, 300, 600]: each gap is at least its wait and not much more', async () => {
  const waits = [100, 300, 600];
  const gaps = await runGaps({ maxAttempts: 4, schedule: { kind: 'fixed', waitsMs: waits }, jitterRatio: 0 }, 4);
  gaps.forEach((gap, i) => {
    expect(gap).toBeGreaterThanOrEqual(waits[i] as number);
    expect(gap).toBeLessThan((waits[i] as number) + SLACK_MS);
  });
  // The waits are taken in order: the last gap is the longest.
  expect(gaps[2]).toBeGreaterThan(gaps[0] as number);
});

test('random-up-to {floor 100, caps 200}: gaps stay between floor and cap', async () => {
  const policy = { maxAttempts: 4, schedule: { kind: 'random-up-to', floorMs: 100, capsMs: [200, 200, 200] }, jitterRatio: 0 };
  const gaps = await runGaps(policy, 4);
  for (const gap of gaps) {
    expect(gap).toBeGreaterThanOrEqual(100);
    expect(gap).toBeLessThan(200 + SLACK_MS);
  }
});

test('random-up-to at the extremes of its range: the floor is a floor, the cap is reached', async () => {
  // r = 0 would be a zero wait without the floor; r ≈ 1 is the cap.
  forcedRandoms.push(0, HIGH);
  const policy = { maxAttempts: 3, schedule: { kind: 'random-up-to', floorMs: 100, capsMs: [300, 300] }, jitterRatio: 0 };
  const [low, high] = await runGaps(policy, 3);
  expect(low).toBeGreaterThanOrEqual(100);
  expect(low).toBeLessThan(100 + SLACK_MS);
  expect(high).toBeGreaterThanOrEqual(300);
  expect(high).toBeLessThan(300 + SLACK_MS);
});

test('exponential-full-jitter {base 50, cap 200}: no gap exceeds the capped bound', async () => {
  const policy = { maxAttempts: 6, schedule: { kind: 'exponential-full-jitter', baseMs: 50, capMs: 200 }, jitterRatio: 0 };
  const gaps = await runGaps(policy, 6);
  expect(gaps).toHaveLength(5);
  gaps.forEach((gap, i) => expect(gap).toBeLessThan(Math.min(200, 50 * 2 ** i) + SLACK_MS));
});

test('exponential-full-jitter at the top of its range doubles from the base and stops at the cap', async () => {
  forcedRandoms.push(HIGH, HIGH, HIGH, HIGH, HIGH);
  const policy = { maxAttempts: 6, schedule: { kind: 'exponential-full-jitter', baseMs: 50, capMs: 200 }, jitterRatio: 0 };
  const gaps = await runGaps(policy, 6);
  // Bounds 50, 100, 200, then capped at 200 (uncapped they would be 400 and 800).
  const bounds = [50, 100, 200, 200, 200];
  gaps.forEach((gap, i) => {
    expect(gap).toBeGreaterThanOrEqual((bounds[i] as number) - 1);
    expect(gap).toBeLessThan((bounds[i] as number) + SLACK_MS);
  });
});

test('jitterRatio 0.2 on fixed [300, 300]: gaps within 300 ± 20 %', async () => {
  const policy = { maxAttempts: 3, schedule: { kind: 'fixed', waitsMs: [300, 300] }, jitterRatio: 0.2 };
  const gaps = await runGaps(policy, 3);
  for (const gap of gaps) {
    expect(gap).toBeGreaterThanOrEqual(240);
    expect(gap).toBeLessThan(360 + SLACK_MS);
  }
});

test('jitterRatio 0.2 at the top of its range lengthens a 300 ms wait to 360 ms', async () => {
  forcedRandoms.push(HIGH, HIGH);
  const policy = { maxAttempts: 3, schedule: { kind: 'fixed', waitsMs: [300, 300] }, jitterRatio: 0.2 };
  const gaps = await runGaps(policy, 3);
  for (const gap of gaps) {
    // Without jitter this would be 300 plus a round trip, a few ms on loopback.
    expect(gap).toBeGreaterThanOrEqual(360);
    expect(gap).toBeLessThan(360 + SLACK_MS);
  }
});

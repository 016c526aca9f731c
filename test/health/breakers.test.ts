import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type ReceivedRequest, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Endpoint health and breakers end to end, one test per preset's breaker (docs/architecture.md breaker and
 * "back on" rows) with thresholds compressed to a few failures and streak times of 0.
 */

let postern: TestPostern;
const receivers: TestReceiver[] = [];

/** Concurrency limits high enough that no attempt in these tests waits for a slot. */
const ROOMY = { concurrency: { perEndpoint: 50, perOrg: 50 } };
const LONG_MS = 60_000;

beforeAll(async () => {
  postern = await startPostern({ senderConcurrency: 30 });
});
afterAll(async () => {
  await postern.close();
  for (const r of receivers) await r.close();
});

async function receiver(behaviour: Parameters<typeof startReceiver>[0]): Promise<TestReceiver> {
  const r = await startReceiver(behaviour);
  receivers.push(r);
  return r;
}

/** A fresh org per test, so each sees only its own notifications. */
async function newOrg(): Promise<string> {
  return (await postern.createOrg()).apiKey;
}

async function postEvent(key: string, data: unknown): Promise<{ eventId: string; deliveryIds: string[] }> {
  const r = await postern.api('POST', '/v1/events', { key, body: { type: 'invoice.paid', data } });
  expect(r.status).toBe(202);
  return { eventId: r.body.id, deliveryIds: (r.body.deliveries as { id: string }[]).map((d) => d.id) };
}

async function delivery(key: string, id: string): Promise<any> {
  const r = await postern.api('GET', `/v1/deliveries/${id}`, { key });
  expect(r.status).toBe(200);
  return r.body;
}

async function endpointOf(key: string, id: string): Promise<any> {
  const r = await postern.api('GET', `/v1/endpoints/${id}`, { key });
  expect(r.status).toBe(200);
  return r.body;
}

function waitForDelivery(key: string, id: string, what: string, check: (d: any) => boolean, timeoutMs = 5000): Promise<any> {
  return waitUntil(`delivery ${what}`, async () => {
    const d = await delivery(key, id);
    return check(d) ? d : undefined;
  }, timeoutMs);
}

function waitForEndpoint(key: string, id: string, status: string): Promise<any> {
  return waitUntil(`endpoint ${status}`, async () => {
    const e = await endpointOf(key, id);
    return e.status === status ? e : undefined;
  }, 5000);
}

async function notifications(key: string): Promise<any[]> {
  const r = await postern.api('GET', '/v1/notifications', { key });
  expect(r.status).toBe(200);
  return r.body.data;
}

/** Runs the given deliveries' delayed jobs now, then waits until none of them is queued any more. */
async function runDelayedJobsNow(deliveryIds: string[]): Promise<void> {
  for (const id of deliveryIds) {
    const job = await postern.queue.getJob(id);
    if (job && (await job.isDelayed())) await job.promote();
  }
  await waitUntil('the jobs of these deliveries gone', async () => {
    const jobs = await Promise.all(deliveryIds.map((id) => postern.queue.getJob(id)));
    return jobs.every((j) => !j) ? true : undefined;
  }, 5000);
}

const deliveryIdOf = (r: ReceivedRequest) => r.headers['webhook-delivery-id'] as string;
/** The producer's `data` of the event a request carries. */
const dataOf = (r: ReceivedRequest): unknown => (JSON.parse(r.body) as { data: unknown }).data;

/** A request the receiver keeps open until the test releases it with a status. */
function gate() {
  let release!: (status: number) => void;
  const answered = new Promise<number>((resolve) => (release = resolve));
  return { release, answered };
}

test('004-style: the breaker disables the endpoint, fails its pending deliveries, and only re-creating brings it back', async () => {
  const key = await newOrg();
  const hook = await receiver(() => 500);
  const endpoint = await postern.createEndpoint(key, {
    url: hook.url,
    policy: { preset: 'vestiarion', breaker: { threshold: 3 }, schedule: { kind: 'fixed', waitsMs: Array(6).fill(LONG_MS) }, ...ROOMY },
  });

  // Two deliveries fail once each and then wait a minute for their next attempt.
  const first = await postEvent(key, { n: 1 });
  await waitForDelivery(key, first.deliveryIds[0]!, 'failed once', (d) => d.attemptCount === 1 && d.status === 'pending');
  const second = await postEvent(key, { n: 2 });
  await waitForDelivery(key, second.deliveryIds[0]!, 'failed once', (d) => d.attemptCount === 1 && d.status === 'pending');
  expect(await endpointOf(key, endpoint.id)).toMatchObject({ status: 'active', consecutiveFailures: 2, disabledAt: null });

  // The third failed attempt trips the breaker.
  const third = await postEvent(key, { n: 3 });
  const disabled = await waitForEndpoint(key, endpoint.id, 'disabled');
  expect(disabled.consecutiveFailures).toBe(3);
  expect(Date.parse(disabled.disabledAt)).toBeGreaterThanOrEqual(Date.parse(disabled.lastFailureAt));
  expect(disabled.disabledReason).toEqual(expect.stringContaining('3 consecutive'));

  const ids = [first, second, third].map((e) => e.deliveryIds[0]!);
  const rows = await Promise.all(ids.map((id) => delivery(key, id)));
  expect(rows.map((d) => [d.status, d.lastError, d.nextAttemptAt, d.attempts.map((a: any) => a.error)])).toEqual(
    ids.map(() => ['failed', 'endpoint_inactive', null, ['http_500']]),
  );

  // Nothing new reaches a disabled endpoint: no delivery is created, and the retries once due send nothing.
  const later = await postEvent(key, { n: 4 });
  expect(later.deliveryIds).toEqual([]);
  await runDelayedJobsNow(ids);
  expect(hook.requests.map(deliveryIdOf)).toEqual(ids);

  const notes = await notifications(key);
  expect(notes).toEqual([
    expect.objectContaining({ kind: 'endpoint.disabled', endpointId: endpoint.id, consecutiveFailures: 3, deliveriesAffected: 3 }),
  ]);

  const resumed = await postern.api('POST', `/v1/endpoints/${endpoint.id}/resume`, { key });
  expect(resumed.status).toBe(409);
  expect(resumed.body.error.code).toBe('recreate_required');
  expect((await endpointOf(key, endpoint.id)).status).toBe('disabled');
});

test('002-style: 4xx answers pause the endpoint, 5xx do not count, deliveries stay pending and drain oldest first on resume', async () => {
  const key = await newOrg();
  const firstAnswer = gate();
  let draining = false;
  // Each event names how the receiver answers it; `hold` keeps its first request open for the test.
  const hook = await receiver(async (req) => {
    if (draining) return 200;
    const { answer } = dataOf(req) as { answer: number | 'hold' };
    return answer === 'hold' ? firstAnswer.answered : answer;
  });
  const endpoint = await postern.createEndpoint(key, {
    url: hook.url,
    policy: {
      preset: 'tourical',
      breaker: { threshold: 3, minStreakMs: 0 },
      schedule: { kind: 'fixed', waitsMs: [30, LONG_MS, LONG_MS, LONG_MS, LONG_MS] },
      ...ROOMY,
    },
  });

  const oldest = (await postEvent(key, { answer: 'hold' })).deliveryIds[0]!;
  await hook.waitForRequests(1);

  const fourOhFour = (await postEvent(key, { answer: 404 })).deliveryIds[0]!;
  await waitForDelivery(key, fourOhFour, 'failed twice', (d) => d.attemptCount === 2 && d.status === 'pending');
  const afterFourOhFours = await endpointOf(key, endpoint.id);
  expect(afterFourOhFours).toMatchObject({ status: 'active', consecutiveFailures: 2 });

  const fiveHundred = (await postEvent(key, { answer: 500 })).deliveryIds[0]!;
  const failedTwice = await waitForDelivery(key, fiveHundred, 'failed twice', (d) => d.attemptCount === 2 && d.status === 'pending');
  expect(failedTwice.attempts.map((a: any) => a.error)).toEqual(['http_500', 'http_500']);
  const afterFiveHundreds = await endpointOf(key, endpoint.id);
  // The breaker's streak ignores the 5xx; the endpoint's health still shows them (issue 14).
  expect(afterFiveHundreds).toMatchObject({ status: 'active', consecutiveFailures: 2, failedAttempts: 4, consecutiveFailedAttempts: 4 });
  expect(Date.parse(afterFiveHundreds.lastFailureAt)).toBeGreaterThan(Date.parse(afterFourOhFours.lastFailureAt));

  // The third 404 pauses the endpoint; the oldest delivery's retry then comes due while paused.
  firstAnswer.release(404);
  const paused = await waitForEndpoint(key, endpoint.id, 'paused');
  expect(paused.consecutiveFailures).toBe(3);
  await waitUntil('the oldest delivery\'s retry ran while paused', async () => ((await postern.queue.getJob(oldest)) ? undefined : true), 5000);
  const created = [oldest, fourOhFour, fiveHundred];
  const held = await Promise.all(created.map((id) => delivery(key, id)));
  expect(held.map((d) => [d.status, d.held, d.cancelReason])).toEqual(created.map(() => ['pending', true, null]));
  expect(hook.requests).toHaveLength(5);
  expect(await notifications(key)).toEqual([expect.objectContaining({ kind: 'endpoint.paused', endpointId: endpoint.id, deliveriesAffected: 3 })]);

  // One attempt at a time, so arrival order is the order the sender took them in.
  await postern.stopSender();
  await postern.startSender({ concurrency: 1 });
  try {
    draining = true;
    const resumed = await postern.api('POST', `/v1/endpoints/${endpoint.id}/resume`, { key });
    expect(resumed.status).toBe(200);
    expect(resumed.body).toMatchObject({ status: 'active', consecutiveFailures: 0, requeued: 3 });
    await hook.waitForRequests(8);
    const drained = await Promise.all(created.map((id) => waitForDelivery(key, id, 'succeeded', (d) => d.status === 'succeeded')));
    expect(hook.requests.slice(5).map(deliveryIdOf)).toEqual(created);
    expect(drained.map((d) => [d.held, d.attemptCount])).toEqual([[false, 2], [false, 3], [false, 3]]);
    expect((await endpointOf(key, endpoint.id)).consecutiveFailures).toBe(0);
  } finally {
    await postern.stopSender();
    await postern.startSender();
  }
});

test('003-style: a breaker counting deliveries ignores single attempts, disables after 2 failed deliveries, holds the rest for replay', async () => {
  const key = await newOrg();
  const lastAnswer = gate();
  let holdNext = true;
  // An event marked `hold` has its first request kept open by the test; everything else gets 500.
  const hook = await receiver(async (req) => {
    if ((dataOf(req) as { hold?: boolean }).hold && holdNext) {
      holdNext = false;
      return lastAnswer.answered;
    }
    return 500;
  });
  const endpoint = await postern.createEndpoint(key, {
    url: hook.url,
    policy: { preset: 'kestrel', maxAttempts: 3, schedule: { kind: 'fixed', waitsMs: [20, 20] }, breaker: { threshold: 2 }, ...ROOMY },
  });

  const firstFailed = (await postEvent(key, { n: 1 })).deliveryIds[0]!;
  const exhausted = await waitForDelivery(key, firstFailed, 'failed', (d) => d.status === 'failed');
  expect(exhausted.attempts.map((a: any) => a.error)).toEqual(['http_500', 'http_500', 'http_500']);
  expect(await endpointOf(key, endpoint.id)).toMatchObject({ status: 'active', consecutiveFailures: 1 });

  // A third delivery's first request stays open while the second delivery fails for good.
  const later = (await postEvent(key, { hold: true })).deliveryIds[0]!;
  await hook.waitForRequests(4);
  const secondFailed = (await postEvent(key, { n: 2 })).deliveryIds[0]!;
  await waitForDelivery(key, secondFailed, 'failed', (d) => d.status === 'failed');
  const disabled = await waitForEndpoint(key, endpoint.id, 'disabled');
  expect(disabled.consecutiveFailures).toBe(2);

  lastAnswer.release(500);
  const held = await waitForDelivery(key, later, 'held', (d) => d.held === true);
  expect(held).toMatchObject({ status: 'pending', attemptCount: 1 });
  expect((await endpointOf(key, endpoint.id)).consecutiveFailures).toBe(2);
  expect(await notifications(key)).toEqual([expect.objectContaining({ kind: 'endpoint.disabled', endpointId: endpoint.id })]);
  expect(hook.requests.filter((r) => deliveryIdOf(r) === later)).toHaveLength(1);

  hook.setBehaviour(() => 200);
  const resumed = await postern.api('POST', `/v1/endpoints/${endpoint.id}/resume`, { key });
  expect(resumed.status).toBe(200);
  expect(resumed.body).toMatchObject({ status: 'active', disabledAt: null, disabledReason: null, requeued: 1 });
  const replayed = await waitForDelivery(key, later, 'succeeded', (d) => d.status === 'succeeded');
  expect(replayed.attempts.map((a: any) => a.error)).toEqual(['http_500', null]);
  expect(hook.requests.filter((r) => deliveryIdOf(r) === later).map((r) => r.headers['webhook-attempt'])).toEqual(['1', '2']);
  // Failed deliveries are not replayed by resuming.
  expect(hook.requests.filter((r) => deliveryIdOf(r) === firstFailed || deliveryIdOf(r) === secondFailed)).toHaveLength(6);
});

test('001-style: the breaker cancels pending deliveries; after resume, redeliver-failed sends the failed and breaker-cancelled ones once', async () => {
  const key = await newOrg();
  const openAnswer = gate();
  // An event marked `hold` has its first request kept open by the test; everything else gets 500.
  const hook = await receiver(async (req, n) => ((dataOf(req) as { hold?: boolean }).hold && n === 3 ? openAnswer.answered : 500));
  const endpoint = await postern.createEndpoint(key, {
    url: hook.url,
    policy: {
      preset: 'jitter-45h',
      maxAttempts: 2,
      schedule: { kind: 'random-up-to', floorMs: 10, capsMs: [20] },
      breaker: { threshold: 3, minStreakMs: 0 },
      ...ROOMY,
    },
  });

  const exhausted = await postEvent(key, { n: 1 });
  await waitForDelivery(key, exhausted.deliveryIds[0]!, 'failed', (d) => d.status === 'failed');
  const inFlight = await postEvent(key, { hold: true });
  await hook.waitForRequests(3);
  const cut = await postEvent(key, { n: 2 });
  await waitForEndpoint(key, endpoint.id, 'disabled');
  const cancelled = await waitForDelivery(key, cut.deliveryIds[0]!, 'cancelled', (d) => d.status !== 'pending' && d.status !== 'in_flight');
  expect(cancelled).toMatchObject({ status: 'cancelled', cancelReason: 'breaker_tripped', attemptCount: 1 });
  expect(await notifications(key)).toEqual([expect.objectContaining({ kind: 'endpoint.disabled', deliveriesAffected: 1 })]);

  // The attempt in flight during the trip fails too; its retry then finds the endpoint switched off by the breaker.
  openAnswer.release(500);
  const cancelledLater = await waitForDelivery(key, inFlight.deliveryIds[0]!, 'cancelled', (d) => d.status === 'cancelled');
  expect(cancelledLater).toMatchObject({ cancelReason: 'breaker_tripped', attemptCount: 1 });

  hook.setBehaviour(() => 200);
  const resumed = await postern.api('POST', `/v1/endpoints/${endpoint.id}/resume`, { key });
  expect(resumed.status).toBe(200);
  expect(resumed.body).toMatchObject({ status: 'active', requeued: 0 });
  await runDelayedJobsNow(cut.deliveryIds);
  expect(hook.requests).toHaveLength(4);

  const bulk = await postern.api('POST', `/v1/endpoints/${endpoint.id}/redeliver-failed`, { key });
  expect(bulk.status).toBe(202);
  expect(bulk.body).toEqual({ count: 3, remaining: 0 });
  const redelivered = (await hook.waitForRequests(7)).slice(4);
  expect(new Set(redelivered.map((r) => r.headers['webhook-id']))).toEqual(new Set([exhausted.eventId, inFlight.eventId, cut.eventId]));
  expect(redelivered.map((r) => r.headers['webhook-attempt'])).toEqual(['1', '1', '1']);

  const log = await waitUntil('the redeliveries succeeded', async () => {
    const r = await postern.api('GET', `/v1/endpoints/${endpoint.id}/deliveries?status=succeeded`, { key });
    return r.body.data.length === 3 ? r.body.data : undefined;
  });
  const originals = [exhausted, inFlight, cut].map((e) => e.deliveryIds[0]);
  expect(log.map((d: any) => d.redeliveredFromId).sort()).toEqual(originals.sort());

  const again = await postern.api('POST', `/v1/endpoints/${endpoint.id}/redeliver-failed`, { key });
  expect(again.status).toBe(202);
  expect(again.body).toEqual({ count: 0, remaining: 0 });
});

test('deliveries failing at the same moment past the threshold trip the breaker once, with one notification', async () => {
  const key = await newOrg();
  // More failures than the threshold: every attempt finishing at or past it tries to trip.
  const total = 25;
  const allIn = gate();
  const hook = await receiver(async (_req, n) => {
    if (n === total) allIn.release(500);
    return allIn.answered;
  });
  const endpoint = await postern.createEndpoint(key, {
    url: hook.url,
    policy: { preset: 'vestiarion', maxAttempts: 1, schedule: { kind: 'fixed', waitsMs: [] }, breaker: { threshold: 20 }, ...ROOMY },
  });

  const posted = await Promise.all(Array.from({ length: total }, (_, n) => postEvent(key, { n })));
  const ids = posted.map((p) => p.deliveryIds[0]!);
  await hook.waitForRequests(total);
  const rows = await Promise.all(ids.map((id) => waitForDelivery(key, id, 'failed', (d) => d.status === 'failed')));
  expect(rows.every((d) => d.lastError === 'http_500' || d.lastError === 'endpoint_inactive')).toBe(true);

  const disabled = await waitForEndpoint(key, endpoint.id, 'disabled');
  expect(disabled.consecutiveFailures).toBe(total);
  const notes = await notifications(key);
  expect(notes).toHaveLength(1);
  expect(notes[0]).toMatchObject({ kind: 'endpoint.disabled', endpointId: endpoint.id });
  expect(notes[0].consecutiveFailures).toBeGreaterThanOrEqual(20);
});

test('a success resets the failure streak; the endpoint shows its health fields', async () => {
  const key = await newOrg();
  const third = gate();
  const hook = await receiver(async (_req, n) => (n <= 2 ? 500 : third.answered));
  const endpoint = await postern.createEndpoint(key, { url: hook.url, policy: fastPolicy(3, 20, ROOMY) });
  const fresh = await endpointOf(key, endpoint.id);
  expect(fresh).toMatchObject({ consecutiveFailures: 0, lastSuccessAt: null, lastFailureAt: null, disabledAt: null, disabledReason: null });

  const { deliveryIds } = await postEvent(key, { n: 1 });
  await hook.waitForRequests(3);
  const failing = await endpointOf(key, endpoint.id);
  expect(failing).toMatchObject({ status: 'active', consecutiveFailures: 2, lastSuccessAt: null });
  expect(failing.lastFailureAt).not.toBeNull();
  expect(failing.failureStreakStartedAt).not.toBeNull();

  third.release(200);
  await waitForDelivery(key, deliveryIds[0]!, 'succeeded', (d) => d.status === 'succeeded');
  const healthy = await endpointOf(key, endpoint.id);
  expect(healthy).toMatchObject({ status: 'active', consecutiveFailures: 0, failureStreakStartedAt: null, lastFailureAt: failing.lastFailureAt });
  expect(Date.parse(healthy.lastSuccessAt)).toBeGreaterThanOrEqual(Date.parse(failing.lastFailureAt));
});

test('under a steady stream of successes lastSuccessAt trails the latest success by at most a second', async () => {
  const key = await newOrg();
  const hook = await receiver(async () => 200);
  const endpoint = await postern.createEndpoint(key, { url: hook.url, policy: fastPolicy(3, 20, ROOMY) });
  const stored: number[] = [];
  for (let n = 0; n < 5; n += 1) {
    const { deliveryIds } = await postEvent(key, { n });
    const done = await waitForDelivery(key, deliveryIds[0]!, 'succeeded', (d) => d.status === 'succeeded');
    const finishedAt = Date.parse(done.finishedAt);
    const lastSuccessAt = Date.parse((await endpointOf(key, endpoint.id)).lastSuccessAt);
    expect(lastSuccessAt).toBeLessThanOrEqual(finishedAt);
    expect(lastSuccessAt).toBeGreaterThanOrEqual(finishedAt - 1000);
    // Rewritten only once the stored one is more than a second older than this success.
    const previous = stored.at(-1);
    if (previous !== undefined && finishedAt - previous <= 1000) expect(lastSuccessAt).toBe(previous);
    stored.push(lastSuccessAt);
  }
});

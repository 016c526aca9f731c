import { startPostern, fastPolicy, TEST_REDIS_URL, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';
import { killAllApps, spawnSender, waitForSenders, type AppProcess } from './support/app-process.js';
import { postEvents } from './support/load.js';

/**
 * A sender SIGKILLed while it holds every slot of an endpoint: the endpoint resumes within 10 s of
 * the kill (README, "Crashes and restarts"), whether another sender is alive or the sender is
 * restarted right away. Default lock, stalled-check and park safety settings on purpose: the
 * takeover, not a shortened lock, is what brings the endpoint back.
 */

/** The product bound: an endpoint resumes at most this long after its sender died (or restarted). */
const RESUME_BOUND_MS = 10_000;
const EVENTS = 100;
/** Requests answered (200 ms each) before the receiver starts holding them, so the kill lands mid-load. */
const ANSWERED_BEFORE_HOLD = 30;
const PER_ENDPOINT = 4;

let postern: TestPostern;
let receiver: TestReceiver;
/** This test's endpoint path at the receiver: each test has its own, so one test's leftovers never count in the next. */
let path = '';
/** While set, requests past {@link ANSWERED_BEFORE_HOLD} are held until it resolves. */
let holding: { open: () => void; opened: Promise<void> } | null = null;

function startHolding(): void {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  holding = { open, opened };
}

beforeAll(async () => {
  postern = await startPostern({ sender: false });
  receiver = await startReceiver(async (req) => {
    if (holding && req.path === path && requestsOfTest().length > ANSWERED_BEFORE_HOLD) await holding.opened;
    await new Promise((resolve) => setTimeout(resolve, 200));
    return 200;
  });
});
afterAll(async () => {
  holding?.open();
  await killAllApps();
  await receiver?.close();
  await postern?.close();
});

let testNumber = 0;
beforeEach(() => {
  testNumber += 1;
  path = `/hook${testNumber}`;
  startHolding();
});
afterEach(async () => {
  holding?.open();
  await killAllApps();
});

/** The requests of the running test's endpoint. */
function requestsOfTest() {
  return receiver.requests.filter((r) => r.path === path);
}

/**
 * Sets up an endpoint (4 per endpoint), starts `first`, posts the events, and waits until the
 * receiver holds 4 requests after answering some: `first` then holds every slot of the endpoint.
 */
async function loadUntilSlotsHeld(first: AppProcess) {
  const { apiKey, id: orgId } = await postern.createOrg();
  const endpoint = await postern.createEndpoint(apiKey, { url: receiver.url.replace(/\/hook$/, path), policy: fastPolicy(3, 20, { concurrency: { perEndpoint: PER_ENDPOINT, perOrg: 20 } }) });
  await waitForSenders(postern.queue, 1, [first]);
  const deliveryIds = (await postEvents(postern.api, apiKey, EVENTS)).flatMap((e) => e.deliveryIds);
  expect(deliveryIds).toHaveLength(EVENTS);
  await waitUntil('the endpoint\'s slots held by the first sender', () => requestsOfTest().length >= ANSWERED_BEFORE_HOLD + PER_ENDPOINT, 30_000);
  const inFlight = await postern.store.deliveries.listByEndpoint(orgId, endpoint.id as string, { status: 'in_flight', limit: 100 });
  expect(inFlight.items).toHaveLength(PER_ENDPOINT);
  return { orgId, endpointId: endpoint.id as string, deliveryIds, inFlightAtKill: new Set(inFlight.items.map((d) => d.id)) };
}

/**
 * Waits for a request that arrived after `sinceMs`, at most until `boundFromMs` (default
 * `sinceMs`) + the bound; returns its delay after `sinceMs`.
 */
async function firstRequestAfter(sinceMs: number, what: string, output: () => string, boundFromMs = sinceMs): Promise<number> {
  const request = await waitUntil(what, () => requestsOfTest().find((r) => r.at > sinceMs), Math.max(0, boundFromMs + RESUME_BOUND_MS - Date.now())).catch((err: Error) => {
    throw new Error(`${err.message}\n${output()}`);
  });
  return request.at - sinceMs;
}

/** Every delivery succeeded, each request beyond the first only for what was in flight at the kill, attempt numbers not spent twice, slots given back. */
async function expectAllDelivered(run: Awaited<ReturnType<typeof loadUntilSlotsHeld>>, output: () => string): Promise<void> {
  await waitUntil('every delivery succeeded', async () => {
    const ds = await postern.store.deliveries.getMany(run.orgId, run.deliveryIds);
    return ds.every((d) => d.status === 'succeeded');
  }, 30_000, 100).catch((err: Error) => {
    throw new Error(`${err.message}\n${output()}`);
  });
  const perDelivery = new Map<string, number>();
  for (const r of requestsOfTest()) {
    const id = String(r.headers['webhook-delivery-id']);
    perDelivery.set(id, (perDelivery.get(id) ?? 0) + 1);
  }
  expect(perDelivery.size).toBe(EVENTS);
  for (const [id, n] of perDelivery) {
    if (n > 1) expect(run.inFlightAtKill).toContain(id);
    expect(n).toBeLessThanOrEqual(2);
  }
  expect(requestsOfTest().filter((r) => r.headers['webhook-attempt'] !== '1')).toEqual([]);
  const ds = await postern.store.deliveries.getMany(run.orgId, run.deliveryIds);
  expect(ds.filter((d) => d.attempts !== 1).map((d) => d.id)).toEqual([]);
  expect(await postern.store.leases.inFlight(run.orgId, run.endpointId, Date.now())).toBe(0);
}

const senderEnv = () => ({ REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: postern.prefix, SENDER_CONCURRENCY: '20' });

test('one of two senders SIGKILLed holding every slot of an endpoint: the other takes over within 10 s', async () => {
  const first = spawnSender(senderEnv());
  const run = await loadUntilSlotsHeld(first);
  const second = spawnSender(senderEnv());
  await waitForSenders(postern.queue, 2, [first, second]);

  const killedAt = Date.now();
  await first.kill();
  holding?.open();
  const resumedAfterMs = await firstRequestAfter(killedAt, 'a request after the kill', second.output);
  console.info(`takeover: the endpoint resumed ${resumedAfterMs} ms after the kill`);
  await expectAllDelivered(run, second.output);
}, 90_000);

test('the only sender SIGKILLed and restarted at once: the new one takes over within 10 s', async () => {
  const first = spawnSender(senderEnv());
  const run = await loadUntilSlotsHeld(first);

  await first.kill();
  holding?.open();
  const restartedAt = Date.now();
  const second = spawnSender(senderEnv());
  // The bound runs from when the new process could work (on a busy machine a Node process can take
  // seconds to start): until then nobody is alive to take anything over.
  await waitForSenders(postern.queue, 1, [second]);
  const readyAt = Date.now();
  const resumedAfterMs = await firstRequestAfter(restartedAt, 'a request after the restart', second.output, Math.max(restartedAt, readyAt));
  console.info(`takeover: the endpoint resumed ${resumedAfterMs} ms after the restart`);
  await expectAllDelivered(run, second.output);
}, 90_000);

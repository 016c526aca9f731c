import { startPostern, fastPolicy, TEST_REDIS_URL, type TestPostern } from '../support/postern.js';
import { countingReceiver, type CountingReceiver } from '../support/counting-receiver.js';
import { waitUntil } from '../support/wait-until.js';
import { killAllApps, spawnSender, waitForSenders, type AppProcess } from './support/app-process.js';
import { postEvents } from './support/load.js';

/**
 * Issue 5, crash safety: a sender SIGKILLed mid-load, a new one started. Every accepted delivery
 * ends succeeded; the only duplicates at the receiver are of deliveries that were in flight at the
 * kill; no attempt is spent twice.
 */

const SENDER_ENV = {
  REDIS_URL: TEST_REDIS_URL,
  SENDER_CONCURRENCY: '20',
  // A killed sender's jobs come back after their lock expires: seconds here, not the default 30 s.
  JOB_LOCK_DURATION_MS: '2000',
  STALLED_CHECK_INTERVAL_MS: '500',
  // A delivery whose wake-up died with the killed sender (it had released a slot and named whom
  // to wake, then was killed before waking them) looks again after this: seconds here, not 1–2 min.
  PARK_SAFETY_DELAY_MS: '2000',
};

let postern: TestPostern;
let counting: CountingReceiver;

beforeAll(async () => {
  postern = await startPostern({ sender: false });
  counting = await countingReceiver(100);
});
afterAll(async () => {
  await killAllApps();
  await counting?.receiver.close();
  await postern?.close();
});

test('SIGKILL mid-load, then a new sender: all succeed, duplicates only of what was in flight, attempts not double-spent', async () => {
  const { apiKey, id: orgId } = await postern.createOrg();
  const base = counting.receiver.url.replace(/\/hook$/, '');
  const endpointIds: string[] = [];
  for (let i = 0; i < 5; i++) {
    const ep = await postern.createEndpoint(apiKey, { url: `${base}/ep${i}`, policy: fastPolicy(3, 20) });
    endpointIds.push(ep.id);
  }
  const first: AppProcess = spawnSender({ ...SENDER_ENV, REDIS_PREFIX: postern.prefix });
  await waitForSenders(postern.queue, 1, [first]);
  const deliveryIds = (await postEvents(postern.api, apiKey, 80)).flatMap((e) => e.deliveryIds);
  expect(deliveryIds).toHaveLength(400);

  await waitUntil('100 requests answered', () => counting.answered() >= 100, 20_000);
  await first.kill();
  // Nothing changes these any more: the one sender is dead.
  const inFlightAtKill = new Set<string>();
  for (const id of endpointIds) {
    const page = await postern.store.deliveries.listByEndpoint(orgId, id, { status: 'in_flight', limit: 100 });
    for (const d of page.items) inFlightAtKill.add(d.id);
  }
  const requestsAtKill = counting.receiver.requests.length;
  expect(inFlightAtKill.size).toBeGreaterThan(0);
  expect(requestsAtKill).toBeLessThan(400);

  const second = spawnSender({ ...SENDER_ENV, REDIS_PREFIX: postern.prefix });
  await waitUntil('every delivery succeeded', async () => {
    const ds = await postern.store.deliveries.getMany(orgId, deliveryIds);
    return ds.every((d) => d.status === 'succeeded');
  }, 30_000, 100).catch((err: Error) => {
    throw new Error(`${err.message}\n${second.output()}`);
  });

  const duplicated = [...counting.perDelivery()].filter(([, n]) => n > 1);
  const duplicates = duplicated.reduce((sum, [, n]) => sum + n - 1, 0);
  console.info(`sigkill: ${inFlightAtKill.size} deliveries in flight at the kill, ${duplicates} duplicate requests at the receiver`);
  expect(duplicates).toBeLessThanOrEqual(inFlightAtKill.size);
  for (const [id] of duplicated) expect(inFlightAtKill).toContain(id);
  expect(counting.perDelivery().size).toBe(400);

  // Attempts not double-spent: a re-run of an interrupted attempt keeps its number.
  const ds = await postern.store.deliveries.getMany(orgId, deliveryIds);
  expect(ds.filter((d) => d.attempts !== 1).map((d) => d.id)).toEqual([]);
  expect(counting.receiver.requests.filter((r) => r.headers['webhook-attempt'] !== '1')).toEqual([]);
  const attempts = await Promise.all([...inFlightAtKill].map((id) => postern.store.deliveries.getAttempts(orgId, id)));
  expect(attempts.every((a) => a.length === 1 && a[0]!.number === 1)).toBe(true);

  // The killed sender's slots came back.
  const leased = await Promise.all(endpointIds.map((id) => postern.store.leases.inFlight(orgId, id, Date.now())));
  expect(leased).toEqual(endpointIds.map(() => 0));
}, 60_000);

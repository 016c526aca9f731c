import { pino } from 'pino';
import { createReconciler, type Reconciler } from '@postern/sender';
import { parseDeliveryJob } from '@postern/store';
import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';
import { postEvents } from './support/load.js';

/**
 * How the reconciler finds the unfinished deliveries: in each endpoint's `pending` and
 * `in_flight` indexes (held ones are pending), at live endpoints and at deleted ones whose log is
 * still kept, a bounded step at a time, each step going on where the last one stopped.
 */

let receiver: TestReceiver;
const opened: TestPostern[] = [];

beforeAll(async () => {
  receiver = await startReceiver(() => 200);
});
afterAll(async () => {
  await Promise.all(opened.map((p) => p.close()));
  await receiver?.close();
});

/** A Postern of its own (its own prefix, so its sweep meets only this test's orgs), without a sender. */
async function freshPostern(): Promise<TestPostern> {
  const postern = await startPostern({ sender: false });
  opened.push(postern);
  return postern;
}

function reconcilerOf(postern: TestPostern, graceMs = 0): Reconciler {
  return createReconciler({ store: postern.store, queues: postern.queues, clock: { now: () => Date.now() }, logger: pino({ level: 'silent' }), graceMs });
}

async function removeJobs(postern: TestPostern, ids: readonly string[]): Promise<void> {
  for (const id of ids) await (await postern.queue.getJob(id))!.remove();
}

async function withJob(postern: TestPostern, ids: readonly string[]): Promise<string[]> {
  const found = await Promise.all(ids.map(async (id) => ((await postern.queue.getJob(id)) ? id : null)));
  return found.filter((id): id is string => id !== null);
}

test('a pending and an in-flight delivery whose job was removed are re-queued, at every endpoint of the org', async () => {
  const postern = await freshPostern();
  const { apiKey, id: orgId } = await postern.createOrg();
  const first = await postern.createEndpoint(apiKey, { url: receiver.url, policy: fastPolicy(3, 20) });
  const second = await postern.createEndpoint(apiKey, { url: receiver.url, policy: fastPolicy(3, 20) });
  const [event] = await postEvents(postern.api, apiKey, 1);
  const deliveries = await postern.store.deliveries.getMany(orgId, event!.deliveryIds);
  const atSecond = deliveries.find((d) => d.endpointId === second.id)!;
  const atFirst = deliveries.find((d) => d.endpointId === first.id)!;
  // A sender began the attempt at the second endpoint and died with it; both jobs are gone.
  const claimed = await postern.store.attempts.claim({ deliveryId: atSecond.id, endpointId: second.id, eventId: event!.eventId, orgId }, Date.now());
  expect(claimed.kind).toBe('claimed');
  await removeJobs(postern, [atFirst.id, atSecond.id]);
  expect((await postern.store.deliveries.getMany(orgId, [atFirst.id, atSecond.id])).map((d) => d.status)).toEqual(['pending', 'in_flight']);

  // Younger than the grace: left alone.
  expect(await reconcilerOf(postern, 60_000).runOnce()).toEqual({ checked: 0, requeued: 0 });
  expect(await withJob(postern, [atFirst.id, atSecond.id])).toEqual([]);

  expect(await reconcilerOf(postern).runOnce()).toEqual({ checked: 2, requeued: 2 });
  expect(await withJob(postern, [atFirst.id, atSecond.id])).toEqual([atFirst.id, atSecond.id]);
  const job = (await postern.queue.getJob(atSecond.id))!;
  expect(parseDeliveryJob(job.id, job.data)).toMatchObject({ deliveryId: atSecond.id, endpointId: second.id, orgId });
  // Both have their job now: the next sweep makes none.
  expect(await reconcilerOf(postern).runOnce()).toEqual({ checked: 2, requeued: 0 });
});

test('a sweep over more deliveries than one step takes goes on where the last step stopped', async () => {
  const postern = await freshPostern();
  // Two orgs of three endpoints, 4 events each: 24 deliveries, some in flight, in steps of 5.
  const all: string[] = [];
  for (let o = 0; o < 2; o++) {
    const { apiKey, id: orgId } = await postern.createOrg();
    for (let e = 0; e < 3; e++) await postern.createEndpoint(apiKey, { url: receiver.url, policy: fastPolicy(3, 20, { concurrency: { perEndpoint: 20, perOrg: 20 } }) });
    const events = await postEvents(postern.api, apiKey, 4, 1);
    for (const event of events.slice(0, 2)) {
      for (const d of await postern.store.deliveries.getMany(orgId, event.deliveryIds)) {
        expect((await postern.store.attempts.claim({ deliveryId: d.id, endpointId: d.endpointId, eventId: event.eventId, orgId }, Date.now())).kind).toBe('claimed');
      }
    }
    all.push(...events.flatMap((e) => e.deliveryIds));
  }
  expect(all).toHaveLength(24);
  await removeJobs(postern, all);

  const reconciler = reconcilerOf(postern);
  const steps: { checked: number; requeued: number }[] = [];
  for (let i = 0; i < 5; i++) steps.push(await reconciler.runOnce(5));
  // Each step takes the next 5 (never one already re-queued again); the fifth ends the sweep with
  // the last 4, and the next step starts over, finding every job in place.
  expect(steps).toEqual([
    { checked: 5, requeued: 5 },
    { checked: 5, requeued: 5 },
    { checked: 5, requeued: 5 },
    { checked: 5, requeued: 5 },
    { checked: 4, requeued: 4 },
  ]);
  expect(await reconciler.runOnce(5)).toEqual({ checked: 5, requeued: 0 });
  expect(await withJob(postern, all)).toEqual(all);
});

test('a queued delivery of a deleted endpoint whose job was removed is re-queued, and then cancelled as endpoint_deleted', async () => {
  const postern = await freshPostern();
  const { apiKey, id: orgId } = await postern.createOrg();
  const endpoint = await postern.createEndpoint(apiKey, { url: receiver.url, policy: fastPolicy(3, 20) });
  const [event] = await postEvents(postern.api, apiKey, 1);
  const deliveryId = event!.deliveryIds[0]!;
  expect((await postern.api('DELETE', `/v1/endpoints/${endpoint.id}`, { key: apiKey })).status).toBe(204);
  await removeJobs(postern, [deliveryId]);

  expect(await reconcilerOf(postern).runOnce()).toEqual({ checked: 1, requeued: 1 });
  expect(await withJob(postern, [deliveryId])).toEqual([deliveryId]);

  const requestsBefore = receiver.requests.length;
  await postern.startSender();
  const cancelled = await waitUntil('the delivery ended', async () => {
    const [d] = await postern.store.deliveries.getMany(orgId, [deliveryId]);
    return d && d.status !== 'pending' && d.status !== 'in_flight' ? d : undefined;
  }, 10_000, 50);
  expect([cancelled.status, cancelled.cancelReason, cancelled.attempts]).toEqual(['cancelled', 'endpoint_deleted', 0]);
  expect(receiver.requests.length).toBe(requestsBefore);
});

test("the org's own index of unfinished deliveries that earlier releases kept is deleted as the sweep passes the org", async () => {
  const postern = await freshPostern();
  const orgs = [await postern.createOrg(), await postern.createOrg()];
  const legacyKeys = orgs.map(({ id }) => postern.store.keys.legacyUnfinishedDeliveries(id));
  for (const { apiKey, id: orgId } of orgs) {
    await postern.createEndpoint(apiKey, { url: receiver.url, policy: fastPolicy(3, 20) });
    const [event] = await postEvents(postern.api, apiKey, 1);
    // What an earlier release wrote at ingest; nothing writes it now.
    await postern.redis.zadd(postern.store.keys.legacyUnfinishedDeliveries(orgId), Date.now(), event!.deliveryIds[0]!);
  }
  expect(await postern.redis.exists(...legacyKeys)).toBe(2);

  // The step that reaches the second org (one delivery per step) deletes its index only then.
  const reconciler = reconcilerOf(postern);
  expect(await reconciler.runOnce(1)).toEqual({ checked: 1, requeued: 0 });
  expect([await postern.redis.exists(legacyKeys[0]!), await postern.redis.exists(legacyKeys[1]!)]).toEqual([0, 1]);
  expect(await reconciler.runOnce(1)).toEqual({ checked: 1, requeued: 0 });
  expect(await postern.redis.exists(...legacyKeys)).toBe(0);
});

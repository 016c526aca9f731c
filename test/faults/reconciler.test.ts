import { pino } from 'pino';
import { createReconciler } from '@postern/sender';
import { deliveryJobData, deliveryJobOptions } from '@postern/store';
import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';
import { postEvents } from './support/load.js';

/**
 * Issue 5: a delivery whose queue job vanished (removed by hand here; in life, Redis restored from
 * an older snapshot) is found and re-queued by the reconciler, which never makes a second job for a
 * delivery that has one. Also measures one run's cost over a batch of unfinished deliveries.
 */

const DELIVERIES = 500;
const REMOVED = 50;

let postern: TestPostern;
let receiver: TestReceiver;

beforeAll(async () => {
  postern = await startPostern({ sender: false });
  receiver = await startReceiver();
});
afterAll(async () => {
  await postern?.close();
  await receiver?.close();
});

async function jobCount(): Promise<number> {
  const counts = await postern.queue.getJobCounts('waiting', 'delayed', 'active', 'prioritized', 'completed', 'failed');
  return Object.values(counts).reduce((a, b) => a + b, 0);
}

test('re-queues exactly the deliveries whose job vanished, never a second job, and they are delivered once', async () => {
  const { apiKey, id: orgId } = await postern.createOrg();
  // Limits out of the way: this test is about jobs, not slots.
  await postern.createEndpoint(apiKey, { url: receiver.url, policy: fastPolicy(3, 20, { concurrency: { perEndpoint: 20, perOrg: 20 } }) });
  const deliveryIds = (await postEvents(postern.api, apiKey, DELIVERIES)).flatMap((e) => e.deliveryIds);
  expect(await jobCount()).toBe(DELIVERIES);

  const vanished = deliveryIds.slice(100, 100 + REMOVED);
  for (const id of vanished) await (await postern.queue.getJob(id))!.remove();
  expect(await jobCount()).toBe(DELIVERIES - REMOVED);
  // One of the survivors waits for a retry, as a scheduled one would: it has a job, so it is left alone.
  await (await postern.queue.getJob(deliveryIds[0]!))!.remove();
  const [waiting] = await postern.store.deliveries.getMany(orgId, [deliveryIds[0]!]);
  await postern.queue.add('deliver', deliveryJobData(waiting!), deliveryJobOptions(deliveryIds[0]!, 60_000));
  expect(await (await postern.queue.getJob(deliveryIds[0]!))!.isDelayed()).toBe(true);

  const newReconciler = () => createReconciler({ store: postern.store, queues: postern.queues, clock: { now: () => Date.now() }, logger: pino({ level: 'silent' }), graceMs: 0 });
  const reconciler = newReconciler();
  const startedAt = performance.now();
  const first = await reconciler.runOnce(DELIVERIES);
  const runMs = performance.now() - startedAt;
  console.info(`reconciler: one run over ${first.checked} unfinished deliveries (${first.requeued} without a job) took ${runMs.toFixed(0)} ms`);
  expect(first).toEqual({ checked: DELIVERIES, requeued: REMOVED });
  expect(await jobCount()).toBe(DELIVERIES);
  for (const id of vanished) expect(await postern.queue.getJob(id)).toBeDefined();

  // Every delivery has its job now: another sweep creates none.
  const againStartedAt = performance.now();
  expect(await newReconciler().runOnce(DELIVERIES)).toEqual({ checked: DELIVERIES, requeued: 0 });
  console.info(`reconciler: a run over ${DELIVERIES} that all have their job took ${(performance.now() - againStartedAt).toFixed(0)} ms`);
  expect(await jobCount()).toBe(DELIVERIES);

  await (await postern.queue.getJob(deliveryIds[0]!))!.promote();
  await postern.startSender({ concurrency: 20 });
  await waitUntil('every delivery succeeded', async () => (await postern.store.deliveries.getMany(orgId, deliveryIds)).every((d) => d.status === 'succeeded'), 60_000, 100).catch(async (err: Error) => {
    const left = (await postern.store.deliveries.getMany(orgId, deliveryIds)).filter((d) => d.status !== 'succeeded');
    const states = await Promise.all(left.slice(0, 5).map(async (d) => `${d.id} ${d.status} job ${(await postern.queue.getJob(d.id))?.id ? await (await postern.queue.getJob(d.id))!.getState() : 'none'}`));
    throw new Error(`${err.message}: ${left.length} left, e.g. ${states.join('; ')}`);
  });
  const perDelivery = new Map<string, number>();
  for (const r of receiver.requests) perDelivery.set(String(r.headers['webhook-delivery-id']), (perDelivery.get(String(r.headers['webhook-delivery-id'])) ?? 0) + 1);
  expect(deliveryIds.filter((id) => perDelivery.get(id) !== 1)).toEqual([]);
}, 90_000);

import type { Redis } from 'ioredis';
import { startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';
import { clusterMasters, crossSlotErrors, describeOnCluster } from './cluster-support.js';

/**
 * `POST /v1/events/batch` on a real three-master Redis Cluster with three queue partitions: each
 * org's batch is one pipeline in its org's slot and one in its queue partition's, so every event
 * of every org arrives, replays work, and not one command is refused with CROSSSLOT.
 */

const ORGS = 6;
const EVENTS = 40;

describeOnCluster('batch ingest on Redis Cluster', () => {
  let postern: TestPostern;
  let receiver: TestReceiver;
  let masters: Redis[];
  let crossSlotBefore: number;

  beforeAll(async () => {
    masters = await clusterMasters();
    crossSlotBefore = await crossSlotErrors(masters);
    postern = await startPostern({ cluster: true, queuePartitions: 3, senderConcurrency: 30 });
    receiver = await startReceiver(() => 200);
  });
  afterAll(async () => {
    await postern?.close();
    await receiver?.close();
    for (const m of masters ?? []) m.disconnect();
  });

  test('a batch per org: every event delivered to every endpoint once, replays answered, no CROSSSLOT', async () => {
    const orgs = [];
    for (let i = 0; i < ORGS; i++) {
      const org = await postern.createOrg(`batch-cluster-${i}`);
      for (let e = 0; e < 2; e++) await postern.createEndpoint(org.apiKey, { url: `${receiver.url}?org=${i}&ep=${e}` });
      orgs.push(org);
    }
    const batchOf = (i: number) => Array.from({ length: EVENTS }, (_, n) => ({ type: 'order.created', data: { org: i, n }, idempotencyKey: `k-${n}`, ...(n % 3 === 0 ? { orderingKey: `line-${n % 2}` } : {}) }));
    const answers = await Promise.all(orgs.map((org, i) => postern.api('POST', '/v1/events/batch', { key: org.apiKey, body: { events: batchOf(i) } })));
    const eventIds = new Set<string>();
    for (const answer of answers) {
      expect(answer.status).toBe(207);
      expect(answer.body.results).toHaveLength(EVENTS);
      for (const r of answer.body.results) {
        expect(r.status).toBe(202);
        expect(r.deliveries).toHaveLength(2);
        eventIds.add(r.id);
      }
    }
    expect(eventIds.size).toBe(ORGS * EVENTS);

    // The same batches again: every event replays its first answer.
    const again = await Promise.all(orgs.map((org, i) => postern.api('POST', '/v1/events/batch', { key: org.apiKey, body: { events: batchOf(i) } })));
    again.forEach((answer, i) => expect(answer.body.results).toEqual(answers[i]!.body.results.map((r: object) => ({ ...r, idempotentReplayed: true }))));

    await receiver.waitForRequests(ORGS * EVENTS * 2, 60_000);
    await waitUntil('no more requests than deliveries', () => receiver.requests.length === ORGS * EVENTS * 2);
    const perEvent = new Map<string, number>();
    for (const r of receiver.requests) perEvent.set(`${r.headers['webhook-id']} ${r.path}`, (perEvent.get(`${r.headers['webhook-id']} ${r.path}`) ?? 0) + 1);
    expect(perEvent.size).toBe(ORGS * EVENTS * 2);
    expect([...perEvent.values()].every((n) => n === 1)).toBe(true);
    expect(await crossSlotErrors(masters)).toBe(crossSlotBefore);
  }, 90_000);
});

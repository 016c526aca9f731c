import type { Redis } from 'ioredis';
import { fastPolicy, startPostern, TEST_REDIS_CLUSTER_NODES, type TestPostern } from '../support/postern.js';
import { countingReceiver, type CountingReceiver } from '../support/counting-receiver.js';
import { waitUntil } from '../support/wait-until.js';
import { killAllApps, spawnSender, waitForSenders, type AppProcess } from '../faults/support/app-process.js';
import { postEvents } from '../faults/support/load.js';
import { clusterMasters, crossSlotErrors, describeOnCluster, keysPerMaster } from './cluster-support.js';

/**
 * Issue 12: sender processes on a Redis Cluster with three queue partitions — the per-endpoint (4)
 * and per-org (12) limits hold across two senders, and a sender SIGKILLed mid-load loses nothing
 * (its attempts run again once their locks expire; duplicates only of what was in flight).
 */

const PARTITIONS = '3';
const ENDPOINTS = 4;
/** The org's limit: lower than the two senders' 20 slots for its partition, higher than one's 10. */
const PER_ORG = 12;
/** Each sender alone runs 10 attempts of a partition at once: an org peak above 10 proves both sent together. */
const PER_SENDER = 10;

describeOnCluster('sender processes on Redis Cluster', () => {
  let postern: TestPostern;
  let counting: CountingReceiver;
  let otherReceiver: CountingReceiver;
  let masters: Redis[];
  let crossSlotBefore: number;
  const senderEnv = () => ({
    REDIS_CLUSTER_NODES: TEST_REDIS_CLUSTER_NODES ?? '',
    REDIS_PREFIX: postern.prefix,
    QUEUE_PARTITIONS: PARTITIONS,
    // A killed sender's jobs come back after their lock expires: seconds here, not the default 30 s.
    JOB_LOCK_DURATION_MS: '2000',
    STALLED_CHECK_INTERVAL_MS: '500',
    // A wake-up the killed sender was about to send is lost with it; the parked delivery then looks
    // again after this long (seconds here, not the default minute).
    PARK_SAFETY_DELAY_MS: '2000',
  });

  beforeAll(async () => {
    masters = await clusterMasters();
    crossSlotBefore = await crossSlotErrors(masters);
    postern = await startPostern({ cluster: true, queuePartitions: Number(PARTITIONS), sender: false });
    counting = await countingReceiver(() => 5 + Math.random() * 5);
    otherReceiver = await countingReceiver(5);
  });
  afterAll(async () => {
    await killAllApps();
    await counting?.receiver.close();
    await otherReceiver?.receiver.close();
    await postern?.close();
    for (const m of masters ?? []) m.disconnect();
  });

  test('two sender processes: at most 4 in flight per endpoint and 12 per org; a SIGKILLed one loses nothing', async () => {
    const { apiKey, id: orgId } = await postern.createOrg('cluster-limits');
    const base = counting.receiver.url.replace(/\/hook$/, '');
    for (let i = 0; i < ENDPOINTS; i++) {
      await postern.createEndpoint(apiKey, { url: `${base}/ep${i}`, policy: fastPolicy(3, 20, { concurrency: { perEndpoint: 4, perOrg: PER_ORG } }) });
    }
    // Other orgs fill the other partitions, so every sender works every partition at once.
    const others = [];
    for (let o = 0; o < 4; o++) {
      const org = await postern.createOrg(`cluster-other-${o}`);
      await postern.createEndpoint(org.apiKey, { url: `${otherReceiver.receiver.url.replace(/\/hook$/, '')}/other${o}`, policy: fastPolicy(3, 20) });
      others.push(org);
    }
    const senders: AppProcess[] = [
      spawnSender({ ...senderEnv(), SENDER_CONCURRENCY: String(PER_SENDER * 3) }),
      spawnSender({ ...senderEnv(), SENDER_CONCURRENCY: String(PER_SENDER * 3) }),
    ];
    const partition = postern.queues.forOrg(orgId);
    await waitForSenders(partition, 2, senders);

    const deliveryIds = (await postEvents(postern.api, apiKey, 200, 10)).flatMap((e) => e.deliveryIds);
    const otherIds = await Promise.all(others.map(async (o) => ({ orgId: o.id, ids: (await postEvents(postern.api, o.apiKey, 20, 5)).flatMap((e) => e.deliveryIds) })));
    expect(deliveryIds).toHaveLength(800);

    // Kill one sender mid-load; the other carries on and runs the killed one's attempts again.
    await waitUntil('200 requests answered', () => counting.answered() >= 200, 30_000);
    await senders[0]!.kill();
    const requestsAtKill = counting.receiver.requests.length;
    expect(requestsAtKill).toBeLessThan(800 + 80);

    await waitUntil('every delivery succeeded', async () => {
      const ds = await postern.store.deliveries.getMany(orgId, deliveryIds);
      if (!ds.every((d) => d.status === 'succeeded')) return false;
      for (const o of otherIds) if (!(await postern.store.deliveries.getMany(o.orgId, o.ids)).every((d) => d.status === 'succeeded')) return false;
      return true;
    }, 90_000, 250).catch(async (err: Error) => {
      const left = (await postern.store.deliveries.getMany(orgId, deliveryIds)).filter((d) => d.status !== 'succeeded');
      const states = await Promise.all(left.slice(0, 5).map(async (d) => `${d.id} ${d.status} attempts ${d.attempts} job ${(await (await partition.getJob(d.id))?.getState()) ?? 'none'}`));
      throw new Error(`${err.message}: ${left.length} of the org left, e.g. ${states.join('; ')}\n${senders.map((s) => s.output()).join('\n')}`);
    });

    const peaks = [...counting.peak.values()];
    expect(peaks).toHaveLength(ENDPOINTS);
    expect(Math.max(...peaks)).toBeLessThanOrEqual(4);
    expect(Math.max(...peaks)).toBe(4);
    expect(counting.orgPeak()).toBeLessThanOrEqual(PER_ORG);
    // Each sender runs 10 attempts of a partition at once: a peak above 10 proves both sent together.
    expect(counting.orgPeak()).toBeGreaterThan(PER_SENDER);
    const ds = await postern.store.deliveries.getMany(orgId, deliveryIds);
    // Nothing lost: every delivery succeeded and every one reached the receiver at least once.
    const seen = new Set(counting.receiver.requests.map((r) => r.headers['webhook-delivery-id']));
    expect(deliveryIds.filter((id) => !seen.has(id))).toEqual([]);
    // Attempts were not double-spent by the kill: duplicates at the receiver are of re-run attempts.
    const attemptsSpent = ds.reduce((n, d) => n + d.attempts, 0);
    expect(attemptsSpent).toBeLessThanOrEqual(800 + 20);
    expect(senders[1]!.exited).toBe(false);

    const counts = await keysPerMaster(masters, postern.prefix);
    for (const n of counts) expect(n).toBeGreaterThan(0);
    expect(await crossSlotErrors(masters)).toBe(crossSlotBefore);
  }, 150_000);
});

import type { Redis } from 'ioredis';
import { Webhook } from 'standardwebhooks';
import { fastPolicy, startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';
import { clusterMasters, crossSlotErrors, describeOnCluster, keysPerMaster } from './cluster-support.js';

/**
 * Issue 12: the whole delivery path on a real three-master Redis Cluster with three queue
 * partitions — fan-out to several orgs, retries on schedule, a breaker trip with its notification
 * and operational webhook, held deliveries drained on resume, redelivery and recover, retention
 * trimmed at finish — with the
 * keys spread over every master and not one command refused with CROSSSLOT.
 */

const ORGS = 8;

describeOnCluster('Postern on Redis Cluster', () => {
  let postern: TestPostern;
  let ok: TestReceiver;
  let masters: Redis[];
  let crossSlotBefore: number;

  beforeAll(async () => {
    masters = await clusterMasters();
    crossSlotBefore = await crossSlotErrors(masters);
    postern = await startPostern({ cluster: true, queuePartitions: 3, senderConcurrency: 30 });
    ok = await startReceiver(() => 200);
  });
  afterAll(async () => {
    await postern?.close();
    await ok?.close();
    for (const m of masters ?? []) m.disconnect();
  });

  test('fan-out to several orgs: every event reaches every endpoint of its org, signed', async () => {
    const orgs: { id: string; apiKey: string; endpoints: { id: string; secret: string }[] }[] = [];
    for (let i = 0; i < ORGS; i++) {
      const org = await postern.createOrg(`cluster-${i}`);
      const endpoints = [];
      for (let e = 0; e < 2; e++) endpoints.push(await postern.createEndpoint(org.apiKey, { url: `${ok.url}?org=${i}&ep=${e}`, policy: fastPolicy(3, 50) }));
      orgs.push({ ...org, endpoints });
    }
    const eventIds: string[] = [];
    for (const org of orgs) {
      for (let n = 0; n < 3; n++) {
        const r = await postern.api('POST', '/v1/events', { key: org.apiKey, body: { type: 'order.created', data: { org: org.id, n } } });
        expect(r.status).toBe(202);
        expect(r.body.deliveries.map((d: { id: string }) => d.id)).toHaveLength(2);
        eventIds.push(r.body.id);
      }
    }
    await ok.waitForRequests(ORGS * 3 * 2, 30_000);
    const perPath = new Map<string, number>();
    for (const r of ok.requests) perPath.set(r.path, (perPath.get(r.path) ?? 0) + 1);
    expect([...perPath.values()]).toEqual(Array(ORGS * 2).fill(3));
    for (const org of orgs) {
      const log = await postern.api('GET', `/v1/endpoints/${org.endpoints[0]!.id}/deliveries`, { key: org.apiKey });
      expect(log.body.data.map((d: { status: string }) => d.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
      const request = ok.requests.find((r) => r.path.endsWith(`?org=${orgs.indexOf(org)}&ep=0`))!;
      expect(() => new Webhook(org.endpoints[0]!.secret).verify(request.body, request.headers as Record<string, string>)).not.toThrow();
    }
    // Another org's delivery is 404, as on a standalone Redis.
    const [first, second] = orgs;
    const foreign = (await postern.api('GET', `/v1/endpoints/${first!.endpoints[0]!.id}/deliveries`, { key: first!.apiKey })).body.data[0].id;
    expect((await postern.api('GET', `/v1/deliveries/${foreign}`, { key: second!.apiKey })).status).toBe(404);
  }, 60_000);

  test('retries run on schedule: 500, 500, then 200, each wait at least the policy\'s 300 ms', async () => {
    const flaky = await startReceiver((_req, n) => (n <= 2 ? 500 : 200));
    try {
      const { apiKey } = await postern.createOrg('cluster-retry');
      await postern.createEndpoint(apiKey, { url: flaky.url, policy: fastPolicy(3, 300) });
      const r = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'order.created', data: {} } });
      const [deliveryId] = r.body.deliveries.map((d: { id: string }) => d.id);
      const delivery = await waitUntil('the delivery succeeded', async () => {
        const d = (await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey })).body;
        return d.status === 'succeeded' ? d : undefined;
      }, 20_000);
      expect(delivery.attempts.map((a: { error: string | null }) => a.error)).toEqual(['http_500', 'http_500', null]);
      const at = flaky.requests.map((q) => q.at);
      expect(at).toHaveLength(3);
      expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(290);
      expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(290);
    } finally {
      await flaky.close();
    }
  }, 30_000);

  test('a breaker trip leaves one notification and sends one signed operational webhook', async () => {
    const failing = await startReceiver(() => 500);
    const operations = await startReceiver(() => 200);
    try {
      const { apiKey } = await postern.createOrg('cluster-breaker');
      const ops = await postern.createEndpoint(apiKey, { url: operations.url, eventTypes: ['endpoint.disabled'] });
      const tripped = await postern.createEndpoint(apiKey, { url: failing.url, eventTypes: ['invoice.paid'], policy: { preset: 'vestiarion', maxAttempts: 1, breaker: { threshold: 3 } } });
      for (let i = 0; i < 5; i++) await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'invoice.paid', data: { i } } });
      const [notice] = await operations.waitForRequests(1, 20_000);
      expect(JSON.parse(notice!.body)).toMatchObject({ type: 'endpoint.disabled', data: { endpointId: tripped.id } });
      expect(() => new Webhook(ops.secret).verify(notice!.body, notice!.headers as Record<string, string>)).not.toThrow();
      const notifications = await postern.api('GET', '/v1/notifications', { key: apiKey });
      expect(notifications.body.data).toHaveLength(1);
      expect((await postern.api('GET', `/v1/endpoints/${tripped.id}`, { key: apiKey })).body.status).toBe('disabled');
    } finally {
      await Promise.all([failing.close(), operations.close()]);
    }
  }, 30_000);

  // Which of the three arrives first is not fixed here: this sender runs 30 attempts at once, so
  // the re-queued deliveries race for the endpoint's slots (strict order needs one slot; see
  // test/policies/inactive.test.ts, which drains in order with one attempt at a time).
  test('deliveries held while an endpoint is paused drain on resume, each once', async () => {
    const target = await startReceiver(() => 200);
    try {
      const { apiKey, id: orgId } = await postern.createOrg('cluster-held');
      const endpoint = await postern.createEndpoint(apiKey, { url: target.url, policy: fastPolicy(3, 30) });
      expect((await postern.api('POST', `/v1/endpoints/${endpoint.id}/pause`, { key: apiKey })).status).toBe(200);
      const deliveryIds: string[] = [];
      for (let n = 0; n < 3; n++) deliveryIds.push(...(await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'order.created', data: { n } } })).body.deliveries.map((d: { id: string }) => d.id));
      expect(deliveryIds).toHaveLength(3);
      await waitUntil('all three held', async () => {
        const ds = await Promise.all(deliveryIds.map(async (id) => (await postern.api('GET', `/v1/deliveries/${id}`, { key: apiKey })).body));
        return ds.every((d) => d.held);
      }, 20_000);
      await waitUntil('the held attempts\' jobs removed', async () => {
        const jobs = await Promise.all(deliveryIds.map((id) => postern.queues.forOrg(orgId).getJob(id)));
        return jobs.every((j) => j === undefined);
      }, 20_000);
      expect(target.requests).toHaveLength(0);
      const resumed = await postern.api('POST', `/v1/endpoints/${endpoint.id}/resume`, { key: apiKey });
      expect(resumed.body).toMatchObject({ status: 'active', requeued: 3 });
      const requests = await target.waitForRequests(3, 20_000);
      expect(requests.map((r) => JSON.parse(r.body).data.n as number).sort()).toEqual([0, 1, 2]);
    } finally {
      await target.close();
    }
  }, 40_000);

  test('redelivery of one failed delivery and recover of the rest', async () => {
    let answer = 500;
    const target = await startReceiver(() => answer);
    try {
      const { apiKey } = await postern.createOrg('cluster-redeliver');
      const endpoint = await postern.createEndpoint(apiKey, { url: target.url, policy: { preset: 'jitter-45h', maxAttempts: 1, breaker: { threshold: 1000 } } });
      const since = new Date(Date.now() - 1000).toISOString();
      const deliveryIds: string[] = [];
      for (let n = 0; n < 3; n++) deliveryIds.push(...(await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'order.created', data: { n } } })).body.deliveries.map((d: { id: string }) => d.id));
      await waitUntil('all three failed', async () => {
        const ds = await Promise.all(deliveryIds.map(async (id) => (await postern.api('GET', `/v1/deliveries/${id}`, { key: apiKey })).body));
        return ds.every((d) => d.status === 'failed');
      }, 20_000);
      answer = 200;
      const one = await postern.api('POST', `/v1/deliveries/${deliveryIds[0]}/redeliver`, { key: apiKey });
      expect(one.status).toBe(202);
      expect(one.body.delivery.redeliveredFromId).toBe(deliveryIds[0]);
      await waitUntil('the redelivery succeeded', async () => (await postern.api('GET', `/v1/deliveries/${one.body.delivery.id}`, { key: apiKey })).body.status === 'succeeded', 20_000);
      const recovered = await postern.api('POST', `/v1/endpoints/${endpoint.id}/recover`, { key: apiKey, body: { since } });
      expect(recovered.status).toBe(202);
      expect(recovered.body.count).toBe(3);
      await waitUntil('3 + 1 + 3 requests', () => target.requests.length >= 7, 20_000);
    } finally {
      await target.close();
    }
  }, 40_000);

  test('retention at finish: lastPerEndpoint 10 keeps the 10 newest of 60, with no sweep', async () => {
    const { apiKey } = await postern.createOrg('cluster-retention');
    const endpoint = await postern.createEndpoint(apiKey, { url: ok.url, policy: { ...fastPolicy(3, 50), retention: { lastPerEndpoint: 10 }, concurrency: { perEndpoint: 10, perOrg: 20 } } });
    const ids: string[] = [];
    for (let n = 0; n < 60; n++) ids.push((await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'order.created', data: { n } } })).body.deliveries[0].id);
    const expected = ids.slice(-10).reverse();
    await waitUntil('the log is the newest 10', async () => {
      const log = (await postern.api('GET', `/v1/endpoints/${endpoint.id}/deliveries?limit=100`, { key: apiKey })).body.data.map((d: { id: string }) => d.id);
      return JSON.stringify(log) === JSON.stringify(expected) ? true : undefined;
    }, 30_000);
  }, 40_000);

  test('issue 13 on the cluster: oldest first, per-key order, a rate limit and adaptive pacing, in the claim and finish scripts', async () => {
    const org = await postern.createOrg('cluster-order');
    // Event 3's first attempt gets a 429 (a pace cut); every other request succeeds.
    const r = await startReceiver((req) => ((JSON.parse(req.body) as { data: { i: number } }).data.i === 3 && req.headers['webhook-attempt'] === '1' ? 429 : 200));
    try {
      const policy = fastPolicy(3, 50, { ordering: 'per-key', rateLimit: { perSecond: 50 }, pacing: 'adaptive', retryAfter: 'ignore', concurrency: { perEndpoint: 1, perOrg: 20 } });
      const ep = await postern.createEndpoint(org.apiKey, { url: r.url, policy });
      for (let i = 0; i < 8; i++) {
        const res = await postern.api('POST', '/v1/events', { key: org.apiKey, body: { type: 'order.created', data: { i }, orderingKey: 'k' } });
        expect(res.status).toBe(202);
      }
      // The key waits for event 3's retry, so order holds and the sequence has no hole.
      await r.waitForRequests(9, 30_000);
      const order = r.requests.map((q) => (JSON.parse(q.body) as { data: { i: number } }).data.i);
      expect(order).toEqual([0, 1, 2, 3, 3, 4, 5, 6, 7]);
      expect(r.requests.map((q) => q.headers['webhook-sequence'])).toEqual(['1', '2', '3', '4', '4', '5', '6', '7', '8']);
      const endpoint = (await postern.api('GET', `/v1/endpoints/${ep.id}`, { key: org.apiKey })).body;
      expect(endpoint.pace).toEqual({ perSecond: expect.any(Number), concurrency: 1 });
    } finally {
      await r.close();
    }
  });

  test('the keys landed on every master, and no command was refused with CROSSSLOT', async () => {
    const counts = await keysPerMaster(masters, postern.prefix);
    expect(counts).toHaveLength(3);
    for (const n of counts) expect(n).toBeGreaterThan(0);
    expect(await crossSlotErrors(masters)).toBe(crossSlotBefore);
  });
});

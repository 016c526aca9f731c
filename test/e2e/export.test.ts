import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createIdFactory } from '@postern/shared';
import { createRedisConnection, createStore, type RedisClient, type Store } from '@postern/store';
import { Postern, PosternApiError } from '@postern/client';
import { deleteByPrefix, startPostern, TEST_ADMIN_TOKEN, TEST_REDIS_URL, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { spawnApp, type SpawnedApp } from '../support/spawn-app.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * GET /v1/deliveries/export streams the delivery log as NDJSON, one delivery with its attempts per
 * line, filtered by endpoint, status and time, without loading the log into memory; the client
 * reads it as an async iterable. The size test seeds 25 000 finished deliveries (5 KB response excerpts each) straight into
 * Redis through the store and exports them from an ingest process of its own, sampling that
 * process's RSS from /proc.
 */

describe('the export, in process', () => {
  let postern: TestPostern;
  let receiver: TestReceiver;
  let apiKey: string;
  let first: string;
  let second: string;

  beforeAll(async () => {
    postern = await startPostern();
    receiver = await startReceiver((req) => (JSON.parse(req.body).data.n % 2 === 0 ? 200 : 400));
    apiKey = (await postern.createOrg()).apiKey;
    first = (await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: ['export.one'], policy: { preset: 'standard', maxAttempts: 1 } })).id;
    second = (await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: ['export.two'], policy: { preset: 'standard', maxAttempts: 1 } })).id;
    for (let n = 0; n < 6; n++) await postern.api('POST', '/v1/events', { key: apiKey, body: { type: n < 4 ? 'export.one' : 'export.two', data: { n, secret: 'not-in-the-export' } } });
    await waitUntil('every delivery to finish', async () => {
      const all = [...(await postern.api('GET', `/v1/endpoints/${first}/deliveries`, { key: apiKey })).body.data, ...(await postern.api('GET', `/v1/endpoints/${second}/deliveries`, { key: apiKey })).body.data];
      return all.length === 6 && all.every((d: any) => d.status !== 'pending' && d.status !== 'in_flight');
    });
  });

  afterAll(async () => {
    await postern.close();
    await receiver.close();
  });

  const exported = async (query: Record<string, string> = {}) => {
    const out: any[] = [];
    for await (const d of postern.client(apiKey).deliveries.export(query)) out.push(d);
    return out;
  };

  test('every delivery once, endpoint by endpoint, oldest first, with its attempts and no payload', async () => {
    const all = await exported();
    expect(all).toHaveLength(6);
    const endpoints = all.map((d) => d.endpointId);
    expect(endpoints).toEqual([...endpoints].sort());
    expect(endpoints.filter((e) => e === first)).toHaveLength(4);
    for (const endpoint of [first, second]) {
      const ids = all.filter((d) => d.endpointId === endpoint).map((d) => d.id);
      expect(ids).toEqual([...ids].sort());
    }
    const one = all[0];
    const detail = (await postern.api('GET', `/v1/deliveries/${one.id}`, { key: apiKey })).body;
    expect(one).toEqual(detail);
    expect(one.attempts).toHaveLength(1);
    expect(JSON.stringify(all)).not.toContain('not-in-the-export');
  });

  test('filters by endpoint, status and creation time', async () => {
    expect((await exported({ endpointId: second })).map((d) => d.endpointId)).toEqual([second, second]);
    const failed = await exported({ status: 'failed' });
    expect(failed.length).toBe(3);
    expect(failed.every((d) => d.status === 'failed')).toBe(true);
    const all = await exported();
    const later = all.map((d) => d.createdAt).sort()[3]!;
    const since = await exported({ since: later });
    expect(since.every((d) => d.createdAt >= later)).toBe(true);
    const until = await exported({ until: later });
    expect(until.every((d) => d.createdAt <= later)).toBe(true);
    expect(since.length + until.length).toBeGreaterThanOrEqual(6);
    // Before 1970 nothing was created: such a `since` is the whole log.
    expect((await exported({ since: '0001-01-01T00:00:00Z' })).length).toBe(all.length);
  });

  test('NDJSON on the wire; bad queries are 400 naming the parameter, an unknown endpoint 404', async () => {
    const res = await fetch(`${postern.baseUrl}/v1/deliveries/export?endpointId=${first}`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const text = await res.text();
    expect(text.endsWith('\n')).toBe(true);
    expect(text.trim().split('\n').map((l) => JSON.parse(l).endpointId)).toEqual([first, first, first, first]);

    const bad = async (query: string, message: RegExp, status = 400) => {
      const r = await postern.api('GET', `/v1/deliveries/export${query}`, { key: apiKey });
      expect(r.status).toBe(status);
      expect(r.body.error.message).toMatch(message);
    };
    await bad('?status=lost', /^status: status must be one of/);
    await bad('?since=tuesday', /^since: /);
    await bad('?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z', /^since: since must not be after until/);
    await bad('?endpointId=nope', /^endpointId: /);
    await bad('?page=2', /unknown parameter "page"/);
    await bad('?endpointId=ep_01KB2Z3R8Q5T7V9X1Y3Z5A7C9E', /endpoint/, 404);
    await expect(exported({ status: 'lost' })).rejects.toBeInstanceOf(PosternApiError);
  });

  test("a deleted endpoint's deliveries export by its id while they are kept; another org's deleted endpoint is 404", async () => {
    const before = (await exported({ endpointId: second })).map((d) => d.id);
    expect(before).toHaveLength(2);
    expect((await postern.api('DELETE', `/v1/endpoints/${second}`, { key: apiKey })).status).toBe(204);
    expect((await postern.api('GET', `/v1/endpoints/${second}`, { key: apiKey })).status).toBe(404);
    const after = await exported({ endpointId: second });
    expect(after.map((d) => d.id)).toEqual(before);
    expect(after.every((d) => d.endpointId === second)).toBe(true);

    const otherKey = (await postern.createOrg()).apiKey;
    const othersGone = (await postern.createEndpoint(otherKey, { url: receiver.url })).id;
    expect((await postern.api('DELETE', `/v1/endpoints/${othersGone}`, { key: otherKey })).status).toBe(204);
    const r = await postern.api('GET', `/v1/deliveries/export?endpointId=${othersGone}`, { key: apiKey });
    expect({ status: r.status, code: r.body.error?.code }).toEqual({ status: 404, code: 'not_found' });
  });
});

const DELIVERIES = 25_000;
const RSS_LIMIT_BYTES = 250 * 1024 * 1024;
/**
 * Each attempt keeps a response excerpt this long: 25 000 of them (~130 MB of NDJSON) would not fit
 * under the limit, nor in the 128-MB heap, if held. (The export's speed at scale is the bench's.)
 */
const RESPONSE_BYTES = 5000;

/** The resident set of a process, bytes, from /proc/<pid>/status. */
function rssOf(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : 0;
}

/**
 * Seeds `count` finished deliveries of one endpoint straight into Redis in pipelines, as
 * finish-attempt.lua leaves them (compact records: the delivery hash with its attempt's core
 * `[startedAt, durationMs, status]` as field `a1`, the kept response in its attempts hash, the id
 * in the endpoint's `succeeded` index: records.ts, attempt-encoding.ts). Their events are not
 * written: the export reads deliveries and attempts only.
 */
async function seed(store: Store, redis: RedisClient, orgId: string, endpointId: string, count: number): Promise<void> {
  const ids = createIdFactory();
  const k = store.keys;
  const response = JSON.stringify({ headers: { 'content-type': 'text/plain' }, headersTruncated: false, body: 'x'.repeat(RESPONSE_BYTES), bodyTruncated: false });
  const start = Date.now() - count;
  const BATCH = 5000;
  for (let at = 0; at < count; at += BATCH) {
    const pipeline = redis.pipeline();
    for (let i = at; i < Math.min(count, at + BATCH); i++) {
      const now = start + i;
      const id = ids('dlv', now);
      pipeline
        .hset(k.delivery(orgId, id), 'eventId', ids('evt', now), 'eventType', 'export.big', 'endpointId', endpointId, 'status', 'succeeded', 'attempts', '1', 'a1', `[${now},12,200]`)
        .hset(k.deliveryAttempts(orgId, id), '1', response)
        .zadd(k.endpointDeliveriesByStatus(orgId, endpointId, 'succeeded'), 0, id);
    }
    await pipeline.exec();
  }
}

describe(`${DELIVERIES} deliveries (~130 MB of NDJSON) from an ingest process of its own`, () => {
  const prefix = `test:${randomBytes(6).toString('hex')}`;
  let redis: RedisClient;
  let ingest: SpawnedApp;

  beforeAll(async () => {
    redis = createRedisConnection(TEST_REDIS_URL, 'worker');
    // A heap cap well below the NDJSON's size: an export that held its lines would run out of heap,
    // and V8 collects before it grows lazily past what the export needs (docs/erasure-and-export.md).
    ingest = spawnApp('ingest', { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix, ADMIN_TOKEN: TEST_ADMIN_TOKEN, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ALLOWED_ADDRESSES: '127.0.0.1' }, ['--max-old-space-size=128', '--max-semi-space-size=8']);
  }, 30_000);

  afterAll(async () => {
    await ingest?.stop();
    await deleteByPrefix(redis, prefix);
    await redis.quit();
  });

  test(`exports ${DELIVERIES} deliveries with ingest's RSS under 250 MB`, async () => {
    const baseUrl = `http://127.0.0.1:${await ingest.port()}`;
    const admin = new Postern({ baseUrl, adminToken: TEST_ADMIN_TOKEN });
    const org = await admin.orgs.create({ name: 'big' });
    const client = new Postern({ baseUrl, apiKey: org.apiKey });
    const endpoint = await client.endpoints.create({ url: 'http://127.0.0.1:9/hook', eventTypes: ['export.big'] });

    const seedStarted = performance.now();
    await seed(createStore({ redis, prefix }), redis, org.id, endpoint.id, DELIVERIES);
    const seedMs = performance.now() - seedStarted;

    const pid = ingest.child.pid!;
    const before = rssOf(pid);
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssOf(pid));
    }, 50);
    const started = performance.now();
    let count = 0;
    let last = '';
    let bytes = 0;
    try {
      for await (const d of client.deliveries.export({ endpointId: endpoint.id })) {
        count += 1;
        expect(d.id > last).toBe(true);
        last = d.id;
        if (count === 1) bytes = JSON.stringify(d).length + 1;
        if (count % 1000 === 0) peak = Math.max(peak, rssOf(pid));
      }
    } finally {
      clearInterval(sampler);
    }
    const exportMs = performance.now() - started;
    console.log(`export: ${count} deliveries (~${Math.round((bytes * count) / 1e6)} MB of NDJSON) in ${Math.round(exportMs)} ms; seeded in ${Math.round(seedMs)} ms; ingest RSS ${Math.round(before / 1e6)} MB before, peak ${Math.round(peak / 1e6)} MB`);
    expect(count).toBe(DELIVERIES);
    expect(peak).toBeLessThan(RSS_LIMIT_BYTES);
  }, 240_000);
});

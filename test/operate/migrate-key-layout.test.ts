import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { migrateKeyLayout } from '@postern/store';
import { startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';

/**
 * Issue 12: data written by a Postern before the org-tagged key layout is moved into it by the
 * one-shot migration (`npm run migrate:key-layout`): the API finds every record again, pending
 * deliveries are queued on their org's partition and delivered, the old queue is gone, and a
 * second run changes nothing.
 */

let postern: TestPostern;
let receiver: TestReceiver;

beforeAll(async () => {
  postern = await startPostern({ sender: false, queuePartitions: 2 });
  receiver = await startReceiver(() => 200);
});
afterAll(async () => {
  await postern?.close();
  await receiver?.close();
});

/**
 * Rewrites the org's keys to their names in the older layout (the fixture: what the older release
 * wrote, e.g. `<p>:delivery:<id>`, one global `<p>:deliveries:unfinished`, the queue under `<p>:q`).
 */
async function toOldLayout(redis: Redis, p: string, orgId: string, keyHash: string, unfinishedIds: readonly string[]): Promise<void> {
  const stem = `${p}:{o:${orgId}}:`;
  const keys = await redis.keys(`${stem}*`);
  for (const key of keys) {
    const rest = key.slice(stem.length);
    let old: string;
    if (rest === 'org') old = `${p}:org:${orgId}`;
    else if (['version', 'apikeys', 'endpoints', 'notifications', 'leases', 'parked'].includes(rest)) old = `${p}:org:${orgId}:${rest}`;
    else if (rest.startsWith('idem:')) old = `${p}:idem:${orgId}:${rest.slice(5)}`;
    else old = `${p}:${rest}`;
    await redis.rename(key, old);
    // Records of that release named their id and org (compact records keep them in the key only).
    const record = /^(delivery|event):((?:dlv|evt)_[0-9A-Z]+)$/.exec(rest);
    if (record) await redis.hset(old, 'id', record[2]!, 'orgId', orgId);
  }
  await redis.rename(`${p}:{k:${keyHash}}:apikey`, `${p}:apikey:${keyHash}`);
  if (await redis.exists(`${p}:{k:${keyHash}}:apikey-id`)) await redis.rename(`${p}:{k:${keyHash}}:apikey-id`, `${p}:apikey-id:${keyHash}`);
  await redis.del(`${p}:orgs`);
  // That release also kept one index of every unfinished delivery (score: createdAt).
  for (const id of unfinishedIds) await redis.zadd(`${p}:deliveries:unfinished`, Date.now(), id);
}

test('an older layout is migrated: records found again, pending deliveries queued and delivered, old queue removed; idempotent', async () => {
  const { apiKey, id: orgId } = await postern.createOrg('legacy');
  const endpoint = await postern.createEndpoint(apiKey, { url: receiver.url });
  const deliveryIds: string[] = [];
  for (let n = 0; n < 2; n++) {
    const r = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'order.created', data: { n } }, headers: { 'idempotency-key': `k${n}` } });
    deliveryIds.push(r.body.deliveries[0].id);
  }
  const redis = postern.redis as Redis;
  const keyHash = (await redis.keys(`${postern.prefix}:{k:*}:apikey`))[0]!.match(/\{k:([0-9a-f]+)\}/)![1]!;
  for (const q of postern.queues.partitions) await q.obliterate({ force: true });
  // What releases before compact records also kept: an index of every delivery of the endpoint.
  await redis.zadd(postern.store.keys.endpointDeliveries(orgId, endpoint.id), 0, deliveryIds[0]!, 0, deliveryIds[1]!);
  await toOldLayout(redis, postern.prefix, orgId, keyHash, deliveryIds);
  const oldQueue = new Queue('deliveries', { connection: redis, prefix: `${postern.prefix}:q` });
  await oldQueue.add('deliver', { v: 1, deliveryId: deliveryIds[0]! }, { jobId: deliveryIds[0]! });
  await oldQueue.close();
  expect((await postern.api('GET', `/v1/endpoints/${endpoint.id}`, { key: apiKey })).status).toBe(401);

  const result = await migrateKeyLayout(redis, postern.store.keys, postern.queues);
  expect(result.skipped).toEqual([]);
  expect(result.queued).toBe(2);
  expect(result.oldQueueKeysRemoved).toBeGreaterThan(0);
  expect(result.legacyLogIndexesRemoved).toBe(1);
  expect(await redis.exists(postern.store.keys.endpointDeliveries(orgId, endpoint.id))).toBe(0);
  expect(await redis.keys(`${postern.prefix}:q:*`)).toEqual([]);
  expect(await redis.exists(`${postern.prefix}:deliveries:unfinished`, postern.store.keys.legacyUnfinishedDeliveries(orgId))).toBe(0);
  expect((await postern.api('GET', `/v1/endpoints/${endpoint.id}`, { key: apiKey })).status).toBe(200);
  const replay = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'order.created', data: { n: 0 } }, headers: { 'idempotency-key': 'k0' } });
  expect(replay.headers.get('idempotent-replayed')).toBe('true');

  await postern.startSender();
  await receiver.waitForRequests(2, 20_000);
  for (const id of deliveryIds) {
    const d = await postern.api('GET', `/v1/deliveries/${id}`, { key: apiKey });
    expect(d.status).toBe(200);
  }
  const again = await migrateKeyLayout(redis, postern.store.keys, postern.queues);
  expect(again).toEqual({ renamed: {}, queued: 0, oldQueueKeysRemoved: 0, skipped: [], legacyLogIndexesRemoved: 0 });
}, 40_000);

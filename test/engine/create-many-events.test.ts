import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createIdFactory } from '@postern/shared';
import { createRedisConnection, createStore, newPendingDelivery, type NewEvent, type RedisClient, type Store } from '@postern/store';
import { freePort, startRedisServer, type TestRedisServer } from '../production-redis/support.js';

/**
 * The store side of batch ingest, on a redis-server of this file's own (so its script cache starts
 * empty, as after a restart or a failover): `createManyWithDeliveries` writes several events in
 * one pipeline — the first call of the script is refused NOSCRIPT and run again with its source,
 * never an error — each event whole, in order (a later event with an earlier one's idempotency key
 * gets that one's answer), and `removeManyUnqueued` takes every key of them away again.
 */

let server: TestRedisServer;
let dir: string;
let redis: RedisClient;
let store: Store;
const ids = createIdFactory();
const orgId = ids('org', Date.now());

beforeAll(async () => {
  const port = await freePort();
  // A directory of its own: started elsewhere, it would load whatever dump.rdb is there.
  dir = mkdtempSync(path.join(tmpdir(), 'postern-many-'));
  server = await startRedisServer(['--port', String(port), '--dir', dir, '--save', '', '--appendonly', 'no', '--bind', '127.0.0.1'], { host: '127.0.0.1', port });
  redis = createRedisConnection(`redis://127.0.0.1:${port}`, 'worker');
  await redis.ping();
  store = createStore({ redis, prefix: 'many' });
}, 30_000);
afterAll(async () => {
  await redis?.quit();
  await server?.kill();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function newEvent(n: number, idempotencyKeyHash: string | null): NewEvent {
  const now = Date.now();
  const eventId = ids('evt', now);
  const deliveries = [0, 1].map((e) => newPendingDelivery({ id: ids('dlv', now), orgId, eventId, eventType: 'a.b', endpointId: `ep_0000000000000000000000000${e}`, nowMs: now }));
  return {
    event: { id: eventId, orgId, type: 'a.b', envelope: `{"id":"${eventId}","type":"a.b","timestamp":"x","data":${n}}`, createdAt: now, idempotencyKey: idempotencyKeyHash ? `key-${n}` : null, deliveryIds: deliveries.map((d) => d.id) },
    deliveries,
    idempotencyKeyHash,
    answer: idempotencyKeyHash ? `{"answer":${n}}` : '',
  };
}

test('several events in one call, the script loaded on the way; a repeated key answers the first; removal leaves nothing', async () => {
  expect(await redis.dbsize()).toBe(0);
  const events = [newEvent(1, 'a'.repeat(64)), newEvent(2, null), newEvent(3, 'a'.repeat(64))];
  const results = await store.events.createManyWithDeliveries(events);
  expect(results).toEqual([
    { created: true, answer: '{"answer":1}' },
    { created: true, answer: '' },
    { created: false, answer: '{"answer":1}' },
  ]);
  // Each call was refused NOSCRIPT once, then run with its source: three of each.
  const stats = await redis.info('commandstats');
  expect([/cmdstat_evalsha:calls=(\d+),.*failed_calls=(\d+)/.exec(stats)?.slice(1), /cmdstat_eval:calls=(\d+)/.exec(stats)?.[1]]).toEqual([['3', '3'], '3']);
  // The first two are stored whole, the third not at all.
  for (const e of events.slice(0, 2)) {
    expect(await store.events.get(orgId, e.event.id)).toMatchObject({ id: e.event.id, deliveryIds: e.event.deliveryIds });
    expect((await store.deliveries.getMany(orgId, e.event.deliveryIds)).map((d) => d.status)).toEqual(['pending', 'pending']);
  }
  expect(await store.events.get(orgId, events[2]!.event.id)).toBeNull();

  // Loaded now: the next call needs no second round.
  const again = await store.events.createManyWithDeliveries([newEvent(4, null)]);
  expect(again).toEqual([{ created: true, answer: '' }]);

  await store.events.removeManyUnqueued(events.slice(0, 2).map((e) => ({ event: e.event, deliveries: e.deliveries, idempotencyKeyHash: e.idempotencyKeyHash })));
  expect(await store.events.get(orgId, events[0]!.event.id)).toBeNull();
  expect(await store.events.storedAnswer(orgId, 'a'.repeat(64))).toBeNull();
  expect(await store.deliveries.getMany(orgId, events[0]!.event.deliveryIds)).toEqual([]);
  // What is left: the fourth event's keys, and the org's counters and indexes it shares.
  const left = await redis.keys('many:*');
  expect(left.filter((k) => events.some((e) => k.includes(e.event.id) || e.event.deliveryIds.some((id) => k.includes(id))))).toEqual([]);
});

test('events of two orgs in one call are refused before anything is sent', async () => {
  const other = { ...newEvent(5, null) };
  other.event = { ...other.event, orgId: ids('org', Date.now()) };
  await expect(store.events.createManyWithDeliveries([newEvent(6, null), other])).rejects.toThrow('every event must be of one org');
});

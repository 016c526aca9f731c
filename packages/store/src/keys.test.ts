import { QueueKeys } from 'bullmq';
import { createKeySchema, type KeySchema } from './keys.js';
import { DELIVERY_QUEUE_NAME } from './delivery-queue.js';
import { queuePartitionOf } from './queue-partition.js';
import { parseClusterNodes } from './redis-connection.js';

/** The hash tag Redis Cluster slots a key by: the first `{…}` with something inside, else the key. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

/** Every key function of the schema that takes an org id, called for one org. */
function orgKeys(k: KeySchema, org: string): string[] {
  return [
    k.org(org),
    k.orgVersion(org),
    k.apiKeyRecord(org, 'key_1'),
    k.orgApiKeys(org),
    k.portalSession(org, 'ps_1'),
    k.deletedEndpoints(org),
    k.orgEndpoints(org),
    k.endpoint(org, 'ep_1'),
    k.endpointDeliveries(org, 'ep_1'),
    k.endpointDeliveriesByStatus(org, 'ep_1', 'pending'),
    k.endpointHeld(org, 'ep_1'),
    k.event(org, 'evt_1'),
    k.idempotency(org, 'abc'),
    k.actionIdempotency(org, 'redeliver', 'abc'),
    k.delivery(org, 'dlv_1'),
    k.deliveryAttempts(org, 'dlv_1'),
    k.legacyUnfinishedDeliveries(org),
    k.orgNotifications(org),
    k.notification(org, 'ntf_1'),
    k.orgAuditLog(org),
    k.endpointBulkRedelivered(org, 'ep_1'),
    k.endpointTrimming(org, 'ep_1'),
    k.endpointLeases(org, 'ep_1'),
    k.orgLeases(org),
    k.endpointParked(org, 'ep_1'),
    k.orgParked(org),
    k.eventClaim(org, 'ep_1', 'evt_1'),
    k.eventClaimWaiters(org, 'ep_1', 'evt_1'),
    k.orgAcceptSeq(org),
    k.endpointKeyLines(org, 'ep_1'),
    k.orderingKeySequence(org, 'ep_1', 'abc'),
    k.endpointRate(org, 'ep_1'),
  ];
}

test('every key of one org carries the org hash tag (one slot), and keys start with the prefix', () => {
  const k = createKeySchema('postern');
  const keys = orgKeys(k, 'org_A');
  expect(new Set(keys.map(hashTag))).toEqual(new Set(['o:org_A']));
  expect(keys.every((key) => key.startsWith('postern:'))).toBe(true);
  expect(new Set(keys).size).toBe(keys.length);
  expect(new Set(orgKeys(k, 'org_B').map(hashTag))).toEqual(new Set(['o:org_B']));
});

test("an API key's two lookups share the key hash's tag; global keys carry no org tag", () => {
  const k = createKeySchema('postern');
  expect(hashTag(k.apiKey('ff00'))).toBe(hashTag(k.apiKeyIdByHash('ff00')));
  expect(hashTag(k.apiKey('ff00'))).not.toContain('o:');
  expect(k.orgs()).toBe('postern:orgs');
  expect(k.instanceMarker()).toBe('postern:instance');
});

test('platform keys share one tag of their own, never an org tag, so each transaction on them is one slot', () => {
  const k = createKeySchema('postern');
  const keys = [k.platformKeyRecord('pfk_1'), k.platformKeys(), k.platformKeyIdsByHash(), k.platformAuditLog()];
  expect(new Set(keys.map(hashTag))).toEqual(new Set(['platform']));
  expect(keys.every((key) => key.startsWith('postern:'))).toBe(true);
});

test('each queue partition has its own tagged prefix; a delivery job lives in its org partition', () => {
  const k = createKeySchema('postern', { queuePartitions: 4 });
  expect([0, 1, 2, 3].map((n) => k.queuePrefix(n))).toEqual(['{postern:q0}', '{postern:q1}', '{postern:q2}', '{postern:q3}']);
  const n = k.partitionOf('org_A');
  expect(k.deliveryJob('org_A', 'dlv_1')).toBe(`{postern:q${n}}:deliveries:dlv_1`);
});

test("the queue keys a sender's takeover touches are BullMQ's own, in the partition's slot", () => {
  const k = createKeySchema('postern', { queuePartitions: 2 });
  const bull = new QueueKeys(k.queuePrefix(1)).getKeys(DELIVERY_QUEUE_NAME);
  expect(k.queueActive(1)).toBe(bull.active);
  expect(k.queueStalled(1)).toBe(bull.stalled);
  expect(k.queueStalledCheck(1)).toBe(bull['stalled-check']);
  expect(k.deliveryJobLock(1, 'dlv_1')).toBe(`${new QueueKeys(k.queuePrefix(1)).toKey(DELIVERY_QUEUE_NAME, 'dlv_1')}:lock`);
  expect(new Set([k.queueActive(1), k.queueStalled(1), k.queueStalledCheck(1), k.deliveryJobLock(1, 'dlv_1')].map(hashTag))).toEqual(new Set(['postern:q1']));
});

test("the senders' heartbeat keys share one tag of their own, never an org's", () => {
  const k = createKeySchema('postern');
  const keys = [k.senderHeartbeats(), k.senderRecord('s1'), k.senderTakeover('s1')];
  expect(new Set(keys.map(hashTag))).toEqual(new Set(['senders']));
  expect(keys.every((key) => key.startsWith('postern:'))).toBe(true);
});

test('the partition of an org is stable, in range, and spreads orgs over every partition', () => {
  expect(queuePartitionOf('org_A', 1)).toBe(0);
  const seen = new Set<number>();
  for (let i = 0; i < 200; i++) {
    const n = queuePartitionOf(`org_${i}`, 8);
    expect(n).toBe(queuePartitionOf(`org_${i}`, 8));
    expect(n).toBeGreaterThanOrEqual(0);
    expect(n).toBeLessThan(8);
    seen.add(n);
  }
  expect(seen.size).toBe(8);
});

test('the schema refuses braces in the prefix and partitions below 1', () => {
  expect(() => createKeySchema('a{b}')).toThrow(/REDIS_PREFIX/);
  expect(() => createKeySchema('p', { queuePartitions: 0 })).toThrow(/QUEUE_PARTITIONS/);
});

test('REDIS_CLUSTER_NODES parses host:port lists and refuses anything else', () => {
  expect(parseClusterNodes('127.0.0.1:7100, redis-b:7101')).toEqual([{ host: '127.0.0.1', port: 7100 }, { host: 'redis-b', port: 7101 }]);
  expect(() => parseClusterNodes('redis-a')).toThrow(/host:port/);
  expect(() => parseClusterNodes('redis-a:0')).toThrow(/host:port/);
  expect(() => parseClusterNodes('')).toThrow(/no host:port/);
});

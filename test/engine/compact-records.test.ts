import { randomBytes } from 'node:crypto';
import { startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';
import { keyBytesByClass } from '../support/memory-breakdown.js';

/**
 * Compact records (issue 12, item 3): Redis bytes per delivery, payload excluded, stay within the
 * bounds README states, measured as bench/finished-memory.ts measures them (the sum of `MEMORY
 * USAGE` growth over N deliveries of one endpoint, indexes past 128 members as in production), and
 * the delivery, event and job hashes stay listpack-encoded. Memory figures are deterministic for
 * given ids and values, so the bounds are tight; no timing is asserted.
 */

/** Per pending delivery with its BullMQ job (issue 12's target). */
const PENDING_BOUND_BYTES = 1400;
/** Per finished delivery with its attempt and index entries (issue 12's target; about 776 B reached, README "Memory per delivery"). */
const FINISHED_BOUND_BYTES = 800;
const N = 200;

let postern: TestPostern;
let receiver: TestReceiver;
let orgId: string;
let ids: string[] = [];
let eventIds: string[] = [];
let envelopeBytes = 0;
let before: Map<string, number>;

beforeAll(async () => {
  // A prefix as long as the default `postern`, as the bench uses: key names are part of the bytes.
  postern = await startPostern({ sender: false, prefix: `pc:${randomBytes(2).toString('hex')}` });
  receiver = await startReceiver(() => 200);
  const org = await postern.createOrg();
  orgId = org.id;
  await postern.createEndpoint(org.apiKey, { url: receiver.url, policy: { preset: 'standard', maxAttempts: 1 } });
  before = await keyBytesByClass(postern.redis, [postern.prefix, `{${postern.prefix}:`], orgId);
  for (let i = 0; i < N; i++) {
    const body = (await postern.api('POST', '/v1/events', { key: org.apiKey, body: { type: 'invoice.paid', data: { invoice: `in_${String(i).padStart(5, '0')}`, amount: 1234 } } })).body;
    ids.push(body.deliveries[0].id);
    eventIds.push(body.id);
  }
  envelopeBytes = Buffer.byteLength((await postern.store.events.get(orgId, eventIds[0]!))!.envelope);
}, 60_000);

afterAll(async () => {
  await postern.close();
  await receiver.close();
});

/** Bytes per delivery of every key class that grew, fixed costs (counters per hour, the queue's bounded stream and markers) left out, payload excluded. */
async function perDelivery(): Promise<number> {
  const after = await keyBytesByClass(postern.redis, [postern.prefix, `{${postern.prefix}:`], orgId);
  let grown = 0;
  for (const [cls, bytes] of after) {
    if (cls.startsWith('stats ') || /^\{q\}:deliveries:(events|id|marker|meta|stalled-check)$/.test(cls)) continue;
    grown += bytes - (before.get(cls) ?? 0);
  }
  return grown / N - envelopeBytes;
}

test('a pending delivery with its job costs at most 1,400 B; its delivery, event and job hashes are listpacks', async () => {
  const bytes = await perDelivery();
  expect(bytes).toBeLessThanOrEqual(PENDING_BOUND_BYTES);
  expect(bytes).toBeGreaterThan(500); // the measure is not vacuous
  const k = postern.store.keys;
  for (const key of [k.delivery(orgId, ids[7]!), k.event(orgId, eventIds[7]!), k.deliveryJob(orgId, ids[7]!)]) {
    expect([key, await postern.redis.object('ENCODING', key)]).toEqual([key, 'listpack']);
  }
});

test('a finished delivery with its attempt and index entries costs at most 800 B, and reads back whole', async () => {
  await postern.startSender();
  await waitUntil('every delivery finished', async () => (await postern.store.unfinished.count(orgId)) === 0 || undefined, 60_000, 100);
  const bytes = await perDelivery();
  expect(bytes).toBeLessThanOrEqual(FINISHED_BOUND_BYTES);
  expect(bytes).toBeGreaterThan(300);
  const k = postern.store.keys;
  expect(await postern.redis.object('ENCODING', k.delivery(orgId, ids[7]!))).toBe('listpack');
  // What the compact form leaves out is read back as before.
  const d = (await postern.store.deliveries.get(orgId, ids[7]!))!;
  expect(d).toMatchObject({ id: ids[7], orgId, eventId: eventIds[7], status: 'succeeded', attempts: 1, lastResponseStatus: 200, lastError: null, nextAttemptAt: null });
  expect(d.finishedAt).toBe(d.updatedAt);
  expect(d.deliveredAt).toBe(d.finishedAt);
  const [attempt] = await postern.store.deliveries.getAttempts(orgId, ids[7]!);
  expect(attempt).toMatchObject({ number: 1, responseStatus: 200, error: null });
  expect(attempt!.requestHeaders!['webhook-id']).toBe(eventIds[7]);
  const received = receiver.requests.find((r) => r.headers['webhook-delivery-id'] === ids[7])!;
  expect(attempt!.requestHeaders!['webhook-signature']).toBe(received.headers['webhook-signature']);
  expect(received.body).toBe((await postern.store.events.get(orgId, eventIds[7]!))!.envelope);
  // What the ids say is not stored again (derived-ids.ts), yet the body sent has them right: the
  // event's id, and its creation time as the timestamp.
  expect(await postern.redis.hmget(k.delivery(orgId, ids[7]!), 'eventId', 'createdAt')).toEqual([null, null]);
  expect(await postern.redis.hmget(k.event(orgId, eventIds[7]!), 'timestamp', 'deliveryIds', 'unfinishedDeliveries', 'keepUntil')).toEqual([null, '1', '0', null]);
  const event = (await postern.store.events.get(orgId, eventIds[7]!))!;
  expect(event.deliveryIds).toEqual([ids[7]]);
  expect(JSON.parse(received.body)).toMatchObject({ id: eventIds[7], timestamp: new Date(d.createdAt).toISOString() });
  expect(event.createdAt).toBe(d.createdAt);
});

test('an envelope stored as split data (multi-byte characters across pieces) reaches the receiver byte for byte', async () => {
  const key = (await postern.createOrg()).apiKey;
  await postern.createEndpoint(key, { url: receiver.url, policy: { preset: 'standard', maxAttempts: 1 } });
  const note = 'Zoë — 東京 ✓ '.repeat(12);
  const posted = (await postern.api('POST', '/v1/events', { key, body: { type: 'note.created', data: { note } } })).body;
  const dlv = posted.deliveries[0].id as string;
  const got = await waitUntil('the delivery arrived', async () => receiver.requests.find((r) => r.headers['webhook-delivery-id'] === dlv), 20_000, 50);
  expect(JSON.parse(got.body).data.note).toBe(note);
  const event = await postern.api('GET', `/v1/events/${posted.id}`, { key });
  expect(event.status).toBe(200);
  expect(JSON.parse(got.body)).toEqual({ id: posted.id, type: 'note.created', timestamp: expect.any(String), data: { note } });
});

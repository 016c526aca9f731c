import { buildEnvelope, createSecretBox } from '@postern/shared';
import { deliveryHashFields, eventHashFields, newPendingDelivery, parseDelivery, parseEndpoint, parseEvent, type DeliveryRecord } from './records.js';

const hashOf = (fields: string[]) => Object.fromEntries(fields.flatMap((_, i) => (i % 2 === 0 ? [[fields[i]!, fields[i + 1]!]] : [])));
const pending = newPendingDelivery({ id: 'dlv_01M8QW8806MT2VMJ0WCK7E8998', orgId: 'org_01M8QW87YK9HTYMFYACTEH7FBX', eventId: 'evt_01M8QW8806MT2VMJ0WCK7E8997', eventType: 'invoice.paid', endpointId: 'ep_01M8QW87ZQBFTS143ESMMPAZGH', nowMs: 1_796_000_000_000 });

test('a new delivery stores only what cannot be derived, and reads back equal with the ids of its key', () => {
  const fields = deliveryHashFields(pending);
  // The event's id is the delivery's minus one (minted together): left out. createdAt is not the id's time: stored.
  expect(hashOf(fields)).toEqual({ eventType: 'invoice.paid', endpointId: pending.endpointId, status: 'pending', createdAt: '1796000000000' });
  expect(parseDelivery(hashOf(fields), pending.orgId, pending.id)).toEqual(pending);
});

test('a delivery leaves out a createdAt that is its id\'s time, and stores its event id as an offset or whole', () => {
  const atIdTime = { ...pending, createdAt: 1_796_097_712_134, updatedAt: 1_796_097_712_134, nextAttemptAt: 1_796_097_712_134 };
  expect(hashOf(deliveryHashFields(atIdTime))).toEqual({ eventType: 'invoice.paid', endpointId: pending.endpointId, status: 'pending' });
  expect(parseDelivery(hashOf(deliveryHashFields(atIdTime)), pending.orgId, pending.id)).toEqual(atIdTime);
  // The third delivery of a fan-out: its event is its id minus 3.
  const third = { ...atIdTime, eventId: 'evt_01M8QW8806MT2VMJ0WCK7E8995' };
  expect(hashOf(deliveryHashFields(third)).eventId).toBe('3');
  expect(parseDelivery(hashOf(deliveryHashFields(third)), pending.orgId, pending.id)).toEqual(third);
  // A redelivery (minted apart from its event) stores the id whole.
  const redelivery = { ...atIdTime, eventId: 'evt_01M8QW0000MT2VMJ0WCK7E8995', redeliveredFromId: 'dlv_01M8QW8806MT2VMJ0WCK7E8990' };
  expect(hashOf(deliveryHashFields(redelivery)).eventId).toBe(redelivery.eventId);
  expect(parseDelivery(hashOf(deliveryHashFields(redelivery)), pending.orgId, pending.id)).toEqual(redelivery);
});

test('a redelivery, a test delivery and a retried one keep their fields', () => {
  const d: DeliveryRecord = { ...pending, redeliveredFromId: 'dlv_01M8QW8806MT2VMJ0WCK7E8990', isTest: true, attempts: 2, nextAttemptAt: 1_796_000_060_000, updatedAt: 1_796_000_001_000, lastError: 'http_500', lastResponseStatus: 500, lastDurationMs: 12 };
  expect(parseDelivery(hashOf(deliveryHashFields(d)), d.orgId, d.id)).toEqual(d);
});

test('finish scripts store a finished time once: finishedAt is updatedAt and, when succeeded, so is deliveredAt', () => {
  const h = { ...hashOf(deliveryHashFields(pending)), status: 'succeeded', attempts: '1', updatedAt: '1796000000500', lastResponseStatus: '200', lastDurationMs: '9' };
  const d = parseDelivery(h, pending.orgId, pending.id)!;
  expect(d).toMatchObject({ finishedAt: 1_796_000_000_500, deliveredAt: 1_796_000_000_500, nextAttemptAt: null, updatedAt: 1_796_000_000_500 });
  const failed = parseDelivery({ ...h, status: 'failed' }, pending.orgId, pending.id)!;
  expect(failed).toMatchObject({ finishedAt: 1_796_000_000_500, deliveredAt: null });
  // A held delivery's cleared next attempt stays null.
  expect(parseDelivery({ ...hashOf(deliveryHashFields(pending)), held: '1' }, pending.orgId, pending.id)!.nextAttemptAt).toBeNull();
});

test('records written before compact records (every field, ids and empty values included) read as before', () => {
  const legacy = { id: pending.id, orgId: pending.orgId, eventId: pending.eventId, eventType: 'invoice.paid', endpointId: pending.endpointId, status: 'failed', attempts: '2', nextAttemptAt: '', lastResponseStatus: '500', lastError: 'http_500', lastDurationMs: '3', deliveredAt: '', createdAt: '1796000000000', updatedAt: '1796000000900', finishedAt: '1796000000800', redeliveredFromId: '', cancelReason: '', held: '0', isTest: '0', attemptStartedAt: '1796000000700' };
  expect(parseDelivery(legacy)).toMatchObject({ id: pending.id, orgId: pending.orgId, status: 'failed', nextAttemptAt: null, finishedAt: 1_796_000_000_800, updatedAt: 1_796_000_000_900, deliveredAt: null, redeliveredFromId: null });
  expect(parseDelivery({})).toBeNull();
});

test('an event stores neither its ids nor a null idempotency key, and reads back equal', () => {
  const e = { id: 'evt_01M8QW8806MT2VMJ0WCK7E8997', orgId: pending.orgId, type: 'invoice.paid', envelope: '{"id":"evt_01M8QW8806MT2VMJ0WCK7E8997"}', createdAt: 1_796_000_000_000, idempotencyKey: null, deliveryIds: [pending.id] };
  const h = hashOf(eventHashFields(e));
  expect(Object.keys(h).sort()).toEqual(['createdAt', 'deliveryIds', 'envelope', 'type']);
  expect(parseEvent(h, e.orgId, e.id)).toEqual(e);
  expect(parseEvent({ ...h, id: e.id, orgId: e.orgId, idempotencyKey: '' })).toEqual(e);
  expect(parseEvent({})).toBeNull();
});

test('an envelope built by buildEnvelope is stored as its data and timestamp, and rebuilt byte for byte', () => {
  const id = 'evt_01M8QW8806MT2VMJ0WCK7E8997';
  const createdAt = 1_796_000_000_123;
  const envelope = buildEnvelope({ id, type: 'invoice.paid', timestampMs: createdAt, dataJson: '{"note":"Zoë — 東京","n":[1, 2]}' });
  const e = { id, orgId: pending.orgId, type: 'invoice.paid', envelope, createdAt, idempotencyKey: 'k-1', deliveryIds: [pending.id] };
  const h = hashOf(eventHashFields(e));
  // Its one delivery is its id plus one: stored as the count.
  expect(h).toEqual({ type: 'invoice.paid', idempotencyKey: 'k-1', deliveryIds: '1', timestamp: '2026-11-30T00:53:20.123Z', data: '{"note":"Zoë — 東京","n":[1, 2]}' });
  expect(parseEvent(h, e.orgId, id)).toEqual(e);
  // Delivery ids minted apart are stored as JSON, and so read (as every event written before).
  const apart = { ...e, deliveryIds: ['dlv_01M8QW8806MT2VMJ0WCK7E8999'] };
  expect(hashOf(eventHashFields(apart)).deliveryIds).toBe(JSON.stringify(apart.deliveryIds));
  expect(parseEvent(hashOf(eventHashFields(apart)), e.orgId, id)).toEqual(apart);
  // Created at its id's time: the timestamp is left out and rebuilt from the id.
  const atIdTime = { ...e, createdAt: 1_796_097_712_134, envelope: buildEnvelope({ id, type: 'invoice.paid', timestampMs: 1_796_097_712_134, dataJson: '{"a":1}' }), deliveryIds: [pending.id, 'dlv_01M8QW8806MT2VMJ0WCK7E8999'] };
  expect(hashOf(eventHashFields(atIdTime))).toEqual({ type: 'invoice.paid', idempotencyKey: 'k-1', deliveryIds: '2', data: '{"a":1}' });
  expect(parseEvent(hashOf(eventHashFields(atIdTime)), e.orgId, id)).toEqual(atIdTime);
  // A type that JSON escapes is stored whole.
  const odd = { ...e, type: 'a"b', envelope: buildEnvelope({ id, type: 'a"b', timestampMs: createdAt, dataJson: '1' }) };
  expect(hashOf(eventHashFields(odd)).envelope).toBe(odd.envelope);
  expect(parseEvent(hashOf(eventHashFields(odd)), e.orgId, id)).toEqual(odd);
});

test('the last outcome is read from the latest finished attempt core, split or whole, unless stored', () => {
  const base = hashOf(deliveryHashFields(pending));
  const h = { ...base, status: 'pending', attempts: '2', a1: '[1796000000000,12,500,"http_500"]', 'a2~0': '[1796000060000', 'a2~1': ',7,503,"http_503","Postern/1",0,"v1,abc"]' };
  expect(parseDelivery(h, pending.orgId, pending.id)).toMatchObject({ lastResponseStatus: 503, lastError: 'http_503', lastDurationMs: 7 });
  // Attempt 3 in flight (only its start): the outcome shown is still attempt 2's.
  expect(parseDelivery({ ...h, status: 'in_flight', attempts: '3', a3: '[1796000120000]' }, pending.orgId, pending.id)).toMatchObject({ lastResponseStatus: 503, lastError: 'http_503' });
  // A reason stored by a settle wins; so does '' of a record written before compact records.
  expect(parseDelivery({ ...h, status: 'failed', lastError: 'endpoint_inactive' }, pending.orgId, pending.id)).toMatchObject({ lastError: 'endpoint_inactive', lastResponseStatus: 503 });
  expect(parseDelivery({ ...h, lastError: '', lastResponseStatus: '' }, pending.orgId, pending.id)).toMatchObject({ lastError: null, lastResponseStatus: null, lastDurationMs: 7 });
});

test('an endpoint reads the same with the marks the claim keeps on its hash (lined, orgGate)', () => {
  const box = createSecretBox({ current: null, previous: [] });
  const hash = { id: 'ep_01M8QW87ZQBFTS143ESMMPAZGH', orgId: pending.orgId, url: 'https://example.com/hook', policy: '{"maxAttempts":3}', status: 'active', createdAt: '1796000000000' };
  const plain = parseEndpoint(hash, box);
  expect(plain).toMatchObject({ id: hash.id, url: hash.url, status: 'active' });
  expect(parseEndpoint({ ...hash, lined: '1', orgGate: '1' }, box)).toEqual(plain);
});

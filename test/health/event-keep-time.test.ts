import { pino } from 'pino';
import { createIdFactory } from '@postern/shared';
import { newPendingDelivery, type AttemptIds, type Store } from '@postern/store';
import { createJanitor, runAttempt, type DeliveryTransport } from '@postern/sender';
import { startAttemptHarness, type AttemptHarness } from '../support/attempt-harness.js';
import type { TestPostern } from '../support/postern.js';

/**
 * An event is kept as long as the longest-kept of its deliveries (docs/architecture.md,
 * "Retention"). The last of its deliveries to finish leaves that time only in the event's own
 * expiry (one write fewer per delivery): a redelivery made afterwards, and a removal of one of its
 * deliveries before its time (a deleted endpoint's log), must still keep the event that long.
 */

const DAY_MS = 24 * 60 * 60 * 1000;

let harness: AttemptHarness;
let postern: TestPostern;
let apiKey: string;
let orgId: string;
let store: Store;
const ids = createIdFactory();

beforeAll(async () => {
  harness = await startAttemptHarness();
  ({ postern, apiKey, orgId, store } = harness);
});
afterAll(() => harness.close());

const answered200: DeliveryTransport = { send: async () => ({ kind: 'response', status: 200, retryAfter: undefined, bodyBytesRead: 0 }), close() {} };

const deps = () => harness.deps(answered200);

/** An event of its own type to an endpoint kept `longDays` and one kept `shortDays`. */
async function eventToTwo(longDays: number, shortDays: number): Promise<{ eventId: string; long: AttemptIds; short: AttemptIds; shortEndpointId: string }> {
  const type = `keep.t${Math.random().toString(36).slice(2, 8)}`;
  const endpoint = async (days: number) =>
    (await postern.createEndpoint(apiKey, { url: 'http://127.0.0.1:9/hook', eventTypes: [type], policy: { preset: 'standard', retention: { days } } })).id as string;
  const longId = await endpoint(longDays);
  const shortId = await endpoint(shortDays);
  const r = await postern.api('POST', '/v1/events', { key: apiKey, body: { type, data: { n: 1 } } });
  expect(r.status).toBe(202);
  const of = (endpointId: string): AttemptIds => ({
    deliveryId: (r.body.deliveries as { id: string; endpointId: string }[]).find((d) => d.endpointId === endpointId)!.id,
    endpointId,
    eventId: r.body.id as string,
    orgId,
  });
  return { eventId: r.body.id as string, long: of(longId), short: of(shortId), shortEndpointId: shortId };
}

const eventTtlDays = async (eventId: string) => (await postern.redis.pttl(store.keys.event(orgId, eventId))) / DAY_MS;

test('the last delivery to finish, kept the shorter time, leaves the event kept the longer one', async () => {
  const { eventId, long, short } = await eventToTwo(30, 1);
  expect(await runAttempt(deps(), long)).toEqual({ kind: 'done', status: 'succeeded' });
  expect(await postern.redis.pttl(store.keys.event(orgId, eventId))).toBe(-1);
  expect(await runAttempt(deps(), short)).toEqual({ kind: 'done', status: 'succeeded' });
  expect(await eventTtlDays(eventId)).toBeGreaterThan(29.9);
  expect(await postern.redis.hget(store.keys.event(orgId, eventId), 'unfinishedDeliveries')).toBe('0');
});

test('a redelivery after the last finish keeps the event as long as its longest-kept delivery', async () => {
  const { eventId, long, short } = await eventToTwo(30, 1);
  // The short one first: the long one finishes last, and its 30 days are left in the expiry only.
  expect(await runAttempt(deps(), short)).toEqual({ kind: 'done', status: 'succeeded' });
  expect(await runAttempt(deps(), long)).toEqual({ kind: 'done', status: 'succeeded' });
  expect(await eventTtlDays(eventId)).toBeGreaterThan(29.9);
  // A redelivery of the short-kept one: the event waits for it (no expiry), then it finishes.
  const original = (await store.deliveries.get(orgId, short.deliveryId))!;
  const redelivery = newPendingDelivery({ ...original, id: ids('dlv', Date.now()), nowMs: Date.now(), redeliveredFromId: original.id });
  await store.deliveries.createMany([redelivery]);
  expect(await postern.redis.pttl(store.keys.event(orgId, eventId))).toBe(-1);
  expect(await runAttempt(deps(), { ...short, deliveryId: redelivery.id })).toEqual({ kind: 'done', status: 'succeeded' });
  // Still kept the 30 days of the long one, not the redelivery's one day.
  expect(await eventTtlDays(eventId)).toBeGreaterThan(29.9);
});

test("a deleted endpoint's log removed before its time leaves the event kept for the others", async () => {
  // The short-kept one finishes first; the long-kept one's ten years are left in the expiry only.
  const { eventId, long, short, shortEndpointId } = await eventToTwo(3650, 1);
  expect(await runAttempt(deps(), short)).toEqual({ kind: 'done', status: 'succeeded' });
  expect(await runAttempt(deps(), long)).toEqual({ kind: 'done', status: 'succeeded' });
  expect(await postern.api('DELETE', `/v1/endpoints/${shortEndpointId}`, { key: apiKey })).toMatchObject({ status: 204 });
  // Past a deleted endpoint's 30 days, the janitor removes its log; the other delivery keeps the event.
  await createJanitor({ store, clock: { now: () => Date.now() + 31 * DAY_MS }, logger: pino({ level: 'silent' }) }).runOnce();
  expect(await postern.redis.exists(store.keys.delivery(orgId, short.deliveryId))).toBe(0);
  expect(await postern.redis.exists(store.keys.event(orgId, eventId))).toBe(1);
  expect(await eventTtlDays(eventId)).toBeGreaterThan(3649);
});

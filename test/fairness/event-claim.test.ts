import { createIdFactory } from '@postern/shared';
import { newPendingDelivery, type AttemptIds, type Store } from '@postern/store';
import { runAttempt, type DeliveryTransport, type TransportResult } from '@postern/sender';
import { startAttemptHarness, type AttemptHarness } from '../support/attempt-harness.js';
import type { TestPostern } from '../support/postern.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * The event claim (one delivery of an event at a time at an endpoint) with the real claim and
 * finish scripts: taken only where the event can have a second delivery at the endpoint (a
 * redelivery, or any delivery of an event a redelivery has claimed for), and still kept when a
 * redelivery meets an original whose attempt began before any redelivery existed.
 */

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

/** A transport whose answers the test gives, one request at a time, by delivery id. */
function heldTransport() {
  const waiting = new Map<string, (r: TransportResult) => void>();
  const sent: string[] = [];
  const t: DeliveryTransport = {
    send(request) {
      const id = request.headers['webhook-delivery-id']!;
      sent.push(id);
      return new Promise<TransportResult>((resolve) => waiting.set(id, resolve));
    },
    close() {},
  };
  const answer = (id: string) => {
    waiting.get(id)!({ kind: 'response', status: 200, retryAfter: undefined, bodyBytesRead: 0 });
    waiting.delete(id);
  };
  return { t, sent, answer, inFlight: (id: string) => waiting.has(id) };
}

const deps = (t: DeliveryTransport, woken: string[]) => harness.deps(t, woken);

async function endpoint(): Promise<string> {
  return (await postern.createEndpoint(apiKey, { url: 'http://127.0.0.1:9/hook', policy: 'standard' })).id as string;
}

async function event(endpointId: string): Promise<AttemptIds> {
  const r = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'invoice.paid', data: { n: 1 } } });
  expect(r.status).toBe(202);
  const d = (r.body.deliveries as { id: string; endpointId: string }[]).find((x) => x.endpointId === endpointId)!;
  return { deliveryId: d.id, endpointId, eventId: r.body.id as string, orgId };
}

/** A redelivery of `from`, written as the redelivery routes write one (their checks already passed). */
async function redeliver(from: AttemptIds): Promise<AttemptIds> {
  const original = (await store.deliveries.get(orgId, from.deliveryId))!;
  const r = newPendingDelivery({ ...original, id: ids('dlv', Date.now()), nowMs: Date.now(), redeliveredFromId: original.id });
  await store.deliveries.createMany([r]);
  return { ...from, deliveryId: r.id };
}

const claimKey = (a: AttemptIds) => store.keys.eventClaim(orgId, a.endpointId, a.eventId);

test('a delivery whose event has no redelivery neither takes nor leaves an event claim', async () => {
  const endpointId = await endpoint();
  const first = await event(endpointId);
  const { t, answer, inFlight } = heldTransport();
  const running = runAttempt(deps(t, []), first);
  await waitUntil('the attempt in flight', () => inFlight(first.deliveryId));
  expect(await postern.redis.exists(claimKey(first))).toBe(0);
  answer(first.deliveryId);
  expect(await running).toEqual({ kind: 'done', status: 'succeeded' });
  expect(await postern.redis.hget(store.keys.delivery(orgId, first.deliveryId), 'claimHeld')).toBeNull();
});

test('an original in flight without a claim: its redelivery waits for it and is woken by its finish', async () => {
  const endpointId = await endpoint();
  const original = await event(endpointId);
  const { t, sent, answer, inFlight } = heldTransport();
  const woken: string[] = [];
  const running = runAttempt(deps(t, woken), original);
  await waitUntil('the original in flight', () => inFlight(original.deliveryId));
  // Made after the original's attempt began (a redelivery route read it as pending just before).
  const redelivery = await redeliver(original);
  expect(await runAttempt(deps(t, woken), redelivery)).toEqual({ kind: 'parked', limit: 'event_claim' });
  expect(sent).toEqual([original.deliveryId]);
  answer(original.deliveryId);
  expect(await running).toEqual({ kind: 'done', status: 'succeeded' });
  expect(woken).toContain(redelivery.deliveryId);
  expect(await postern.redis.exists(claimKey(original))).toBe(0);
  const again = runAttempt(deps(t, woken), redelivery);
  await waitUntil('the redelivery in flight', () => inFlight(redelivery.deliveryId));
  answer(redelivery.deliveryId);
  expect(await again).toEqual({ kind: 'done', status: 'succeeded' });
  expect(await postern.redis.exists(claimKey(original))).toBe(0);
});

test('a redelivery in flight: the original, not yet attempted, waits for it, then goes', async () => {
  const endpointId = await endpoint();
  const original = await event(endpointId);
  const redelivery = await redeliver(original);
  const { t, sent, answer, inFlight } = heldTransport();
  const woken: string[] = [];
  const running = runAttempt(deps(t, woken), redelivery);
  await waitUntil('the redelivery in flight', () => inFlight(redelivery.deliveryId));
  expect(await runAttempt(deps(t, woken), original)).toEqual({ kind: 'parked', limit: 'event_claim' });
  expect(sent).toEqual([redelivery.deliveryId]);
  answer(redelivery.deliveryId);
  expect(await running).toEqual({ kind: 'done', status: 'succeeded' });
  expect(woken).toContain(original.deliveryId);
  const again = runAttempt(deps(t, woken), original);
  await waitUntil('the original in flight', () => inFlight(original.deliveryId));
  expect(await postern.redis.get(claimKey(original))).toBe(original.deliveryId);
  answer(original.deliveryId);
  expect(await again).toEqual({ kind: 'done', status: 'succeeded' });
  expect(await postern.redis.exists(claimKey(original))).toBe(0);
  expect(await postern.redis.hget(store.keys.delivery(orgId, original.deliveryId), 'claimHeld')).toBeNull();
});

test('a redelivery of a redelivery waits for the original in flight, the first of its chain', async () => {
  const endpointId = await endpoint();
  const original = await event(endpointId);
  const { t, answer, inFlight } = heldTransport();
  const woken: string[] = [];
  const running = runAttempt(deps(t, woken), original);
  await waitUntil('the original in flight', () => inFlight(original.deliveryId));
  const second = await redeliver(await redeliver(original));
  expect(await runAttempt(deps(t, woken), second)).toEqual({ kind: 'parked', limit: 'event_claim' });
  answer(original.deliveryId);
  expect(await running).toEqual({ kind: 'done', status: 'succeeded' });
  expect(woken).toContain(second.deliveryId);
});

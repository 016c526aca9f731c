import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type ReceivedRequest, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Issue 5 and tourical ("a delivery is claimed atomically by one worker"): a redelivery made while
 * the original waits for its scheduled retry never has a request in flight at the same time as
 * that retry; the later one waits for the earlier to finish. Both still succeed.
 */

const EVENTS = 5;
/** Long enough that the redelivery is made before the retry starts, even on a busy machine. */
const RETRY_WAIT_MS = 1000;
/** The redelivery's request is held past the moment the retry falls due. */
const HOLD_MS = 1500;

let postern: TestPostern;
let receiver: TestReceiver;
/** Requests in flight and most at once, per event id (`webhook-id`). */
const inFlight = new Map<string, number>();
const peak = new Map<string, number>();
/** When each request (by `webhook-request-id`) arrived and was answered. */
const spans = new Map<string, { from: number; to: number }>();

beforeAll(async () => {
  postern = await startPostern({ senderConcurrency: 20 });
  const seenEvents = new Set<string>();
  receiver = await startReceiver(async (req: ReceivedRequest) => {
    const eventId = String(req.headers['webhook-id']);
    // Each event's first request fails at once, so the original delivery schedules a retry.
    if (!seenEvents.has(eventId)) {
      seenEvents.add(eventId);
      return 500;
    }
    const n = (inFlight.get(eventId) ?? 0) + 1;
    inFlight.set(eventId, n);
    peak.set(eventId, Math.max(peak.get(eventId) ?? 0, n));
    await new Promise((r) => setTimeout(r, HOLD_MS));
    inFlight.set(eventId, (inFlight.get(eventId) ?? 1) - 1);
    spans.set(String(req.headers['webhook-request-id']), { from: req.at, to: Date.now() });
    return 200;
  });
});
afterAll(async () => {
  await postern?.close();
  await receiver?.close();
});

test('a redelivery and a scheduled retry of the same delivery never overlap in flight', async () => {
  const { apiKey, id: orgId } = await postern.createOrg();
  const policy = fastPolicy(3, RETRY_WAIT_MS, { redelivery: { allowed: true, whilePending: true }, concurrency: { perEndpoint: 20, perOrg: 20 } });
  await postern.createEndpoint(apiKey, { url: receiver.url, policy });

  const pairs = await Promise.all(
    Array.from({ length: EVENTS }, async (_, i) => {
      const r = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'invoice.paid', data: { i } } });
      expect(r.status).toBe(202);
      const originalId = r.body.deliveries[0].id as string;
      // The first attempt failed and the retry is scheduled: redeliver now, racing it.
      const failed = await waitUntil('first attempt failed', async () => {
        const d = await postern.store.deliveries.get(orgId, originalId);
        return d?.status === 'pending' && d.attempts === 1 ? d : undefined;
      }, 10_000, 5);
      const redelivered = await postern.api('POST', `/v1/deliveries/${originalId}/redeliver`, { key: apiKey });
      expect([redelivered.status, redelivered.body]).toEqual([202, expect.anything()]);
      return { eventId: r.body.id as string, originalId, redeliveryId: redelivered.body.delivery.id as string, retryDueAt: failed.nextAttemptAt! };
    }),
  );

  const ids = pairs.flatMap((p) => [p.originalId, p.redeliveryId]);
  await waitUntil('originals and redeliveries succeeded', async () => (await postern.store.deliveries.getMany(orgId, ids)).every((d) => d.status === 'succeeded'), 20_000, 50);
  for (const p of pairs) expect(peak.get(p.eventId)).toBe(1);

  // The race was real: the retry fell due while the redelivery's request was in flight, and waited.
  const raced = pairs.filter((p) => {
    const redelivery = spans.get(`${p.redeliveryId}.1`);
    const retry = spans.get(`${p.originalId}.2`);
    return redelivery && retry && p.retryDueAt > redelivery.from && p.retryDueAt < redelivery.to && retry.from >= redelivery.to;
  });
  expect(raced.length).toBeGreaterThan(0);
  const originals = await postern.store.deliveries.getMany(orgId, pairs.map((p) => p.originalId));
  expect(originals.every((d) => d.attempts === 2)).toBe(true);
}, 60_000);

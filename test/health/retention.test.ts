import { pino } from 'pino';
import { createJanitor } from '@postern/sender';
import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Retention (docs/architecture.md "log kept" row): the janitor keeps the newest N finished deliveries of an
 * endpoint, or those finished within N days; attempts and events go with them; queued deliveries
 * are never removed, so Redis memory stays flat under a steady stream.
 */

const DAY_MS = 24 * 60 * 60 * 1000;
const LONG_MS = 60_000;
const ROOMY = { concurrency: { perEndpoint: 50, perOrg: 50 } };

let postern: TestPostern;
let receiver: TestReceiver;
let apiKey: string;
let orgId: string;

beforeAll(async () => {
  postern = await startPostern();
  // An event marked `stuck` is answered 500 and then waits a minute for its retry: it stays queued.
  receiver = await startReceiver((req) => ((JSON.parse(req.body) as { data: { stuck?: boolean } }).data.stuck ? 500 : 200));
  ({ apiKey, id: orgId } = await postern.createOrg());
});
afterAll(async () => {
  await postern.close();
  await receiver.close();
});

async function endpointWith(retention: unknown): Promise<{ id: string; type: string }> {
  const type = `retention.${Object.keys(retention as object)[0]}`;
  const endpoint = await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: [type], policy: { ...fastPolicy(3, LONG_MS, ROOMY), retention } });
  return { id: endpoint.id, type };
}

async function post(type: string, data: unknown): Promise<{ eventId: string; deliveryId: string }> {
  const r = await postern.api('POST', '/v1/events', { key: apiKey, body: { type, data } });
  expect(r.status).toBe(202);
  return { eventId: r.body.id, deliveryId: r.body.deliveries[0].id };
}

/** Posts `count` events one after another and waits until every delivery succeeded. */
async function stream(type: string, count: number): Promise<{ eventId: string; deliveryId: string }[]> {
  const posted: { eventId: string; deliveryId: string }[] = [];
  for (let n = 0; n < count; n++) posted.push(await post(type, { n }));
  await waitUntil(`${count} deliveries succeeded`, async () => {
    const rows = await postern.store.deliveries.getMany(orgId, posted.map((p) => p.deliveryId));
    return rows.every((d) => d.status === 'succeeded') ? true : undefined;
  });
  return posted;
}

async function waitForPending(deliveryId: string): Promise<void> {
  await waitUntil('the stuck delivery waiting for its retry', async () => {
    const d = await postern.store.deliveries.get(orgId, deliveryId);
    return d?.status === 'pending' && d.attempts === 1 ? true : undefined;
  });
}

async function logIds(endpointId: string): Promise<string[]> {
  const r = await postern.api('GET', `/v1/endpoints/${endpointId}/deliveries?limit=100`, { key: apiKey });
  expect(r.status).toBe(200);
  return (r.body.data as { id: string }[]).map((d) => d.id);
}

/** Bytes Redis holds under this test's prefix: MEMORY USAGE of every key, found with SCAN. */
async function memoryUnderPrefix(): Promise<{ bytes: number; byKey: Record<string, number> }> {
  const byKey: Record<string, number> = {};
  let bytes = 0;
  let cursor = '0';
  do {
    const [next, keys] = await postern.redis.scan(cursor, 'MATCH', `${postern.prefix}:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      // The org's live feed and audit log are capped per org (LIVE_FEED_MAX_ENTRIES, 90 days), not per delivery kept.
      if (key.endsWith(':live') || key.endsWith(':audit')) continue;
      const used = Number((await postern.redis.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) ?? 0);
      byKey[key.slice(postern.prefix.length + 1)] = used;
      bytes += used;
    }
  } while (cursor !== '0');
  return { bytes, byKey };
}

/** Waits until the endpoint's log (newest first) is exactly `expected`. */
async function logBecomes(endpointId: string, expected: string[]): Promise<void> {
  await waitUntil('the log trimmed', async () => (JSON.stringify(await logIds(endpointId)) === JSON.stringify(expected) ? true : undefined)).catch(async (err: Error) => {
    throw new Error(`${err.message}: ${(await logIds(endpointId)).length} rows, expected ${expected.length}`);
  });
}

test('lastPerEndpoint 10: each finish trims the log to the 10 newest finished deliveries (no sweep), never a queued one, and memory stays flat', async () => {
  const endpoint = await endpointWith({ lastPerEndpoint: 10 });
  const stuck = await post(endpoint.type, { stuck: true });
  await waitForPending(stuck.deliveryId);

  const firstStream = await stream(endpoint.type, 60);
  const newest = firstStream.slice(-10).map((p) => p.deliveryId);
  await logBecomes(endpoint.id, [...newest].reverse().concat(stuck.deliveryId));
  // Nothing is left for the janitor.
  expect(await postern.sender!.janitor.runOnce()).toMatchObject({ removed: 0 });

  const removed = firstStream.slice(0, 50);
  for (const { eventId, deliveryId } of [removed[0]!, removed[49]!]) {
    expect((await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey })).status).toBe(404);
    expect((await postern.api('GET', `/v1/events/${eventId}`, { key: apiKey })).status).toBe(404);
  }
  const leftovers = await Promise.all(
    removed.flatMap((p) => [postern.store.keys.delivery(orgId, p.deliveryId), postern.store.keys.deliveryAttempts(orgId, p.deliveryId), postern.store.keys.event(orgId, p.eventId)]).map((k) => postern.redis.exists(k)),
  );
  expect(leftovers.filter((n) => n === 1)).toHaveLength(0);
  expect((await postern.api('GET', `/v1/events/${firstStream[59]!.eventId}`, { key: apiKey })).status).toBe(200);
  const after60 = await memoryUnderPrefix();

  const secondStream = await stream(endpoint.type, 60);
  await logBecomes(endpoint.id, secondStream.slice(-10).map((p) => p.deliveryId).reverse().concat(stuck.deliveryId));
  expect(await postern.sender!.janitor.runOnce()).toMatchObject({ removed: 0 });
  const after120 = await memoryUnderPrefix();

  expect(Math.abs(after120.bytes - after60.bytes) / after60.bytes).toBeLessThan(0.15);
  expect((await postern.store.deliveries.get(orgId, stuck.deliveryId))?.status).toBe('pending');
});

test('days 1: deliveries finished more than a day ago are removed, newer ones and queued ones are kept', async () => {
  const endpoint = await endpointWith({ days: 1 });
  const stuck = await post(endpoint.type, { stuck: true });
  await waitForPending(stuck.deliveryId);
  const older = await stream(endpoint.type, 5);
  const split = Date.now() + 1;
  await waitUntil('the clock past the split', () => Date.now() > split);
  const newer = await stream(endpoint.type, 5);
  const logger = pino({ level: 'silent' });

  // With today's clock nothing is old enough.
  expect((await createJanitor({ store: postern.store, clock: { now: () => Date.now() }, logger }).runOnce()).removed).toBe(0);
  expect(await logIds(endpoint.id)).toHaveLength(11);

  // A day after the split, only the deliveries that finished before it have expired. A bounded
  // step looks past the older queued delivery instead of stalling on it.
  const dayLater = createJanitor({ store: postern.store, clock: { now: () => split + DAY_MS }, logger });
  expect((await dayLater.runOnce({ perEndpointLimit: 2 })).removed).toBe(2);
  expect((await dayLater.runOnce()).removed).toBe(3);
  expect(await logIds(endpoint.id)).toEqual([...newer.map((p) => p.deliveryId)].reverse().concat(stuck.deliveryId));
  for (const { eventId } of older) expect((await postern.api('GET', `/v1/events/${eventId}`, { key: apiKey })).status).toBe(404);

  // Two days on, everything finished has expired; the queued delivery is still there.
  const twoDaysLater = createJanitor({ store: postern.store, clock: { now: () => Date.now() + 2 * DAY_MS }, logger });
  expect((await twoDaysLater.runOnce()).removed).toBe(5);
  expect(await logIds(endpoint.id)).toEqual([stuck.deliveryId]);
  expect((await postern.store.deliveries.get(orgId, stuck.deliveryId))?.status).toBe('pending');
});

test("a deleted endpoint's finished deliveries expire after 30 days, then the endpoint is forgotten", async () => {
  const created = await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: ['retention.deleted'], policy: { ...fastPolicy(3, LONG_MS, ROOMY), retention: { days: 3650 } } });
  const endpoint = { id: created.id as string };
  const posted = await stream('retention.deleted', 3);
  expect((await postern.api('DELETE', `/v1/endpoints/${endpoint.id}`, { key: apiKey })).status).toBe(204);
  const logger = pino({ level: 'silent' });

  // Within 30 days the log of the deleted endpoint is still readable.
  await createJanitor({ store: postern.store, clock: { now: () => Date.now() + 29 * DAY_MS }, logger }).runOnce();
  for (const { deliveryId } of posted) expect((await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey })).status).toBe(200);
  expect(await postern.store.endpoints.listDeletedIds(orgId, { limit: 100 })).toContain(endpoint.id);

  // Past 30 days its deliveries and events are gone and nothing of it is left to sweep.
  await createJanitor({ store: postern.store, clock: { now: () => Date.now() + 31 * DAY_MS }, logger }).runOnce();
  for (const { deliveryId, eventId } of posted) {
    expect((await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey })).status).toBe(404);
    expect((await postern.api('GET', `/v1/events/${eventId}`, { key: apiKey })).status).toBe(404);
  }
  expect(await postern.store.endpoints.listDeletedIds(orgId, { limit: 100 })).not.toContain(endpoint.id);
  expect(await postern.redis.exists(postern.store.keys.endpointDeliveries(orgId, endpoint.id))).toBe(0);
});

test('days 1: a finished delivery, its attempts and (with its last delivery) its event expire natively, without a sweep; a queued one has no expiry', async () => {
  // A sender whose clock runs a day minus two seconds behind: what it finishes now "finished a day
  // ago" and is due to expire in two seconds, by Redis's own expiry.
  const lagged = await startPostern({ senderClock: { now: () => Date.now() - DAY_MS + 2_000 } });
  try {
    const { apiKey: key, id: org } = await lagged.createOrg();
    await lagged.createEndpoint(key, { url: receiver.url, eventTypes: ['retention.native'], policy: { ...fastPolicy(3, LONG_MS, ROOMY), retention: { days: 1 } } });
    const posted: { id: string; deliveries: { id: string }[] }[] = [];
    for (let n = 0; n < 3; n++) posted.push((await lagged.api('POST', '/v1/events', { key, body: { type: 'retention.native', data: { n } } })).body);
    // Answered 500: with this clock its retries run at once; while queued it has no expiry.
    const stuck = (await lagged.api('POST', '/v1/events', { key, body: { type: 'retention.native', data: { stuck: true } } })).body;
    expect(await lagged.redis.pttl(lagged.store.keys.delivery(org, stuck.deliveries[0].id))).toBe(-1);
    const ids = posted.map((e) => e.deliveries[0]!.id as string);
    await waitUntil('3 deliveries succeeded', async () => ((await lagged.store.deliveries.getMany(org, ids)).every((d) => d.status === 'succeeded') ? true : undefined));
    const ttl = await lagged.redis.pttl(lagged.store.keys.delivery(org, ids[0]!));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(2_000);
    // No janitor runs in this Postern: Redis removes them by itself.
    await waitUntil('the finished records expired', async () => {
      const left = await Promise.all(
        posted.flatMap((e) => [lagged.store.keys.delivery(org, e.deliveries[0]!.id), lagged.store.keys.deliveryAttempts(org, e.deliveries[0]!.id), lagged.store.keys.event(org, e.id)]).map((k) => lagged.redis.exists(k)),
      );
      return left.every((n) => n === 0) ? true : undefined;
    }, 10_000);
    expect((await lagged.api('GET', `/v1/deliveries/${ids[0]}`, { key })).status).toBe(404);
  } finally {
    await lagged.close();
  }
});

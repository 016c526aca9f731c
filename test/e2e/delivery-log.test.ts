import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * The delivery log as an operator reads it: per endpoint newest first, filtered by status, paged
 * by cursor; one event with its data and deliveries; one delivery with its attempts.
 */

let postern: TestPostern;
let receiver: TestReceiver;
let key: string;
let endpointId: string;
/** Delivery ids of the 7 logged events, in the order they were posted. */
const postedDeliveryIds: string[] = [];
/** Indexes (into the 7) of the events the receiver refuses: their single attempt fails. */
const FAILING = new Set([1, 4]);

interface DeliveryRow {
  id: string;
  eventId: string;
  status: string;
  attemptCount: number;
}

beforeAll(async () => {
  postern = await startPostern();
  // Events whose data says `fail` are refused; the rest are taken.
  receiver = await startReceiver((req) => ((JSON.parse(req.body) as { data: { fail?: boolean } }).data.fail ? 500 : 200));
  key = (await postern.createOrg('log')).apiKey;
  endpointId = (await postern.createEndpoint(key, { url: receiver.url, policy: fastPolicy(1) })).id;
  for (let i = 0; i < 7; i++) {
    const posted = await postern.api('POST', '/v1/events', { key, body: { type: 'log.entry', data: { i, fail: FAILING.has(i) } } });
    expect(posted.status).toBe(202);
    postedDeliveryIds.push(posted.body.deliveries[0].id);
  }
  await waitUntil('all 7 deliveries finished', async () => {
    const r = await postern.api('GET', `/v1/endpoints/${endpointId}/deliveries?limit=100`, { key });
    const rows = r.body.data as DeliveryRow[];
    return rows.length === 7 && rows.every((d) => d.status === 'succeeded' || d.status === 'failed');
  });
});
afterAll(async () => {
  await postern.close();
  await receiver.close();
});

const list = async (query: string) => {
  const r = await postern.api('GET', `/v1/endpoints/${endpointId}/deliveries?${query}`, { key });
  expect(r.status).toBe(200);
  return r.body as { data: DeliveryRow[]; nextCursor: string | null };
};

/** Follows nextCursor from the first page to the end; returns the pages' ids. */
async function allPages(query: string): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | null = null;
  do {
    const page = await list(cursor ? `${query}&cursor=${cursor}` : query);
    pages.push(page.data.map((d) => d.id));
    cursor = page.nextCursor;
    if (pages.length > 10) throw new Error('paging does not end');
  } while (cursor);
  return pages;
}

const newestFirst = () => [...postedDeliveryIds].reverse();

test('the log lists every delivery of the endpoint, newest first, with its outcome', async () => {
  const page = await list('');
  expect(page.data.map((d) => d.id)).toEqual(newestFirst());
  expect(page.nextCursor).toBeNull();
  expect(page.data.map((d) => d.status)).toEqual(newestFirst().map((id) => (FAILING.has(postedDeliveryIds.indexOf(id)) ? 'failed' : 'succeeded')));
  expect(page.data.every((d) => d.attemptCount === 1)).toBe(true);
  expect(receiver.requests).toHaveLength(7);
});

test('?status= filters the log and keeps newest first', async () => {
  const failed = postedDeliveryIds.filter((_, i) => FAILING.has(i)).reverse();
  const succeeded = postedDeliveryIds.filter((_, i) => !FAILING.has(i)).reverse();
  expect((await list('status=failed')).data.map((d) => d.id)).toEqual(failed);
  expect((await list('status=succeeded')).data.map((d) => d.id)).toEqual(succeeded);
  expect((await list('status=pending')).data).toEqual([]);
  expect((await list('status=in_flight')).data).toEqual([]);
  const failedRows = (await list('status=failed')).data;
  expect(failedRows.every((d) => d.status === 'failed')).toBe(true);
});

test('cursor paging over 7 deliveries with limit=3: 3, 3, 1, in order, no repeats, null cursor at the end', async () => {
  const pages = await allPages('limit=3');
  expect(pages.map((p) => p.length)).toEqual([3, 3, 1]);
  const ids = pages.flat();
  expect(new Set(ids).size).toBe(7);
  expect(ids).toEqual(newestFirst());
  expect(ids).toEqual([...ids].sort().reverse());

  const last = await list(`limit=3&cursor=${pages[1]![2]}`);
  expect(last.nextCursor).toBeNull();
  // A page that ends exactly at the last delivery also says there is no more.
  const exact = await list(`limit=1&cursor=${pages[1]![2]}`);
  expect(exact.data.map((d) => d.id)).toEqual(pages[2]);
  expect(exact.nextCursor).toBeNull();
});

test('paging with a status filter: 5 succeeded deliveries with limit=2', async () => {
  const pages = await allPages('status=succeeded&limit=2');
  expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
  expect(pages.flat()).toEqual(postedDeliveryIds.filter((_, i) => !FAILING.has(i)).reverse());
});

test('a delivery posted while paging appears on a fresh first page, not in the middle of the old walk', async () => {
  const first = await list('limit=3');
  const posted = await postern.api('POST', '/v1/events', { key, body: { type: 'log.entry', data: { i: 7 } } });
  expect(posted.status).toBe(202);
  const second = await list(`limit=3&cursor=${first.nextCursor}`);
  expect(second.data.map((d) => d.id)).toEqual(newestFirst().slice(3, 6));
  expect((await list('limit=1')).data.map((d) => d.id)).toEqual([posted.body.deliveries[0].id]);
  await waitUntil('the extra delivery finished', async () => (await list('limit=1')).data[0]?.status === 'succeeded');
});

test('GET /v1/events/:id returns the data as posted and the delivery ids', async () => {
  const endpoint2 = await postern.createEndpoint(key, { url: receiver.url, eventTypes: ['rich.event'], policy: fastPolicy(1) });
  const rawData = '{"text":"caf\\u00e9 ✓ \\"quoted\\"","nested":{"list":[1,2.5,-3e2,true,null],"empty":{}},"big":12345678901234567890}';
  const posted = await postern.api('POST', '/v1/events', {
    key,
    rawBody: `{"type":"rich.event","data":${rawData},"idempotencyKey":"rich-1"}`,
    headers: { 'content-type': 'application/json' },
  });
  expect(posted.status).toBe(202);
  const deliveryIds = posted.body.deliveries.map((d: { id: string }) => d.id);
  expect(posted.body.deliveries.map((d: { endpointId: string }) => d.endpointId).sort()).toEqual([endpointId, endpoint2.id].sort());

  const event = await postern.api('GET', `/v1/events/${posted.body.id}`, { key });
  expect(event.status).toBe(200);
  expect(event.body).toEqual({
    id: posted.body.id,
    type: 'rich.event',
    timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
    data: JSON.parse(rawData),
    createdAt: expect.any(String),
    idempotencyKey: 'rich-1',
    envelope: receiver.requests.find((r) => r.headers['webhook-id'] === posted.body.id)?.body ?? expect.any(String),
    dataErased: false,
    dataErasedAt: null,
    deliveryIds,
    deliveries: expect.any(Array),
  });
  expect(event.body.deliveries.map((d: { id: string; eventId: string }) => [d.id, d.eventId])).toEqual(deliveryIds.map((id: string) => [id, posted.body.id]));
  expect(event.body.envelope).toContain(`"data":${rawData}`);
  expect(event.body.data.text).toBe('café ✓ "quoted"');

  // What the endpoints received carries the same data, byte for byte.
  await waitUntil('both rich.event requests', () => receiver.requests.filter((r) => r.headers['webhook-id'] === posted.body.id).length === 2);
  for (const r of receiver.requests.filter((q) => q.headers['webhook-id'] === posted.body.id)) {
    expect(r.body).toContain(`"data":${rawData}`);
    expect(JSON.parse(r.body).timestamp).toBe(event.body.timestamp);
  }
});

test('GET /v1/deliveries/:id shows every attempt: number, startedAt, durationMs, responseStatus, error', async () => {
  // Attempt 1 gets a 502, attempt 2 a connection reset (no status, an error code), attempt 3 a 204.
  // Attempt 1's connection is not kept alive: a reset on a reused connection before any answer
  // looks like a receiver closing an idle connection, and is sent again within the same attempt.
  const flaky = await startReceiver((_req, n, res) => {
    if (n === 1) {
      res.setHeader('connection', 'close');
      return 502;
    }
    if (n === 2) {
      res.socket?.destroy();
      return 'handled';
    }
    return 204;
  });
  try {
    const endpoint = await postern.createEndpoint(key, { url: flaky.url, eventTypes: ['flaky.event'], policy: fastPolicy(4, 20) });
    const posted = await postern.api('POST', '/v1/events', { key, body: { type: 'flaky.event', data: { n: 1 } } });
    expect(posted.status).toBe(202);
    const deliveryId = posted.body.deliveries.find((d: { endpointId: string }) => d.endpointId === endpoint.id).id as string;
    const before = Date.now();

    const delivery = await waitUntil('flaky delivery succeeded', async () => {
      const r = await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key });
      return r.body.status === 'succeeded' ? r.body : undefined;
    });
    expect(delivery).toMatchObject({
      id: deliveryId,
      eventId: posted.body.id,
      eventType: 'flaky.event',
      endpointId: endpoint.id,
      status: 'succeeded',
      attemptCount: 3,
      lastResponseStatus: 204,
      lastError: null,
      nextAttemptAt: null,
      redeliveredFromId: null,
      cancelReason: null,
    });
    expect(typeof delivery.deliveredAt).toBe('string');
    expect(delivery.lastDurationMs).toEqual(expect.any(Number));

    const attempts = delivery.attempts as { number: number; startedAt: string; durationMs: number; responseStatus: number | null; error: string | null }[];
    expect(attempts.map((a) => Object.keys(a).sort())).toEqual(Array(3).fill(['durationMs', 'error', 'number', 'requestHeaders', 'response', 'responseStatus', 'startedAt']));
    expect(attempts.map((a) => a.number)).toEqual([1, 2, 3]);
    expect(attempts.map((a) => a.responseStatus)).toEqual([502, null, 204]);
    expect(attempts[0]!.error).toBe('http_502');
    expect(attempts[1]!.error).toMatch(/^connection_failed:(ECONNRESET|EPIPE)$/);
    expect(attempts[2]!.error).toBeNull();
    const started = attempts.map((a) => Date.parse(a.startedAt));
    for (const [i, a] of attempts.entries()) {
      expect(new Date(a.startedAt).toISOString()).toBe(a.startedAt);
      expect(started[i]).toBeGreaterThanOrEqual(before - 1000);
      expect(started[i]).toBeLessThanOrEqual(Date.now());
      expect(Number.isInteger(a.durationMs) && a.durationMs >= 0).toBe(true);
    }
    // Each retry starts after the previous attempt ended and its wait (20 ms) passed.
    expect(started[1]!).toBeGreaterThanOrEqual(started[0]! + attempts[0]!.durationMs + 20);
    expect(started[2]!).toBeGreaterThanOrEqual(started[1]! + attempts[1]!.durationMs + 20);
    expect(flaky.requests.map((r) => r.headers['webhook-attempt'])).toEqual(['1', '2', '3']);
  } finally {
    await flaky.close();
  }
});

test('a failed delivery shows its one attempt and last error', async () => {
  const failedId = postedDeliveryIds[1]!;
  const r = await postern.api('GET', `/v1/deliveries/${failedId}`, { key });
  expect(r.status).toBe(200);
  expect(r.body).toMatchObject({ id: failedId, status: 'failed', attemptCount: 1, lastResponseStatus: 500, lastError: 'http_500', deliveredAt: null });
  expect(r.body.attempts).toEqual([{ number: 1, startedAt: expect.any(String), durationMs: expect.any(Number), responseStatus: 500, error: 'http_500', requestHeaders: expect.objectContaining({ 'webhook-attempt': '1' }), response: expect.objectContaining({ body: 'ok' }) }]);
});

import type { ServerResponse } from 'node:http';
import { fastPolicy, startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type ReceivedRequest, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Issue 14, the API behind the operator console: `GET /v1/events` (filters, paging, bad
 * parameters), every delivery of an event (redeliveries included), what each attempt keeps of its
 * request and response, `POST /v1/deliveries/:id/send-now` on every status, `GET /v1/stats`, and
 * health fields that count every failed attempt.
 */

let postern: TestPostern;
let key: string;
let readOnlyKey: string;
let otherKey: string;
let receiver: TestReceiver;
/** What the receiver answers next, by path. */
const answers = new Map<string, { status: number; body: string; headers?: Record<string, string> }>();

function answer(req: ReceivedRequest, _n: number, res: ServerResponse): 'handled' {
  const a = answers.get(req.path) ?? { status: 200, body: 'ok' };
  res.writeHead(a.status, { 'content-type': 'application/json', ...(a.headers ?? {}) });
  res.end(a.body);
  return 'handled';
}

beforeAll(async () => {
  postern = await startPostern();
  receiver = await startReceiver(answer);
  key = (await postern.createOrg('console')).apiKey;
  otherKey = (await postern.createOrg('other')).apiKey;
  readOnlyKey = (await postern.api('POST', '/v1/api-keys', { key, body: { name: 'ro', scopes: ['webhooks:read'] } })).body.apiKey;
});

afterAll(async () => {
  await postern?.close();
  await receiver?.close();
});

const base = () => receiver.url.replace(/\/hook$/, '');
const post = async (body: Record<string, unknown>, k = key) => {
  const r = await postern.api('POST', '/v1/events', { key: k, body });
  expect(r.status).toBe(202);
  return r.body as { id: string; deliveries: { id: string; endpointId: string }[] };
};
const delivery = async (id: string) => (await postern.api('GET', `/v1/deliveries/${id}`, { key })).body;
const waitStatus = (id: string, ok: (d: any) => boolean, what: string, ms = 10_000) =>
  waitUntil(what, async () => {
    const d = await delivery(id);
    return ok(d) ? d : undefined;
  }, ms);

describe('GET /v1/events', () => {
  let a: { id: string };
  let b: { id: string };
  const posted: string[] = [];
  let beforeAll_: number;
  let middle: number;

  beforeAll(async () => {
    a = await postern.createEndpoint(key, { url: `${base()}/a`, eventTypes: ['order.created'], policy: 'standard' });
    b = await postern.createEndpoint(key, { url: `${base()}/b`, eventTypes: ['invoice.paid'], policy: 'standard' });
    beforeAll_ = Date.now() - 1;
    for (let i = 0; i < 3; i++) posted.push((await post({ type: 'order.created', data: { i }, idempotencyKey: `order-${i}` })).id);
    await waitUntil('a new millisecond', () => Date.now() > beforeAll_ + 2 || undefined);
    middle = Date.now();
    await waitUntil('a new millisecond', () => Date.now() > middle || undefined);
    for (let i = 0; i < 2; i++) posted.push((await post({ type: 'invoice.paid', data: { i } })).id);
    // Another org's event never shows.
    await post({ type: 'order.created', data: {} }, otherKey);
  });

  test('newest first, paged with a cursor until null', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const r = await postern.api('GET', `/v1/events?limit=2${cursor ? `&cursor=${cursor}` : ''}`, { key });
      expect(r.status).toBe(200);
      expect(r.body.data.length).toBeLessThanOrEqual(2);
      seen.push(...r.body.data.map((e: { id: string }) => e.id));
      cursor = r.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...posted].reverse());
    const first = (await postern.api('GET', '/v1/events?limit=1', { key })).body.data[0];
    expect(first).toEqual({ id: posted[4], type: 'invoice.paid', createdAt: expect.any(String), idempotencyKey: null, deliveryCount: 1 });
  });

  test('filters: type, idempotencyKey, endpointId, since/until', async () => {
    const ids = async (q: string) => (await postern.api('GET', `/v1/events?${q}`, { key })).body.data.map((e: { id: string }) => e.id);
    expect(await ids('type=order.created')).toEqual(posted.slice(0, 3).reverse());
    expect(await ids('idempotencyKey=order-1')).toEqual([posted[1]]);
    expect(await ids('idempotencyKey=nope')).toEqual([]);
    expect(await ids(`endpointId=${a.id}`)).toEqual(posted.slice(0, 3).reverse());
    expect(await ids(`endpointId=${b.id}&type=invoice.paid`)).toEqual(posted.slice(3).reverse());
    const m = new Date(middle).toISOString();
    expect(await ids(`since=${m}`)).toEqual(posted.slice(3).reverse());
    expect(await ids(`until=${new Date(middle - 1).toISOString()}&since=${new Date(beforeAll_).toISOString()}`)).toEqual(posted.slice(0, 3).reverse());
  });

  test('an event that reached no endpoint is listed until it expires (30 days); its index entries go then', async () => {
    const lonely = await post({ type: 'nobody.listens', data: {} });
    expect(lonely.deliveries).toEqual([]);
    const list = async () => (await postern.api('GET', '/v1/events?type=nobody.listens', { key })).body.data.map((e: { id: string }) => e.id);
    expect(await list()).toEqual([lonely.id]);
    // As if it had been written 31 days ago: the next undelivered event of the org trims it.
    const orgId = (await postern.api('GET', '/v1/me', { key })).body.orgId as string;
    const { newId } = await import('@postern/shared');
    const old = { id: newId('evt', Date.now() - 31 * 86_400_000), orgId, type: 'nobody.listens', envelope: '{}', createdAt: Date.now() - 31 * 86_400_000, idempotencyKey: null, deliveryIds: [] };
    await postern.store.events.createWithDeliveries({ event: old, deliveries: [], idempotencyKeyHash: null, answer: '{}' });
    const k = postern.store.keys;
    expect(await postern.redis.zscore(k.orgEvents(orgId), old.id)).toBe('0');
    const next = await post({ type: 'nobody.listens', data: { n: 2 } });
    expect(await postern.redis.zscore(k.orgEvents(orgId), old.id)).toBeNull();
    expect(await postern.redis.zscore(k.orgUndeliveredEvents(orgId), old.id)).toBeNull();
    expect(await list()).toEqual([next.id, lonely.id]);
  });

  test('bad parameters are 400 naming the field; another org’s endpoint is 404', async () => {
    for (const q of ['limit=0', 'limit=abc', 'since=yesterday', 'until=2026-13-01', 'cursor=%20', 'endpointId=xyz', 'colour=blue', `since=${new Date().toISOString()}&until=2020-01-01T00:00:00Z`]) {
      const r = await postern.api('GET', `/v1/events?${q}`, { key });
      expect({ q, status: r.status, code: r.body.error?.code }).toEqual({ q, status: 400, code: 'invalid_request' });
    }
    const foreign = await postern.createEndpoint(otherKey, { url: `${base()}/x`, policy: 'standard' });
    expect((await postern.api('GET', `/v1/events?endpointId=${foreign.id}`, { key })).status).toBe(404);
  });
});

test('GET /v1/events/:id lists every delivery of the event, redeliveries included, and the exact envelope', async () => {
  const ep = await postern.createEndpoint(key, { url: `${base()}/redeliver`, eventTypes: ['thing.redelivered'], policy: fastPolicy(1) });
  answers.set('/redeliver', { status: 500, body: 'no' });
  const raw = await postern.api('POST', '/v1/events', { key, rawBody: '{"type":"thing.redelivered","data":{"big":12345678901234567890}}', headers: { 'content-type': 'application/json' } });
  const ev = raw.body as { id: string; deliveries: { id: string }[] };
  const original = ev.deliveries[0]!.id;
  await waitStatus(original, (d) => d.status === 'failed', 'the original failed');
  const again1 = (await postern.api('POST', `/v1/deliveries/${original}/redeliver`, { key })).body.delivery.id;
  await waitStatus(again1, (d) => d.status === 'failed', 'the first redelivery failed');
  const again2 = (await postern.api('POST', `/v1/deliveries/${again1}/redeliver`, { key })).body.delivery.id;
  const r = await postern.api('GET', `/v1/events/${ev.id}`, { key });
  expect(r.body.deliveryIds).toEqual([original, again1, again2]);
  expect(r.body.deliveries.map((d: any) => [d.id, d.endpointId, d.redeliveredFromId])).toEqual([
    [original, ep.id, null],
    [again1, ep.id, original],
    [again2, ep.id, again1],
  ]);
  expect(r.body.envelope).toBe(receiver.requests.find((q) => q.path === '/redeliver')!.body);
  expect(r.body.envelope).toContain('12345678901234567890');
});

describe('what an attempt keeps of its request and response', () => {
  test('a failed attempt: headers sent, status, bounded response headers and the body excerpt', async () => {
    await postern.createEndpoint(key, { url: `${base()}/fail500`, eventTypes: ['detail.fail'], policy: fastPolicy(1) });
    answers.set('/fail500', { status: 500, body: '{"error":"db down"}', headers: { 'x-trace': 'abc123' } });
    const ev = await post({ type: 'detail.fail', data: {} });
    const d = await waitStatus(ev.deliveries[0]!.id, (x) => x.status === 'failed', 'the delivery failed');
    expect(d.attemptCount).toBe(1);
    const [attempt] = d.attempts;
    expect(attempt).toMatchObject({ number: 1, responseStatus: 500, error: 'http_500' });
    expect(attempt.response).toEqual({ headers: expect.objectContaining({ 'x-trace': 'abc123', 'content-type': 'application/json' }), headersTruncated: false, body: '{"error":"db down"}', bodyTruncated: false });
    const sent = receiver.requests.find((q) => q.path === '/fail500')!;
    expect(attempt.requestHeaders).toEqual({
      'content-type': 'application/json',
      'user-agent': sent.headers['user-agent'],
      'webhook-id': ev.id,
      'webhook-timestamp': sent.headers['webhook-timestamp'],
      'webhook-signature': sent.headers['webhook-signature'],
      'webhook-attempt': '1',
      'webhook-delivery-id': d.id,
      'webhook-request-id': `${d.id}.1`,
    });
  });

  test('success keeps no excerpt by default; keepResponseBody "all" keeps it; the excerpt stops at maxResponseBytesRead', async () => {
    await postern.createEndpoint(key, { url: `${base()}/ok-default`, eventTypes: ['detail.ok'], policy: fastPolicy(1) });
    await postern.createEndpoint(key, { url: `${base()}/ok-all`, eventTypes: ['detail.ok'], policy: fastPolicy(1, 20, { keepResponseBody: 'all', maxResponseBytesRead: 8 }) });
    answers.set('/ok-default', { status: 200, body: 'thanks!' });
    answers.set('/ok-all', { status: 200, body: 'received, thank you' });
    const ev = await post({ type: 'detail.ok', data: {} });
    const ds = await Promise.all(ev.deliveries.map((x) => waitStatus(x.id, (y) => y.status === 'succeeded', 'success')));
    const byUrl = new Map(ds.map((x) => [x.endpointId, x]));
    const endpoints = (await postern.api('GET', '/v1/endpoints?limit=100', { key })).body.data as { id: string; url: string }[];
    const of = (suffix: string) => byUrl.get(endpoints.find((e) => e.url.endsWith(suffix))!.id)!;
    expect(of('/ok-default').attempts[0].response).toBeNull();
    expect(of('/ok-default').attempts[0].requestHeaders['webhook-attempt']).toBe('1');
    expect(of('/ok-all').attempts[0].response).toMatchObject({ body: 'received', bodyTruncated: true });
  });

  test('under response-headers timing (kestrel) a failed answer’s body is read before the attempt ends', async () => {
    await postern.createEndpoint(key, { url: `${base()}/kestrel`, eventTypes: ['detail.kestrel'], policy: { preset: 'kestrel', maxAttempts: 1 } });
    answers.set('/kestrel', { status: 422, body: '{"error":"missing field amount"}' });
    const ev = await post({ type: 'detail.kestrel', data: {} });
    const d = await waitStatus(ev.deliveries[0]!.id, (x) => x.status === 'failed', 'the delivery failed');
    expect(d.attempts[0]).toMatchObject({ responseStatus: 422, error: 'http_422', response: { body: '{"error":"missing field amount"}', bodyTruncated: false } });
  });

  test('tourical (status only) keeps no excerpt even of a failure; a bad keepResponseBody is refused', async () => {
    const ep = await postern.createEndpoint(key, { url: `${base()}/tourical`, eventTypes: ['detail.tourical'], policy: 'tourical' });
    expect(ep.policy.keepResponseBody).toBe('none');
    answers.set('/tourical', { status: 500, body: 'secret stack trace' });
    const ev = await post({ type: 'detail.tourical', data: {} });
    const d = await waitStatus(ev.deliveries[0]!.id, (x) => x.attemptCount >= 1 && x.status !== 'in_flight', 'the first attempt');
    expect(d.attempts[0]).toMatchObject({ responseStatus: 500, response: null });
    const bad = await postern.api('POST', '/v1/endpoints', { key, body: { url: `${base()}/x`, policy: { preset: 'standard', keepResponseBody: 'some' } } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('keepResponseBody');
    // Health tells the truth: tourical's breaker counts only 4xx, the failure is shown anyway.
    const health = (await postern.api('GET', `/v1/endpoints/${ep.id}`, { key })).body;
    expect(health).toMatchObject({ consecutiveFailures: 0, failedAttempts: 1, consecutiveFailedAttempts: 1 });
    expect(health.lastFailureAt).not.toBeNull();
  });
});

describe('POST /v1/deliveries/:id/send-now', () => {
  const sendNow = (id: string, k = key) => postern.api('POST', `/v1/deliveries/${id}/send-now`, { key: k });

  test('a delivery waiting for its retry gets it now; the schedule after it is kept', async () => {
    await postern.createEndpoint(key, { url: `${base()}/later`, eventTypes: ['send.now'], policy: fastPolicy(3, 600_000) });
    answers.set('/later', { status: 503, body: 'busy' });
    const ev = await post({ type: 'send.now', data: {} });
    const id = ev.deliveries[0]!.id;
    const waiting = await waitStatus(id, (d) => d.status === 'pending' && d.attemptCount === 1, 'the first attempt failed');
    expect(waiting.waitingForNextAttempt).toBe(true);
    expect(Date.parse(waiting.nextAttemptAt) - Date.now()).toBeGreaterThan(500_000);

    const r = await sendNow(id);
    expect(r.status).toBe(202);
    expect(r.body.delivery.id).toBe(id);
    const after = await waitStatus(id, (d) => d.attemptCount === 2 && d.status === 'pending', 'the second attempt, now');
    // Attempt 3 is the policy's wait after attempt 2, counted from it.
    const gap = Date.parse(after.nextAttemptAt) - Date.parse(after.attempts[1].startedAt);
    expect(gap).toBeGreaterThan(590_000);
    expect(gap).toBeLessThan(610_000);

    answers.set('/later', { status: 200, body: 'ok' });
    expect((await sendNow(id)).status).toBe(202);
    const done = await waitStatus(id, (d) => d.status === 'succeeded', 'the third attempt succeeded');
    expect(done.attemptCount).toBe(3);
    expect((await sendNow(id)).body.error.code).toBe('delivery_finished');
  });

  test('409 where it makes no sense: finished, failed, held, in flight, first attempt queued; 404 and 403', async () => {
    // failed
    await postern.createEndpoint(key, { url: `${base()}/dead`, eventTypes: ['send.dead'], policy: fastPolicy(1) });
    answers.set('/dead', { status: 500, body: 'no' });
    const dead = (await post({ type: 'send.dead', data: {} })).deliveries[0]!.id;
    await waitStatus(dead, (d) => d.status === 'failed', 'failed');
    expect((await sendNow(dead)).body.error).toEqual({ code: 'delivery_finished', message: expect.stringContaining('failed') });

    // held (a paused endpoint under standard)
    const paused = await postern.createEndpoint(key, { url: `${base()}/held`, eventTypes: ['send.held'], policy: 'standard' });
    await postern.api('POST', `/v1/endpoints/${paused.id}/pause`, { key });
    const held = (await post({ type: 'send.held', data: {} })).deliveries[0]!.id;
    await waitStatus(held, (d) => d.held === true, 'held');
    const h = await sendNow(held);
    expect([h.status, h.body.error.code]).toEqual([409, 'delivery_held']);

    // in flight: the receiver does not answer until told
    let release: (() => void) | undefined;
    const slow = await startReceiver((_q, _n, res) => {
      release = () => res.end('ok');
      return 'handled';
    });
    try {
      await postern.createEndpoint(key, { url: slow.url, eventTypes: ['send.slow'], policy: fastPolicy(1) });
      const inFlight = (await post({ type: 'send.slow', data: {} })).deliveries[0]!.id;
      await slow.waitForRequests(1);
      const f = await sendNow(inFlight);
      expect([f.status, f.body.error.code]).toEqual([409, 'in_flight']);
      release!();
      await waitStatus(inFlight, (d) => d.status === 'succeeded', 'the slow one succeeded');
    } finally {
      await slow.close();
    }

    // first attempt still queued (no sender running)
    await postern.stopSender();
    try {
      const queued = (await post({ type: 'send.now', data: {} })).deliveries[0]!.id;
      const q = await sendNow(queued);
      expect([q.status, q.body.error.code]).toEqual([409, 'not_waiting']);
      expect((await delivery(queued)).waitingForNextAttempt).toBe(false);
    } finally {
      await postern.startSender();
    }

    expect((await sendNow('dlv_00000000000000000000000000')).status).toBe(404);
    expect((await sendNow(dead, readOnlyKey)).status).toBe(403);
    expect((await sendNow(dead, otherKey)).status).toBe(404);
  }, 30_000);
});

test('GET /v1/stats counts attempts as they finish, per endpoint and per org', async () => {
  const ep = await postern.createEndpoint(key, { url: `${base()}/stats`, eventTypes: ['stats.fail', 'stats.ok'], policy: fastPolicy(2) });
  answers.set('/stats', { status: 502, body: 'bad gateway' });
  const failing = (await post({ type: 'stats.fail', data: {} })).deliveries[0]!.id;
  await waitStatus(failing, (d) => d.status === 'failed', 'failed twice');
  answers.set('/stats', { status: 200, body: 'ok' });
  const ok = (await post({ type: 'stats.ok', data: {} })).deliveries[0]!.id;
  await waitStatus(ok, (d) => d.status === 'succeeded', 'succeeded');

  // The sender writes the counters about once a second: they may trail the log by that much.
  const hour = await waitUntil('the endpoint counters to show 3 attempts', async () => {
    const body = (await postern.api('GET', `/v1/stats?endpointId=${ep.id}`, { key })).body;
    return body.totals.attempts >= 3 ? body : undefined;
  }, 5_000);
  expect(hour).toMatchObject({ scope: { endpointId: ep.id }, window: 'hour', bucketMs: 60_000, totals: { attempts: 3, succeeded: 1, failed: 2, successRate: 1 / 3 }, errors: [{ code: 'http_502', count: 2 }] });
  expect(hour.buckets).toHaveLength(60);
  expect(hour.buckets.reduce((n: number, b: { attempts: number }) => n + b.attempts, 0)).toBe(3);
  const day = (await postern.api('GET', `/v1/stats?endpointId=${ep.id}&window=day`, { key })).body;
  expect(day.buckets).toHaveLength(24);
  expect(day.totals).toEqual(hour.totals);

  const org = await waitUntil('the org counters to show the endpoint\'s failures', async () => {
    const body = (await postern.api('GET', '/v1/stats', { key })).body;
    return body.errors.some((e: { code: string; count: number }) => e.code === 'http_502' && e.count === 2) ? body : undefined;
  }, 5_000);
  expect(org.totals.attempts).toBeGreaterThan(3);
  expect(org.errors).toEqual(expect.arrayContaining([{ code: 'http_502', count: 2 }]));
  expect((await postern.api('GET', '/v1/stats', { key: otherKey })).body.totals.attempts).toBe(0);

  expect((await postern.api('GET', '/v1/stats?window=week', { key })).status).toBe(400);
  expect((await postern.api('GET', '/v1/stats?endpointId=ep_nope', { key })).status).toBe(404);
});

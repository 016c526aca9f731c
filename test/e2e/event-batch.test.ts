import { Webhook } from 'standardwebhooks';
import { fastPolicy, startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * `POST /v1/events/batch`: up to 100 events in one request, each answered in request order exactly
 * as `POST /v1/events` would answer it alone; accepted ones reach the receiver like any event.
 */

const MAX_BODY_BYTES = 64 * 1024;

let postern: TestPostern;
let receiver: TestReceiver;
let key: string;
let endpoint: { id: string; secret: string };

beforeAll(async () => {
  postern = await startPostern({ maxBodyBytes: MAX_BODY_BYTES });
  receiver = await startReceiver();
  key = (await postern.createOrg('batch-producer')).apiKey;
  endpoint = await postern.createEndpoint(key, { url: receiver.url, policy: fastPolicy(3, 20) });
});
afterAll(async () => {
  await postern.close();
  await receiver.close();
});

const postBatch = (events: unknown, opts: { apiKey?: string; headers?: Record<string, string> } = {}) => postern.api('POST', '/v1/events/batch', { key: opts.apiKey ?? key, body: { events }, headers: opts.headers });
const postOne = (body: unknown, apiKey = key) => postern.api('POST', '/v1/events', { key: apiKey, body });
/** The single route's message as a batch says it for event `i`: its leading field under `events[i]`. */
const asBatchItem = (i: number, message: string) => message.replace(/^body: /, `events[${i}]: `).replace(/^(?!events\[)([A-Za-z][\w.-]*): /, `events[${i}].$1: `);
const webhookIds = () => receiver.requests.map((r) => r.headers['webhook-id']);
const arrived = (eventIds: string[], what = 'the accepted events at the receiver') => waitUntil(what, () => eventIds.every((id) => webhookIds().includes(id)), 20_000);

test('results come in request order; a bad event fails alone, answered as POST /v1/events answers it', async () => {
  const events = [
    { type: 'order.created', data: { n: 0 } },
    { type: 'Not A Type!', data: {} },
    { type: 'order.created' },
    'not an object',
    { type: 'webhook.test', data: {} },
    { type: 'order.created', data: { n: 5 }, colour: 'red' },
    { type: 'order.created', data: { n: 6 }, orderingKey: ' padded' },
    { type: 'order.created', data: { n: 7 } },
  ];
  const r = await postBatch(events);
  expect(r.status).toBe(207);
  expect(r.body.results).toHaveLength(events.length);
  expect(r.body.results.map((x: { status: number }) => x.status)).toEqual([202, 400, 400, 400, 400, 400, 400, 202]);
  // Each refusal is the single route's answer for that event, its field named under events[i].
  for (const i of [1, 2, 3, 4, 5, 6]) {
    const alone = await postOne(events[i]);
    expect({ status: alone.status, error: { ...alone.body.error, message: asBatchItem(i, alone.body.error.message) } }).toEqual(r.body.results[i]);
  }
  expect(r.body.results.slice(1, 7).map((x: { error: { message: string } }) => x.error.message.replace(/:.*/, ''))).toEqual(['events[1].type', 'events[2].data', 'events[3]', 'events[4].type', 'events[5]', 'events[6].orderingKey']);
  const [first, last] = [r.body.results[0], r.body.results[7]];
  expect(first).toEqual({ status: 202, id: expect.stringMatching(/^evt_/), deliveries: [{ id: expect.stringMatching(/^dlv_/), endpointId: endpoint.id }] });
  // Ids follow request order: the event list shows them in it.
  expect(first.id < last.id).toBe(true);
  await arrived([first.id, last.id]);
  const listed = await postern.api('GET', `/v1/events?limit=2`, { key });
  expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual([last.id, first.id]);
});

test('every accepted event reaches the receiver once, signed, with its data byte for byte', async () => {
  const data = ['{"amount":1.0,"big":12345678901234567890}', '{ "spaced" : [ 1 , 2 ] }', '"\\u00e9t\\u00e9"', 'null'];
  const raw = `{"events":[${data.map((d, i) => `{"type":"invoice.paid","data":${d},"idempotencyKey":"bytes-${i}"}`).join(',')}]}`;
  const r = await postern.api('POST', '/v1/events/batch', { key, rawBody: raw, headers: { 'content-type': 'application/json' } });
  expect(r.status).toBe(207);
  const ids = r.body.results.map((x: { status: number; id: string }) => {
    expect(x.status).toBe(202);
    return x.id;
  });
  await arrived(ids);
  const wh = new Webhook(endpoint.secret);
  ids.forEach((id: string, i: number) => {
    const requests = receiver.requests.filter((q) => q.headers['webhook-id'] === id);
    expect(requests).toHaveLength(1);
    const request = requests[0]!;
    expect(() => wh.verify(request.body, request.headers as Record<string, string>)).not.toThrow();
    expect(request.body.endsWith(`"data":${data[i]}}`)).toBe(true);
  });
  for (const x of r.body.results) {
    const delivery = await waitUntil('delivered', async () => {
      const d = await postern.api('GET', `/v1/deliveries/${x.deliveries[0].id}`, { key });
      return d.body.status === 'succeeded' ? d.body : undefined;
    });
    expect(delivery.attemptCount).toBe(1);
  }
});

test('idempotency keys: a repeat in the same batch, in a later batch or through POST /v1/events replays; another event under a used key is 409', async () => {
  const a = { type: 'invoice.paid', data: { invoice: 'a' }, idempotencyKey: 'batch-key-a' };
  const b = { type: 'invoice.paid', data: { invoice: 'b' }, idempotencyKey: 'batch-key-b' };
  const sentBefore = receiver.requests.length;
  const first = await postBatch([a, b, a, { ...a, data: { invoice: 'not a' } }]);
  expect(first.body.results.map((x: { status: number }) => x.status)).toEqual([202, 202, 202, 409]);
  const [ra, rb, again, reused] = first.body.results;
  expect(ra.idempotentReplayed).toBeUndefined();
  expect(again).toEqual({ ...ra, idempotentReplayed: true });
  expect(reused.error.code).toBe('idempotency_key_reused');
  expect(reused).toEqual({ status: 409, error: (await postOne({ ...a, data: { invoice: 'not a' } })).body.error });

  const second = await postBatch([b, a]);
  expect(second.body.results).toEqual([
    { ...rb, idempotentReplayed: true },
    { ...ra, idempotentReplayed: true },
  ]);
  const single = await postOne(b);
  expect(single.status).toBe(202);
  expect(single.headers.get('idempotent-replayed')).toBe('true');
  expect(single.body).toEqual({ id: rb.id, deliveries: rb.deliveries });

  // A key first used by POST /v1/events replays in a batch too.
  const c = { type: 'invoice.paid', data: { invoice: 'c' }, idempotencyKey: 'batch-key-c' };
  const alone = await postOne(c);
  const third = await postBatch([c]);
  expect(third.body.results).toEqual([{ status: 202, ...alone.body, idempotentReplayed: true }]);

  await arrived([ra.id, rb.id, alone.body.id]);
  // A later event, delivered after any duplicate would have been: each event arrived once.
  const marker = await postBatch([{ type: 'flush.marker', data: {} }]);
  await arrived([marker.body.results[0].id]);
  const ids = webhookIds().slice(sentBefore);
  for (const id of [ra.id, rb.id, alone.body.id]) expect(ids.filter((x) => x === id)).toHaveLength(1);
});

test('events with one ordering key keep their batch order at a per-key endpoint', async () => {
  const ordered = await startReceiver();
  try {
    const org = await postern.createOrg('batch-ordering');
    await postern.createEndpoint(org.apiKey, { url: ordered.url, policy: { ...fastPolicy(3, 20), ordering: 'per-key' } });
    const events = Array.from({ length: 10 }, (_, n) => ({ type: 'account.changed', data: { n }, orderingKey: n % 2 === 0 ? 'even' : 'odd' }));
    const r = await postBatch(events, { apiKey: org.apiKey });
    expect(r.body.results.every((x: { status: number }) => x.status === 202)).toBe(true);
    await ordered.waitForRequests(10, 20_000);
    const seen = ordered.requests.map((q) => JSON.parse(q.body).data.n as number);
    expect(seen.filter((n) => n % 2 === 0)).toEqual([0, 2, 4, 6, 8]);
    expect(seen.filter((n) => n % 2 === 1)).toEqual([1, 3, 5, 7, 9]);
  } finally {
    await ordered.close();
  }
});

test('the catalog checks each event of a batch as it checks one event: invalid data is 422 with details, warnings are kept', async () => {
  const org = await postern.createOrg('batch-catalog');
  const catalogReceiver = await startReceiver();
  try {
    await postern.createEndpoint(org.apiKey, { url: catalogReceiver.url, policy: fastPolicy(3, 20) });
    const schema = { type: 'object', required: ['amountCents'], properties: { amountCents: { type: 'integer' } } };
    expect((await postern.api('POST', '/v1/event-types', { key: org.apiKey, body: { name: 'invoice.paid', description: 'An invoice was paid.', schema } })).status).toBe(201);
    expect((await postern.api('PATCH', '/v1/org', { key: org.apiKey, body: { eventValidation: 'reject', requireKnownEventTypes: true } })).status).toBe(200);
    const events = [
      { type: 'invoice.paid', data: { amountCents: 100 } },
      { type: 'invoice.paid', data: { amountCents: 'ten' } },
      { type: 'unknown.type', data: {} },
      { type: 'invoice.paid', data: { amountCents: 7 } },
    ];
    const r = await postBatch(events, { apiKey: org.apiKey });
    expect(r.body.results.map((x: { status: number }) => x.status)).toEqual([202, 422, 422, 202]);
    for (const i of [1, 2]) {
      const alone = await postOne(events[i], org.apiKey);
      expect({ status: alone.status, error: { ...alone.body.error, message: asBatchItem(i, alone.body.error.message) } }).toEqual(r.body.results[i]);
    }
    expect(r.body.results[1].error.details).toEqual([expect.objectContaining({ path: '/amountCents' })]);

    expect((await postern.api('PATCH', '/v1/org', { key: org.apiKey, body: { eventValidation: 'warn', requireKnownEventTypes: false } })).status).toBe(200);
    const warned = await postBatch([events[1], events[0]], { apiKey: org.apiKey });
    expect(warned.body.results.map((x: { status: number }) => x.status)).toEqual([202, 202]);
    expect(warned.body.results[0].warnings).toEqual([expect.objectContaining({ path: '/amountCents' })]);
    expect(warned.body.results[1].warnings).toBeUndefined();
  } finally {
    await catalogReceiver.close();
  }
});

test('limits: 1 to 100 events, the body within MAX_BODY_BYTES; anything else refuses the whole request', async () => {
  const hundred = Array.from({ length: 100 }, (_, n) => ({ type: 'bulk.item', data: { n } }));
  const full = await postBatch(hundred);
  expect(full.status).toBe(207);
  expect(full.body.results).toHaveLength(100);
  expect(full.body.results.every((x: { status: number }) => x.status === 202)).toBe(true);
  await arrived(full.body.results.map((x: { id: string }) => x.id), '100 events at the receiver');

  const tooMany = await postBatch([...hundred, { type: 'bulk.item', data: { n: 100 } }]);
  expect(tooMany.status).toBe(400);
  expect(tooMany.body.error).toEqual({ code: 'invalid_request', message: 'events: at most 100 events in one batch; send the rest in another' });
  for (const body of [{ events: [] }, {}, { events: { type: 'x' } }]) {
    const r = await postern.api('POST', '/v1/events/batch', { key, body });
    expect(r.status).toBe(400);
    expect(r.body.error).toEqual({ code: 'invalid_request', message: 'events: must be an array of 1 to 100 events' });
  }
  const notObject = await postern.api('POST', '/v1/events/batch', { key, body: hundred });
  expect(notObject.body.error).toEqual({ code: 'invalid_request', message: 'body: must be a JSON object {events: [...]}' });
  const extra = await postern.api('POST', '/v1/events/batch', { key, body: { events: hundred.slice(0, 1), more: true } });
  expect(extra.body.error).toEqual({ code: 'invalid_request', message: 'body: unknown field "more"' });
  const headerKey = await postBatch(hundred.slice(0, 2), { headers: { 'idempotency-key': 'one-for-all' } });
  expect(headerKey.status).toBe(400);
  expect(headerKey.body.error.message).toMatch(/^Idempotency-Key: a batch takes no header key/);

  const big = await postBatch(Array.from({ length: 10 }, (_, n) => ({ type: 'bulk.item', data: { n, pad: 'x'.repeat(MAX_BODY_BYTES / 10) } })));
  expect(big.status).toBe(413);
  expect(big.body.error.code).toBe('payload_too_large');

  // None of the refused requests stored anything: the newest event is still the last of the hundred.
  const newest = await postern.api('GET', '/v1/events?limit=1', { key });
  expect(newest.body.data[0].id).toBe(full.body.results[99].id);
});

test('needs the events:write scope', async () => {
  const readOnly = await postern.api('POST', '/v1/api-keys', { key, body: { name: 'reader', scopes: ['webhooks:read'] } });
  const r = await postBatch([{ type: 'order.created', data: {} }], { apiKey: readOnly.body.apiKey });
  expect(r.status).toBe(403);
  expect(r.body.error.code).toBe('insufficient_scope');
});

test('Redis failing while the jobs are queued: every event is 503 and nothing of them stays; the retry with the same keys is accepted afresh', async () => {
  const events = [
    { type: 'invoice.paid', data: { n: 1 }, idempotencyKey: 'outage-1' },
    { type: 'invoice.paid', data: { n: 2 }, idempotencyKey: 'outage-2' },
    { type: 'invoice.paid', data: { n: 1 }, idempotencyKey: 'outage-1' },
    { type: 'invoice.paid', data: { n: 3 } },
  ];
  const newestBefore = (await postern.api('GET', '/v1/events?limit=1', { key })).body.data[0]?.id;
  const newestDeliveryBefore = (await postern.api('GET', `/v1/endpoints/${endpoint.id}/deliveries?limit=1`, { key })).body.data[0]?.id;
  // Ingest's queue has its own connection: losing it fails the jobs' round trip after the events were written.
  const queueConnection = postern.queues.connection!;
  queueConnection.disconnect();
  let refused;
  try {
    refused = await postBatch([...events, { type: 'webhook.test', data: {} }]);
  } finally {
    await queueConnection.connect();
  }
  expect(refused.status).toBe(207);
  expect(refused.body.results.map((x: { status: number }) => x.status)).toEqual([503, 503, 503, 503, 400]);
  expect(refused.body.results[0].error).toEqual({ code: 'service_unavailable', message: 'storage is unavailable; nothing was stored, retry later' });
  expect(refused.headers.get('retry-after')).toBe('5');
  // Removed again: no event, and the idempotency keys are free.
  expect((await postern.api('GET', '/v1/events?limit=1', { key })).body.data[0]?.id).toBe(newestBefore);
  expect((await postern.api('GET', '/v1/events?idempotencyKey=outage-1', { key })).body.data).toEqual([]);
  expect((await postern.api('GET', `/v1/endpoints/${endpoint.id}/deliveries?limit=1`, { key })).body.data[0]?.id).toBe(newestDeliveryBefore);

  const retried = await postBatch(events);
  expect(retried.body.results.map((x: { status: number; idempotentReplayed?: boolean }) => [x.status, x.idempotentReplayed])).toEqual([
    [202, undefined],
    [202, undefined],
    [202, true],
    [202, undefined],
  ]);
  const ids = retried.body.results.map((x: { id: string }) => x.id);
  expect(new Set(ids).size).toBe(3);
  await arrived(ids, 'the retried events at the receiver');
});

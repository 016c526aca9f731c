import { createPublicKey, verify as cryptoVerify } from 'node:crypto';
import { createSigningKeyCache, type SigningKeyCache } from '@postern/shared';
import type { AttemptIds, StatsFlusher, Store } from '@postern/store';
import { runAttempt, type DeliverDeps, type DeliveryTransport, type OutboundRequest, type TransportResult } from '@postern/sender';
import { startAttemptHarness, type AttemptHarness } from '../support/attempt-harness.js';
import type { TestPostern } from '../support/postern.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * One attempt as a pipeline (claim → decide → send → finish), driven directly with a transport
 * double against real Redis: what each stage records, and that the sender makes exactly two Redis
 * calls of its own around the request.
 */

let harness: AttemptHarness;
let postern: TestPostern;
let apiKey: string;
let orgId: string;
let store: Store;
/** The overview's counters of these attempts: written only when a test says (no timer). */
let stats: StatsFlusher;
/** Every Redis command the attempt's store sends, by name. */
let commands: string[] = [];

beforeAll(async () => {
  harness = await startAttemptHarness();
  ({ postern, apiKey, orgId, store, stats } = harness);
  const { redis } = harness;
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = ((command: { name: string }, ...rest: unknown[]) => {
    commands.push(command.name);
    return (send as (...args: unknown[]) => unknown)(command, ...rest);
  }) as typeof redis.sendCommand;
});
afterAll(() => harness.close());

/** A transport that answers `answer` and records each request with what the store held while it was in flight. */
function transport(answer: (req: OutboundRequest) => TransportResult | Promise<TransportResult>) {
  const sent: { request: OutboundRequest; deliveryStatus: string | null; attempts: string | null }[] = [];
  const t: DeliveryTransport = {
    async send(request) {
      const id = request.headers['webhook-delivery-id']!;
      const [deliveryStatus, attempts] = await postern.redis.hmget(postern.store.keys.delivery(orgId, id), 'status', 'attempts');
      sent.push({ request, deliveryStatus: deliveryStatus ?? null, attempts: attempts ?? null });
      return answer(request);
    },
    close() {},
  };
  return { t, sent };
}

const deps = (t: DeliveryTransport, woken: string[] = []): DeliverDeps => harness.deps(t, woken);

async function endpointWith(policy: unknown): Promise<string> {
  const ep = await postern.createEndpoint(apiKey, { url: 'http://127.0.0.1:9/hook', policy });
  return ep.id as string;
}

async function event(endpointId: string): Promise<AttemptIds> {
  const r = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'invoice.paid', data: { n: 1 } } });
  expect(r.status).toBe(202);
  const d = (r.body.deliveries as { id: string; endpointId: string }[]).find((x) => x.endpointId === endpointId)!;
  return { deliveryId: d.id, endpointId, eventId: r.body.id as string, orgId };
}

const delivery = async (id: string) => (await postern.api('GET', `/v1/deliveries/${id}`, { key: apiKey })).body;
const ok = (): TransportResult => ({ kind: 'response', status: 200, retryAfter: undefined, bodyBytesRead: 0 });

test('a successful attempt: recorded in flight before the request, two Redis calls of ours, slot given back', async () => {
  const endpointId = await endpointWith('standard');
  const ids = await event(endpointId);
  const { t, sent } = transport(ok);
  commands = [];
  expect(await runAttempt(deps(t), ids)).toEqual({ kind: 'done', status: 'succeeded' });
  expect(commands).toEqual(['evalsha', 'evalsha']);
  expect(sent).toHaveLength(1);
  expect(sent[0]).toMatchObject({ deliveryStatus: 'in_flight', attempts: '1' });
  expect(sent[0]!.request.headers).toMatchObject({ 'webhook-attempt': '1', 'webhook-id': ids.eventId, 'webhook-request-id': `${ids.deliveryId}.1` });
  const d = await delivery(ids.deliveryId);
  expect(d).toMatchObject({ status: 'succeeded', attempts: [{ number: 1, responseStatus: 200, error: null }] });
  expect(await store.leases.inFlight(orgId, endpointId, Date.now())).toBe(0);
  // A second run of the same job finds it finished and sends nothing.
  expect(await runAttempt(deps(t), ids)).toEqual({ kind: 'done', status: 'succeeded' });
  expect(sent).toHaveLength(1);
  // The overview's count is not one of the two calls: the sender writes it later (its stats
  // flusher), counted once although the job ran twice.
  commands = [];
  await stats.flush();
  expect(commands.filter((c) => c === 'hincrby')).toEqual(['hincrby', 'hincrby']);
  const hour = await store.stats.read(orgId, 'endpoint', endpointId, 'hour', Date.now());
  expect(hour.buckets.reduce((n, b) => n + b.succeeded + b.failed, 0)).toBe(1);
});

test('an ed25519 endpoint: each attempt is signed v1a with a key the sender parsed once, not per attempt', async () => {
  const endpoint = await postern.createEndpoint(apiKey, { url: 'http://127.0.0.1:9/hook', signatureScheme: 'ed25519' });
  const inner = createSigningKeyCache();
  let parsed = 0;
  const counting: SigningKeyCache = {
    get(secret) {
      const before = inner.size;
      const key = inner.get(secret);
      if (inner.size > before) parsed++;
      return key;
    },
    get size() {
      return inner.size;
    },
  };
  const { t, sent } = transport(ok);
  for (let i = 0; i < 3; i++) expect(await runAttempt({ ...deps(t), signingKeys: counting }, await event(endpoint.id))).toEqual({ kind: 'done', status: 'succeeded' });
  expect(parsed).toBe(1);
  expect(sent).toHaveLength(3);
  const x = Buffer.from((endpoint.publicKey as string).slice('whpk_'.length), 'base64').toString('base64url');
  const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x }, format: 'jwk' });
  for (const { request } of sent) {
    const signature = request.headers['webhook-signature']!;
    expect(signature).toMatch(/^v1a,/);
    const signed = Buffer.from(`${request.headers['webhook-id']}.${request.headers['webhook-timestamp']}.${request.body}`, 'utf8');
    expect(cryptoVerify(null, signed, publicKey, Buffer.from(signature.slice(4), 'base64'))).toBe(true);
  }
});

test('a failed attempt: the plan retries at the scheduled time, and the job is told exactly when', async () => {
  const endpointId = await endpointWith({ maxAttempts: 3, schedule: { kind: 'fixed', waitsMs: [60_000, 120_000] }, jitterRatio: 0 });
  const ids = await event(endpointId);
  const { t } = transport(() => ({ kind: 'response', status: 500, retryAfter: undefined, bodyBytesRead: 0 }));
  const before = Date.now();
  const run = await runAttempt(deps(t), ids);
  expect(run.kind).toBe('retry');
  const at = (run as { nextAttemptAt: number }).nextAttemptAt;
  expect(at).toBeGreaterThanOrEqual(before + 60_000);
  expect(at).toBeLessThanOrEqual(Date.now() + 60_000);
  const d = await delivery(ids.deliveryId);
  expect(d).toMatchObject({ status: 'pending', lastError: 'http_500', nextAttemptAt: new Date(at).toISOString() });
  expect((await postern.api('GET', `/v1/endpoints/${endpointId}`, { key: apiKey })).body.consecutiveFailures).toBe(1);
});

test('no slot: the delivery is parked without spending an attempt, and the release names it to wake', async () => {
  const endpointId = await endpointWith({ concurrency: { perEndpoint: 1, perOrg: 20 } });
  const first = await event(endpointId);
  const second = await event(endpointId);
  let answerFirst: ((r: TransportResult) => void) | undefined;
  const { t } = transport(() => new Promise<TransportResult>((resolve) => (answerFirst = resolve)));
  const woken: string[] = [];
  const running = runAttempt(deps(t, woken), first);
  await waitUntil('the first attempt in flight (its request reached the transport)', () => answerFirst !== undefined);
  expect(await runAttempt(deps(t, woken), second)).toEqual({ kind: 'parked', limit: 'endpoint', ahead: 0 });
  expect(await delivery(second.deliveryId)).toMatchObject({ status: 'pending', attempts: [] });
  answerFirst!(ok());
  expect(await running).toEqual({ kind: 'done', status: 'succeeded' });
  expect(woken).toEqual([second.deliveryId]);
});

test('in flight, a delivery stays in its pending index: lists of either status tell them apart, and the finish moves it on', async () => {
  const endpointId = await endpointWith('standard');
  const first = await event(endpointId);
  const queued = await event(endpointId);
  let answer: ((r: TransportResult) => void) | undefined;
  const { t } = transport(() => new Promise<TransportResult>((resolve) => (answer = resolve)));
  const running = runAttempt(deps(t), first);
  await waitUntil('the attempt in flight', () => answer !== undefined);
  const pendingIndex = store.keys.endpointDeliveriesByStatus(orgId, endpointId, 'pending');
  expect(await postern.redis.zrange(pendingIndex, 0, -1)).toEqual([first.deliveryId, queued.deliveryId]);
  const list = async (status: 'pending' | 'in_flight') => (await store.deliveries.listByEndpoint(orgId, endpointId, { status, limit: 10 })).items.map((d) => d.id);
  expect(await list('in_flight')).toEqual([first.deliveryId]);
  expect(await list('pending')).toEqual([queued.deliveryId]);
  const exported: string[] = [];
  for await (const page of store.deliveries.pagesOfLog(orgId, [endpointId], { status: 'in_flight', pageSize: 1 })) exported.push(...page.map((x) => x.delivery.id));
  expect(exported).toEqual([first.deliveryId]);
  answer!(ok());
  expect(await running).toEqual({ kind: 'done', status: 'succeeded' });
  expect(await postern.redis.zrange(pendingIndex, 0, -1)).toEqual([queued.deliveryId]);
  expect(await list('in_flight')).toEqual([]);
  expect((await store.deliveries.listByEndpoint(orgId, endpointId, { status: 'succeeded', limit: 10 })).items.map((d) => d.id)).toEqual([first.deliveryId]);
});

test('a delivery an older release moved to the in_flight index is finished from there', async () => {
  const endpointId = await endpointWith({ maxAttempts: 3, schedule: { kind: 'fixed', waitsMs: [60_000, 60_000] }, jitterRatio: 0 });
  const pendingIndex = store.keys.endpointDeliveriesByStatus(orgId, endpointId, 'pending');
  const inFlightIndex = store.keys.endpointDeliveriesByStatus(orgId, endpointId, 'in_flight');
  for (const answerWith of [200, 500]) {
    const ids = await event(endpointId);
    let answer: ((r: TransportResult) => void) | undefined;
    const { t } = transport(() => new Promise<TransportResult>((resolve) => (answer = resolve)));
    const running = runAttempt(deps(t), ids);
    await waitUntil('the attempt in flight', () => answer !== undefined);
    // Where a release before this one kept an attempt's delivery while in flight.
    await postern.redis.multi().zrem(pendingIndex, ids.deliveryId).zadd(inFlightIndex, 0, ids.deliveryId).exec();
    answer!({ kind: 'response', status: answerWith, retryAfter: undefined, bodyBytesRead: 0 });
    await running;
    expect(await postern.redis.zscore(inFlightIndex, ids.deliveryId)).toBeNull();
    const next = answerWith === 200 ? 'succeeded' : 'pending';
    expect(await postern.redis.zscore(store.keys.endpointDeliveriesByStatus(orgId, endpointId, next), ids.deliveryId)).toBe('0');
  }
});

test.each([
  ['standard', 'pending', null],
  ['jitter-45h', 'cancelled', 'endpoint_inactive'],
  ['custral', 'failed', null],
] as const)('%s, endpoint paused: the delivery is settled (%s) without an attempt', async (preset, status, cancelReason) => {
  const endpointId = await endpointWith(preset);
  const ids = await event(endpointId);
  expect((await postern.api('POST', `/v1/endpoints/${endpointId}/pause`, { key: apiKey })).status).toBe(200);
  const { t, sent } = transport(ok);
  expect(await runAttempt(deps(t), ids)).toEqual({ kind: 'done', status });
  expect(sent).toHaveLength(0);
  const d = await delivery(ids.deliveryId);
  expect(d).toMatchObject({ status, attempts: [], cancelReason });
  if (status === 'failed') expect(d.lastError).toBe('endpoint_inactive');
});

test('adaptive pacing: a pace stored in another JSON notation than JavaScript\'s (exponents) still rises on a success', async () => {
  const endpointId = await endpointWith({ ...{ maxAttempts: 3, schedule: { kind: 'fixed', waitsMs: [1000, 1000] }, jitterRatio: 0 }, pacing: 'adaptive' });
  // The finish script's merge writes the pace with Lua's encoder (`%.14g`, exponents for large and
  // small numbers); the sender reads it back and sends it in JavaScript's notation.
  const cutAt = Date.now() - 5000;
  const stored = `{"goodPerSecond":30,"concurrency":2,"changedAt":${cutAt},"pausedUntil":null,"perSecond":1.05e+01,"cutAt":${cutAt}}`;
  await postern.redis.hset(postern.store.keys.endpoint(orgId, endpointId), 'pace', stored);
  const { t } = transport(ok);
  expect(await runAttempt(deps(t), await event(endpointId))).toEqual({ kind: 'done', status: 'succeeded' });
  const pace = (await store.endpoints.get(orgId, endpointId))!.pace!;
  expect(pace.perSecond).toBeGreaterThan(10.5);
  expect(pace.concurrency).toBeGreaterThan(2);
});

test('adaptive pacing: a 429 to an attempt claimed under an older pace halves the pace in force, not the old one again', async () => {
  const endpointId = await endpointWith({ maxAttempts: 3, schedule: { kind: 'fixed', waitsMs: [1000, 1000] }, jitterRatio: 0, pacing: 'adaptive' });
  const key = postern.store.keys.endpoint(orgId, endpointId);
  const longAgo = Date.now() - 60_000;
  await postern.redis.hset(key, 'pace', JSON.stringify({ perSecond: 20, concurrency: 3, pausedUntil: null, cutAt: longAgo, changedAt: longAgo, goodPerSecond: 30 }));
  // While this attempt is in flight, other attempts' successes raise the pace to 40/s × 4.
  const raised = { perSecond: 40, concurrency: 4, pausedUntil: null, cutAt: longAgo, changedAt: Date.now(), goodPerSecond: 30 };
  const { t } = transport(async () => {
    await postern.redis.hset(key, 'pace', JSON.stringify(raised));
    return { kind: 'response', status: 429, retryAfter: undefined, bodyBytesRead: 0 };
  });
  expect((await runAttempt(deps(t), await event(endpointId))).kind).toBe('retry');
  const pace = (await store.endpoints.get(orgId, endpointId))!.pace!;
  // One cut of 40/s × 4, where the stale 20/s × 3 would have given 10/s × 1.
  expect(pace).toMatchObject({ perSecond: 20, concurrency: 2 });
});

test('adaptive pacing: an attempt interrupted mid-way runs again only after a Retry-After pause that began meanwhile', async () => {
  const endpointId = await endpointWith({ maxAttempts: 3, schedule: { kind: 'fixed', waitsMs: [1000, 1000] }, jitterRatio: 0, pacing: 'adaptive' });
  const ids = await event(endpointId);
  const first = await store.attempts.claim(ids, Date.now());
  expect(first.kind).toBe('claimed');
  // Its sender dies mid-attempt; another attempt's 429 pauses the endpoint for a minute.
  const pausedUntil = Date.now() + 60_000;
  await postern.redis.hset(postern.store.keys.endpoint(orgId, endpointId), 'pace', JSON.stringify({ perSecond: 10, concurrency: 2, pausedUntil, cutAt: Date.now(), changedAt: Date.now(), goodPerSecond: null }));
  expect(await store.attempts.claim(ids, Date.now())).toEqual({ kind: 'parked', limit: 'pace', retryAt: pausedUntil });
  // After the pause, the same attempt number runs.
  const again = await store.attempts.claim(ids, pausedUntil + 1);
  expect(again).toMatchObject({ kind: 'claimed', attemptNumber: 1 });
});

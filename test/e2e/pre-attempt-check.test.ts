import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { fastPolicy, startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type ReceivedRequest, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Issue 16 end to end: the org's settings (`GET`/`PATCH /v1/org`), event-type switches and the
 * pre-attempt check, against a real check server, a real receiver and real Redis.
 */

let postern: TestPostern;
let receiver: TestReceiver;
let check: TestReceiver;
/** How the check server answers, by the event type asked about; default `{"action":"send"}`. */
const answers = new Map<string, (req: { attempt: number; calls: number }) => { status?: number; body: string; contentType?: string } | 'hang'>();
const callsByType = new Map<string, number>();

beforeAll(async () => {
  postern = await startPostern({ checkTimeoutMs: 500 });
  // Receiver: 500 for event types starting `fail.`; `flaky.` fails the first two requests of an event.
  const seen = new Map<string, number>();
  receiver = await startReceiver((r) => {
    const type = JSON.parse(r.body).type as string;
    const n = (seen.get(r.headers['webhook-id'] as string) ?? 0) + 1;
    seen.set(r.headers['webhook-id'] as string, n);
    if (type.startsWith('fail.')) return 500;
    if (type.startsWith('flaky.') && n <= 2) return 503;
    return 200;
  });
  check = await startReceiver((r, _n, res): 'handled' => {
    const asked = JSON.parse(r.body) as { eventType: string; attempt: number };
    const calls = (callsByType.get(asked.eventType) ?? 0) + 1;
    callsByType.set(asked.eventType, calls);
    const answer = [...answers.entries()].find(([prefix]) => asked.eventType.startsWith(prefix))?.[1]?.({ attempt: asked.attempt, calls }) ?? { body: '{"action":"send"}' };
    if (answer === 'hang') return 'handled'; // never answers: the check times out
    res.statusCode = answer.status ?? 200;
    res.setHeader('content-type', answer.contentType ?? 'application/json');
    res.end(answer.body);
    return 'handled';
  }, '/check');
});
afterAll(async () => {
  await postern.close();
  await receiver.close();
  await check.close();
});

async function orgWithCheck(checkUrl: string | null = check.url) {
  const org = await postern.createOrg('hr');
  if (checkUrl !== null) {
    const patched = await postern.api('PATCH', '/v1/org', { key: org.apiKey, body: { preAttemptCheckUrl: checkUrl } });
    expect(patched.status).toBe(200);
  }
  return org;
}

async function postEvent(key: string, type: string, data: unknown = { id: 1 }) {
  const r = await postern.api('POST', '/v1/events', { key, body: { type, data } });
  expect(r.status).toBe(202);
  return r.body as { id: string; deliveries: { id: string; endpointId: string }[] };
}

async function delivery(key: string, id: string) {
  return (await postern.api('GET', `/v1/deliveries/${id}`, { key })).body;
}

async function finished(key: string, id: string, timeoutMs = 10_000) {
  return waitUntil(`delivery ${id} finished`, async () => {
    const d = await delivery(key, id);
    return ['succeeded', 'failed', 'cancelled'].includes(d.status) ? d : undefined;
  }, timeoutMs);
}

const toReceiver = (eventId: string): ReceivedRequest[] => receiver.requests.filter((r) => r.headers['webhook-id'] === eventId);

test('GET and PATCH /v1/org: settings round-trip; bad input is 400 naming the field', async () => {
  const org = await postern.createOrg('settings');
  const initial = await postern.api('GET', '/v1/org', { key: org.apiKey });
  expect(initial.status).toBe(200);
  expect(initial.body).toMatchObject({ id: org.id, disabledEventTypes: [], preAttemptCheckUrl: null });
  expect((await postern.api('GET', '/v1/org/check-secret', { key: org.apiKey })).body).toEqual({ secret: null });

  const set = await postern.api('PATCH', '/v1/org', { key: org.apiKey, body: { disabledEventTypes: ['expense.*', 'time.logged', 'expense.*'], preAttemptCheckUrl: check.url } });
  expect(set.status).toBe(200);
  expect(set.body).toMatchObject({ disabledEventTypes: ['expense.*', 'time.logged'], preAttemptCheckUrl: check.url });
  const secret = (await postern.api('GET', '/v1/org/check-secret', { key: org.apiKey })).body.secret;
  expect(secret).toMatch(/^whsec_/);
  // A second URL keeps the secret; null clears the URL, [] the switches.
  await postern.api('PATCH', '/v1/org', { key: org.apiKey, body: { preAttemptCheckUrl: `${check.url}?v=2` } });
  expect((await postern.api('GET', '/v1/org/check-secret', { key: org.apiKey })).body.secret).toBe(secret);
  const cleared = await postern.api('PATCH', '/v1/org', { key: org.apiKey, body: { disabledEventTypes: [], preAttemptCheckUrl: null } });
  expect(cleared.body).toMatchObject({ disabledEventTypes: [], preAttemptCheckUrl: null });

  const bad: [unknown, string, string][] = [
    [{ disabledEventTypes: 'expense.*' }, 'invalid_request', 'disabledEventTypes: disabledEventTypes must be an array'],
    [{ disabledEventTypes: ['*'] }, 'invalid_request', 'disabledEventTypes.0: each entry must be an event type'],
    [{ disabledEventTypes: ['bad type'] }, 'invalid_request', 'disabledEventTypes.0: each entry must be an event type'],
    [{ disabledEventTypes: Array.from({ length: 101 }, (_, i) => `t${i}`) }, 'invalid_request', 'disabledEventTypes: disabledEventTypes holds at most 100'],
    [{ preAttemptCheckUrl: 'ftp://example.com/check' }, 'invalid_request', 'preAttemptCheckUrl: preAttemptCheckUrl must use http or https'],
    [{ preAttemptCheckUrl: 42 }, 'invalid_request', 'preAttemptCheckUrl: preAttemptCheckUrl must be a URL string or null'],
    [{ preAttemptCheckUrl: 'http://10.1.2.3/check' }, 'unsafe_url', 'preAttemptCheckUrl: points at a non-public address'],
    [{ name: 'x' }, 'invalid_request', 'body: unknown field "name"'],
  ];
  for (const [body, code, message] of bad) {
    const r = await postern.api('PATCH', '/v1/org', { key: org.apiKey, body });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe(code);
    expect(r.body.error.message).toContain(message);
  }
  const notJson = await postern.api('PATCH', '/v1/org', { key: org.apiKey, rawBody: '{', headers: { 'content-type': 'application/json' } });
  expect(notJson.status).toBe(400);
});

test('each cancel reason of the check reaches the delivery log; nothing is sent', async () => {
  const org = await orgWithCheck();
  const endpoint = await postern.createEndpoint(org.apiKey, { url: receiver.url, policy: fastPolicy(3, 50, { preAttemptCheck: 'every' }) });
  const reasons = ['api_switched_off', 'plan_without_api', 'owner_inactive', 'module_off', 'owner_cannot_see_record'];
  for (const reason of reasons) answers.set(`cancel.${reason}`, () => ({ body: JSON.stringify({ action: 'cancel', reason }) }));
  // A cancel at a later attempt too: sent at attempt 1 (the receiver fails it), cancelled at 2.
  answers.set('fail.later', ({ attempt }) => ({ body: attempt === 1 ? '{"action":"send"}' : '{"action":"cancel","reason":"owner_offboarded"}' }));

  const posted = await Promise.all([...reasons.map((r) => postEvent(org.apiKey, `cancel.${r}`)), postEvent(org.apiKey, 'fail.later')]);
  const expected = [...reasons, 'owner_offboarded'].map((r) => `check:${r}`);
  for (const [i, event] of posted.entries()) {
    const d = await finished(org.apiKey, event.deliveries[0]!.id);
    expect(d).toMatchObject({ status: 'cancelled', cancelReason: expected[i], lastError: null });
    const lastAttempt = d.attempts[d.attempts.length - 1];
    expect(lastAttempt).toMatchObject({ cancelReason: expected[i], requestHeaders: null, error: null });
  }
  const log = (await postern.api('GET', `/v1/endpoints/${endpoint.id}/deliveries?status=cancelled`, { key: org.apiKey })).body.data as { cancelReason: string }[];
  expect(log.map((d) => d.cancelReason).sort()).toEqual([...expected].sort());
  for (const event of posted.slice(0, reasons.length)) expect(toReceiver(event.id)).toHaveLength(0);
  expect(toReceiver(posted[reasons.length]!.id)).toHaveLength(1);
  // A cancellation is not the endpoint's failure: only the one 500 shows in its health.
  const health = (await postern.api('GET', `/v1/endpoints/${endpoint.id}`, { key: org.apiKey })).body;
  expect(health.failedAttempts).toBe(1);
});

test('a body built by the check at the first attempt is sent byte for byte on every retry and redelivery, freshly signed', async () => {
  const org = await orgWithCheck();
  const endpoint = await postern.createEndpoint(org.apiKey, { url: receiver.url, policy: fastPolicy(4, 1100, { preAttemptCheck: 'every' }) });
  // Each answer carries different data: only the first may be used.
  answers.set('flaky.visible', ({ calls }) => ({ body: JSON.stringify({ action: 'send', data: { seenAs: 'owner', call: calls, note: 'ünïcode ✓' } }) }));
  const event = await postEvent(org.apiKey, 'flaky.visible', { raw: 'producer data' });
  const deliveryId = event.deliveries[0]!.id;
  const d = await finished(org.apiKey, deliveryId, 15_000);
  expect(d.status).toBe('succeeded');
  const sent = toReceiver(event.id);
  expect(sent).toHaveLength(3);
  const body = sent[0]!.body;
  expect(JSON.parse(body)).toMatchObject({ id: event.id, type: 'flaky.visible', data: { seenAs: 'owner', call: 1 } });
  expect(callsByType.get('flaky.visible')).toBe(3);
  expect((await delivery(org.apiKey, deliveryId)).frozenEnvelope).toBe(body);

  const redelivered = await postern.api('POST', `/v1/deliveries/${deliveryId}/redeliver`, { key: org.apiKey });
  expect(redelivered.status).toBe(202);
  const all = await waitUntil('the redelivery sent', () => (toReceiver(event.id).length >= 4 ? toReceiver(event.id) : undefined));
  await finished(org.apiKey, redelivered.body.delivery.id);

  const wh = new Webhook(endpoint.secret);
  for (const r of all) {
    expect(r.body).toBe(body);
    expect(() => wh.verify(r.body, r.headers as Record<string, string>)).not.toThrow();
  }
  // Fresh signatures: each request is signed at its own send time (retries over a second apart).
  for (const r of all) expect(Math.abs(Number(r.headers['webhook-timestamp']) - r.at / 1000)).toBeLessThan(2);
  expect(new Set(all.slice(0, 3).map((r) => r.headers['webhook-signature'])).size).toBe(3);
  expect(all.map((r) => r.headers['webhook-attempt'])).toEqual(['1', '2', '3', '1']);

  // The check request itself is signed with the org's check secret.
  const secret = (await postern.api('GET', '/v1/org/check-secret', { key: org.apiKey })).body.secret as string;
  const asked = check.requests.filter((r) => JSON.parse(r.body).deliveryId === deliveryId);
  expect(asked.map((r) => JSON.parse(r.body))).toEqual([1, 2, 3].map((attempt) => ({ eventId: event.id, eventType: 'flaky.visible', endpointId: endpoint.id, deliveryId, attempt, bodyOpen: attempt === 1 })));
  for (const r of asked) expect(() => new Webhook(secret).verify(r.body, r.headers as Record<string, string>)).not.toThrow();
});

test('preAttemptCheck "first": asked once, its data frozen for the retries; a redelivery is not asked again', async () => {
  const org = await orgWithCheck();
  await postern.createEndpoint(org.apiKey, { url: receiver.url, policy: fastPolicy(4, 50, { preAttemptCheck: 'first' }) });
  answers.set('flaky.first', ({ calls }) => ({ body: JSON.stringify({ action: 'send', data: { call: calls } }) }));
  const event = await postEvent(org.apiKey, 'flaky.first');
  const deliveryId = event.deliveries[0]!.id;
  expect((await finished(org.apiKey, deliveryId)).status).toBe('succeeded');
  const redelivered = await postern.api('POST', `/v1/deliveries/${deliveryId}/redeliver`, { key: org.apiKey });
  expect((await finished(org.apiKey, redelivered.body.delivery.id)).status).toBe('succeeded');
  const bodies = toReceiver(event.id).map((r) => r.body);
  expect(bodies).toHaveLength(4);
  expect(new Set(bodies)).toEqual(new Set([bodies[0]]));
  expect(JSON.parse(bodies[0]!).data).toEqual({ call: 1 });
  expect(callsByType.get('flaky.first')).toBe(1);
  // The frozen body is kept by the first writer: a re-run of the same attempt cannot replace it.
  expect(await postern.store.deliveries.freezeEnvelope(org.id, deliveryId, '{"other":true}')).toBe(bodies[0]);
  expect(await postern.store.deliveries.freezeEnvelope(org.id, 'dlv_missing', '{}')).toBeNull();
});

test('check server down: an internal: fault, retried on the schedule, the endpoint never charged, counted in metrics', async () => {
  const closed: Server = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const port = (closed.address() as AddressInfo).port;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const org = await orgWithCheck(`http://127.0.0.1:${port}/check`);
  const endpoint = await postern.createEndpoint(org.apiKey, { url: receiver.url, policy: fastPolicy(3, 50, { preAttemptCheck: 'first', breaker: { threshold: 1, minStreakMs: 0 } }) });
  const event = await postEvent(org.apiKey, 'down.any');
  const d = await finished(org.apiKey, event.deliveries[0]!.id);
  expect(d).toMatchObject({ status: 'failed', lastError: 'internal:check_unreachable', attemptCount: 3 });
  expect(d.attempts.map((a: { error: string }) => a.error)).toEqual(Array(3).fill('internal:check_unreachable'));
  expect(toReceiver(event.id)).toHaveLength(0);
  const after = (await postern.api('GET', `/v1/endpoints/${endpoint.id}`, { key: org.apiKey })).body;
  // A breaker that trips at 1 failure stays shut: the fault is Postern's.
  expect(after).toMatchObject({ status: 'active', consecutiveFailures: 0, failedAttempts: 0, lastFailureAt: null });
  const metrics = await postern.senderRegistry.getSingleMetricAsString('postern_pre_attempt_checks_total');
  expect(metrics).toMatch(/postern_pre_attempt_checks_total\{result="fault",error="internal:check_unreachable"\} [3-9]/);
});

test('bad check answers (not JSON, too large, unknown action, no answer in time, non-2xx) are Postern-side faults; the sender keeps working', async () => {
  const org = await orgWithCheck();
  await postern.createEndpoint(org.apiKey, { url: receiver.url, policy: fastPolicy(2, 50, { preAttemptCheck: 'every' }) });
  answers.set('bad.not_json', () => ({ body: 'send it, please' }));
  answers.set('bad.too_large', () => ({ body: JSON.stringify({ action: 'send', data: 'x'.repeat(300 * 1024) }) }));
  answers.set('bad.unknown_action', () => ({ body: '{"action":"maybe"}' }));
  answers.set('bad.no_reason', () => ({ body: '{"action":"cancel"}' }));
  answers.set('bad.array', () => ({ body: '[1,2]' }));
  answers.set('bad.hang', () => 'hang');
  answers.set('bad.status', () => ({ status: 500, body: '{"action":"send"}' }));
  const cases: [string, string][] = [
    ['bad.not_json', 'internal:check_bad_answer'],
    ['bad.too_large', 'internal:check_answer_too_large'],
    ['bad.unknown_action', 'internal:check_bad_answer'],
    ['bad.no_reason', 'internal:check_bad_answer'],
    ['bad.array', 'internal:check_bad_answer'],
    ['bad.hang', 'internal:check_timeout'],
    ['bad.status', 'internal:check_status'],
  ];
  const posted = await Promise.all(cases.map(([type]) => postEvent(org.apiKey, type)));
  for (const [i, event] of posted.entries()) {
    const d = await finished(org.apiKey, event.deliveries[0]!.id);
    expect(d).toMatchObject({ status: 'failed', lastError: cases[i]![1], attemptCount: 2 });
    expect(toReceiver(event.id)).toHaveLength(0);
  }
  const good = await postEvent(org.apiKey, 'good.after');
  expect((await finished(org.apiKey, good.deliveries[0]!.id)).status).toBe('succeeded');
});

test('switching an event type group off cancels queued deliveries before their next attempt and creates none for new events; on again replays nothing', async () => {
  const org = await orgWithCheck(null);
  const endpoint = await postern.createEndpoint(org.apiKey, { url: receiver.url, policy: fastPolicy(6, 400) });
  const expenseA = await postEvent(org.apiKey, 'fail.expense.created');
  const expenseB = await postEvent(org.apiKey, 'fail.expense.report.filed');
  const time = await postEvent(org.apiKey, 'fail.time.logged');
  await waitUntil('first attempts', () => [expenseA, expenseB, time].every((e) => toReceiver(e.id).length >= 1));

  const off = await postern.api('PATCH', '/v1/org', { key: org.apiKey, body: { disabledEventTypes: ['fail.expense.*'] } });
  expect(off.status).toBe(200);
  for (const e of [expenseA, expenseB]) {
    const d = await finished(org.apiKey, e.deliveries[0]!.id);
    expect(d).toMatchObject({ status: 'cancelled', cancelReason: 'event_type_disabled' });
    expect(d.attemptCount).toBeLessThan(6);
  }
  // Counted once both are cancelled: an attempt already under way at the switch has arrived by then.
  const sentBefore = toReceiver(expenseA.id).length + toReceiver(expenseB.id).length;
  const none = await postEvent(org.apiKey, 'fail.expense.created');
  expect(none.deliveries).toEqual([]);

  expect((await postern.api('PATCH', '/v1/org', { key: org.apiKey, body: { disabledEventTypes: [] } })).status).toBe(200);
  // The other type kept its schedule to the end, which outlasts any attempt the cancelled ones had left.
  const other = await finished(org.apiKey, time.deliveries[0]!.id, 15_000);
  expect(other).toMatchObject({ status: 'failed', attemptCount: 6 });
  expect(toReceiver(expenseA.id).length + toReceiver(expenseB.id).length).toBe(sentBefore);
  for (const e of [expenseA, expenseB]) expect((await delivery(org.apiKey, e.deliveries[0]!.id)).status).toBe('cancelled');
  const after = await postEvent(org.apiKey, 'fail.expense.created');
  expect(after.deliveries.map((d) => d.endpointId)).toEqual([endpoint.id]);
});

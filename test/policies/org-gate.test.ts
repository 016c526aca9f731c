import { buildEnvelope, createIdFactory } from '@postern/shared';
import { markEndpointsForClaim, newPendingDelivery, type AttemptIds } from '@postern/store';
import { fastPolicy, startPostern, TEST_ADMIN_TOKEN, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * The org's gate on its endpoints (`orgGate`, claim-marks.ts): the claim reads the org's status
 * and attempt settings only from an endpoint that carries it, so every change of them must reach
 * every endpoint of the org, and an endpoint created meanwhile. What users see must not change:
 * suspension and switched-off event types still stop queued deliveries, the pre-attempt check
 * still runs, and an org back to none of them delivers again.
 */

let postern: TestPostern;
/** Answers 500 to event types starting `fail.`, else 200. */
let receiver: TestReceiver;
/** The pre-attempt check server: always `send`. */
let check: TestReceiver;
const ids = createIdFactory();

beforeAll(async () => {
  postern = await startPostern({ checkTimeoutMs: 2000 });
  receiver = await startReceiver((r) => ((JSON.parse(r.body) as { type: string }).type.startsWith('fail.') ? 500 : 200));
  check = await startReceiver((_r, _n, res): 'handled' => {
    res.setHeader('content-type', 'application/json');
    res.end('{"action":"send"}');
    return 'handled';
  }, '/check');
});
afterAll(async () => {
  await postern.close();
  await receiver.close();
  await check.close();
});

const gate = (orgId: string, endpointId: string) => postern.redis.hget(postern.store.keys.endpoint(orgId, endpointId), 'orgGate');

async function postEvent(key: string, type: string): Promise<{ id: string; deliveryId: string }> {
  const r = await postern.api('POST', '/v1/events', { key, body: { type, data: {} } });
  expect(r.status).toBe(202);
  return { id: r.body.id as string, deliveryId: r.body.deliveries[0].id as string };
}

async function finished(orgId: string, deliveryId: string) {
  return waitUntil(`delivery ${deliveryId} finished`, async () => {
    const d = await postern.store.deliveries.get(orgId, deliveryId);
    return d && ['succeeded', 'failed', 'cancelled'].includes(d.status) ? d : undefined;
  }, 15_000);
}

const requestsOf = (eventId: string) => receiver.requests.filter((r) => r.headers['webhook-id'] === eventId).length;

/** A delivery written straight to the store (no job, so only the test claims it): what an API that refuses a suspended org cannot make. */
async function storedDelivery(orgId: string, endpointId: string): Promise<AttemptIds> {
  const now = Date.now();
  const eventId = ids('evt', now);
  const deliveryId = ids('dlv', now);
  const type = 'ok.stored';
  await postern.store.events.createWithDeliveries({
    event: { id: eventId, orgId, type, envelope: buildEnvelope({ id: eventId, type, timestampMs: now, dataJson: '{}' }), createdAt: now, idempotencyKey: null, deliveryIds: [deliveryId] },
    deliveries: [newPendingDelivery({ id: deliveryId, orgId, eventId, eventType: type, endpointId, nowMs: now })],
    idempotencyKeyHash: null,
    answer: '{}',
  });
  return { deliveryId, endpointId, eventId, orgId };
}

test('suspending an org gates its endpoints and stops its queued deliveries as before; reactivated, it delivers again', async () => {
  const org = await postern.createOrg();
  const endpoint = await postern.createEndpoint(org.apiKey, { url: receiver.url, policy: fastPolicy(6, 300, { onEndpointInactive: 'cancel' }) });
  expect(await gate(org.id, endpoint.id)).toBeNull();
  const failing = await postEvent(org.apiKey, 'fail.suspend');
  await waitUntil('first attempt', () => requestsOf(failing.id) >= 1);

  expect((await postern.api('POST', `/v1/orgs/${org.id}/suspend`, { key: TEST_ADMIN_TOKEN })).status).toBe(200);
  expect(await gate(org.id, endpoint.id)).toBe('1');
  expect(await finished(org.id, failing.deliveryId)).toMatchObject({ status: 'cancelled', cancelReason: 'org_suspended' });
  const sent = requestsOf(failing.id);
  expect(sent).toBeLessThan(6);

  expect((await postern.api('POST', `/v1/orgs/${org.id}/reactivate`, { key: TEST_ADMIN_TOKEN })).status).toBe(200);
  expect(await gate(org.id, endpoint.id)).toBeNull();
  const ok = await postEvent(org.apiKey, 'ok.after');
  expect(await finished(org.id, ok.deliveryId)).toMatchObject({ status: 'succeeded' });
  expect(requestsOf(failing.id)).toBe(sent);
});

test('switching an event type off gates the endpoints and cancels its queued deliveries; switched on again, the gate goes', async () => {
  const org = await postern.createOrg();
  const endpoint = await postern.createEndpoint(org.apiKey, { url: receiver.url, policy: fastPolicy(6, 300) });
  const failing = await postEvent(org.apiKey, 'fail.off.created');
  await waitUntil('first attempt', () => requestsOf(failing.id) >= 1);

  expect((await postern.api('PATCH', '/v1/org', { key: org.apiKey, body: { disabledEventTypes: ['fail.off.*'] } })).status).toBe(200);
  expect(await gate(org.id, endpoint.id)).toBe('1');
  expect(await finished(org.id, failing.deliveryId)).toMatchObject({ status: 'cancelled', cancelReason: 'event_type_disabled' });

  // A change of another setting leaves the gate as the switched-off type needs it.
  expect((await postern.api('PATCH', '/v1/org', { key: org.apiKey, body: { eventValidation: 'warn' } })).status).toBe(200);
  expect(await gate(org.id, endpoint.id)).toBe('1');
  expect((await postern.api('PATCH', '/v1/org', { key: org.apiKey, body: { disabledEventTypes: [] } })).status).toBe(200);
  expect(await gate(org.id, endpoint.id)).toBeNull();
  const ok = await postEvent(org.apiKey, 'ok.on');
  expect(await finished(org.id, ok.deliveryId)).toMatchObject({ status: 'succeeded' });
});

test('the pre-attempt check still runs: an endpoint created after the check URL is gated and asks; without the URL nothing is asked', async () => {
  const org = await postern.createOrg();
  expect((await postern.api('PATCH', '/v1/org', { key: org.apiKey, body: { preAttemptCheckUrl: check.url } })).status).toBe(200);
  const endpoint = await postern.createEndpoint(org.apiKey, { url: receiver.url, policy: fastPolicy(3, 50, { preAttemptCheck: 'every' }) });
  expect(await gate(org.id, endpoint.id)).toBe('1');
  const asked = await postEvent(org.apiKey, 'ok.checked');
  expect(await finished(org.id, asked.deliveryId)).toMatchObject({ status: 'succeeded' });
  const checks = check.requests.filter((r) => (JSON.parse(r.body) as { eventType: string }).eventType === 'ok.checked');
  expect(checks).toHaveLength(1);

  expect((await postern.api('PATCH', '/v1/org', { key: org.apiKey, body: { preAttemptCheckUrl: null } })).status).toBe(200);
  expect(await gate(org.id, endpoint.id)).toBeNull();
  const unasked = await postEvent(org.apiKey, 'ok.unchecked');
  expect(await finished(org.id, unasked.deliveryId)).toMatchObject({ status: 'succeeded' });
  expect(check.requests.filter((r) => (JSON.parse(r.body) as { eventType: string }).eventType === 'ok.unchecked')).toHaveLength(0);
});

test('an endpoint created while its org is suspended carries the gate: its delivery is blocked before any attempt', async () => {
  const org = await postern.createOrg();
  const first = await postern.createEndpoint(org.apiKey, { url: receiver.url, policy: fastPolicy(3, 50, { onEndpointInactive: 'cancel' }) });
  await postern.store.orgs.setStatus(org.id, 'suspended');
  const record = (await postern.store.endpoints.get(org.id, first.id))!;
  const created = ids('ep', Date.now());
  await postern.store.endpoints.create({ ...record, id: created });
  expect(await gate(org.id, created)).toBe('1');

  const claim = await postern.store.attempts.claim(await storedDelivery(org.id, created), Date.now());
  expect(claim).toMatchObject({ kind: 'blocked', orgSuspended: true });

  await postern.store.orgs.setStatus(org.id, 'active');
  expect(await gate(org.id, created)).toBeNull();
  expect(await postern.store.attempts.claim(await storedDelivery(org.id, created), Date.now())).toMatchObject({ kind: 'claimed', org: { disabledEventTypes: [], check: null } });
});

test('endpoints of an org suspended by an older Postern (no gate) are gated by markEndpointsForClaim', async () => {
  const org = await postern.createOrg();
  const endpoint = await postern.createEndpoint(org.apiKey, { url: receiver.url, policy: fastPolicy(3, 50) });
  // What an older Postern left: the org suspended, its endpoint without the gate.
  await postern.redis.hset(postern.store.keys.org(org.id), 'status', 'suspended');
  expect(await gate(org.id, endpoint.id)).toBeNull();

  await markEndpointsForClaim(postern.redis, postern.store.keys, { always: true });
  expect(await gate(org.id, endpoint.id)).toBe('1');
  expect(await postern.store.attempts.claim(await storedDelivery(org.id, endpoint.id), Date.now())).toMatchObject({ kind: 'blocked', orgSuspended: true });
});

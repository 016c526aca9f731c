import { startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Postern's own faults (vestiarion, "Failures on Vestiarion's side"): an endpoint secret that no
 * longer reads, or a stored URL that no longer parses. They are retried on the policy's schedule
 * and still end the delivery failed after the last attempt, but nothing is sent and they are
 * never held against the endpoint, even under vestiarion's breaker, which counts everything else.
 */

const WAIT_MS = 60;
const POLICY = { preset: 'vestiarion', maxAttempts: 3, schedule: { kind: 'fixed', waitsMs: [WAIT_MS, WAIT_MS] } };

let postern: TestPostern;
let receiver: TestReceiver;
let apiKey: string;
let orgId: string;

beforeAll(async () => {
  postern = await startPostern();
  receiver = await startReceiver(() => 200);
  ({ apiKey, id: orgId } = await postern.createOrg());
});
afterAll(async () => {
  await postern.close();
  await receiver.close();
});

let runs = 0;

/** Creates an endpoint, breaks one stored field straight in Redis, sends an event; returns the finished delivery. */
async function deliverWithCorruptField(field: string, value: string): Promise<{ delivery: any; endpointId: string; type: string }> {
  const type = `internal.${field}${++runs}`;
  const endpoint = await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: [type], policy: POLICY });
  const key = postern.store.keys.endpoint(orgId, endpoint.id);
  expect(await postern.redis.hexists(key, field)).toBe(1);
  await postern.redis.hset(key, field, value);

  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type, data: {} } });
  expect(posted.status).toBe(202);
  const deliveryId = posted.body.deliveries[0].id as string;
  const delivery = await waitUntil('delivery finished', async () => {
    const r = await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey });
    return ['succeeded', 'failed', 'cancelled'].includes(r.body.status) ? r.body : undefined;
  });
  return { delivery, endpointId: endpoint.id, type };
}

function expectRetriedOnScheduleThenFailed(delivery: any, code: string): void {
  expect(delivery.status).toBe('failed');
  expect(delivery.lastError).toBe(code);
  expect(delivery.attempts.map((a: { error: string }) => a.error)).toEqual([code, code, code]);
  expect(delivery.attempts.map((a: { responseStatus: number | null }) => a.responseStatus)).toEqual([null, null, null]);
  const starts = delivery.attempts.map((a: { startedAt: string }) => Date.parse(a.startedAt));
  for (let i = 1; i < starts.length; i++) expect(starts[i] - starts[i - 1]).toBeGreaterThanOrEqual(WAIT_MS);
}

async function expectEndpointUntouched(endpointId: string): Promise<void> {
  const ep = await postern.api('GET', `/v1/endpoints/${endpointId}`, { key: apiKey });
  expect(ep.body).toMatchObject({ status: 'active', consecutiveFailures: 0, lastFailureAt: null, disabledAt: null });
}

test('an unreadable secret: internal:secret_unreadable on every attempt, nothing sent, endpoint not blamed', async () => {
  const { delivery, endpointId } = await deliverWithCorruptField('secrets', '[{"secret":"garbage","expiresAt":null}]');
  expectRetriedOnScheduleThenFailed(delivery, 'internal:secret_unreadable');
  expect(receiver.requests).toHaveLength(0);
  await expectEndpointUntouched(endpointId);
});

test.each([
  ['no longer parses', 'http://exa mple.com:99999/hook'],
  ['no longer passes the URL rules', 'ftp://127.0.0.1/hook'],
])('a stored URL that %s: internal:stored_url_invalid, nothing sent, endpoint not blamed', async (_what, url) => {
  const { delivery, endpointId } = await deliverWithCorruptField('url', url);
  expectRetriedOnScheduleThenFailed(delivery, 'internal:stored_url_invalid');
  expect(receiver.requests).toHaveLength(0);
  await expectEndpointUntouched(endpointId);
});

test('secrets that are not even JSON are unreadable too: same code, same schedule, not blamed', async () => {
  const { delivery, endpointId } = await deliverWithCorruptField('secrets', 'garbage');
  expectRetriedOnScheduleThenFailed(delivery, 'internal:secret_unreadable');
  expect(receiver.requests).toHaveLength(0);
  await expectEndpointUntouched(endpointId);
});

// Last: the only test in this file whose receiver gets a request.
test('the same endpoint set right again delivers, so the fault really was the stored field', async () => {
  const { endpointId, type } = await deliverWithCorruptField('url', 'not a url');
  await postern.api('PATCH', `/v1/endpoints/${endpointId}`, { key: apiKey, body: { url: receiver.url } });
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type, data: {} } });
  await receiver.waitForRequests(1);
  const deliveryId = posted.body.deliveries.find((d: { endpointId: string }) => d.endpointId === endpointId).id;
  const delivery = await waitUntil('delivery succeeded', async () => {
    const r = await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey });
    return r.body.status === 'succeeded' ? r.body : undefined;
  });
  expect(delivery.attempts).toHaveLength(1);
});

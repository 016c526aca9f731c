import { PRESETS } from '@postern/shared';
import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * `goneDisables`: the first 410 disables the endpoint like a breaker trip (one notification, one
 * `endpoint.disabled` operational webhook) and its queued deliveries follow `onEndpointInactive`;
 * a seed preset (their rules retry a 4xx like any failure) keeps retrying.
 */

let postern: TestPostern;
let gone: TestReceiver;
let operations: TestReceiver;

beforeAll(async () => {
  postern = await startPostern();
  gone = await startReceiver(() => 410);
  operations = await startReceiver(() => 200);
});
afterAll(async () => {
  await postern.close();
  await gone.close();
  await operations.close();
});

test('standard: the first 410 disables the endpoint, notifies once, holds its queued deliveries; resume replays them', async () => {
  expect(PRESETS.standard.policy.goneDisables).toBe(true);
  const { apiKey } = await postern.createOrg();
  await postern.createEndpoint(apiKey, { url: operations.url, eventTypes: ['endpoint.disabled'] });
  // One at a time: the others wait for the slot the 410's attempt holds until the endpoint is off.
  const endpoint = await postern.createEndpoint(apiKey, { url: gone.url, eventTypes: ['invoice.paid'], policy: { ...fastPolicy(3, 20), concurrency: { perEndpoint: 1, perOrg: 20 } } });
  expect(endpoint.policy.goneDisables).toBe(true);
  const posted: string[] = [];
  for (let i = 0; i < 3; i++) posted.push((await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'invoice.paid', data: { i } } })).body.deliveries[0].id as string);

  const disabled = await waitUntil('the endpoint disabled', async () => {
    const e = await postern.api('GET', `/v1/endpoints/${endpoint.id}`, { key: apiKey });
    return e.body.status === 'disabled' ? e.body : undefined;
  });
  expect(disabled.disabledReason).toBe('the endpoint answered 410 Gone');
  const [notice] = await operations.waitForRequests(1);
  expect(JSON.parse(notice!.body)).toMatchObject({ type: 'endpoint.disabled', data: { endpointId: endpoint.id } });

  // standard's onEndpointInactive is hold: every delivery stays pending, held for the resume.
  const held = await waitUntil('every delivery held', async () => {
    const ds = await Promise.all(posted.map(async (id) => (await postern.api('GET', `/v1/deliveries/${id}`, { key: apiKey })).body));
    return ds.every((d) => d.status === 'pending' && d.held) ? ds : undefined;
  });
  // One request reached the receiver: the 410 itself.
  expect(gone.requests).toHaveLength(1);
  expect(held.map((d) => d.attemptCount).sort()).toEqual([0, 0, 1]);
  const notifications = await postern.api('GET', '/v1/notifications', { key: apiKey });
  expect(notifications.body.data).toHaveLength(1);
  expect(notifications.body.data[0]).toMatchObject({ kind: 'endpoint.disabled', endpointId: endpoint.id });
  expect(operations.requests).toHaveLength(1);

  gone.setBehaviour(() => 200);
  const resumed = await postern.api('POST', `/v1/endpoints/${endpoint.id}/resume`, { key: apiKey });
  expect(resumed.body).toMatchObject({ status: 'active', requeued: 3 });
  await waitUntil('every delivery succeeded after the resume', async () => {
    const ds = await Promise.all(posted.map(async (id) => (await postern.api('GET', `/v1/deliveries/${id}`, { key: apiKey })).body));
    return ds.every((d) => d.status === 'succeeded');
  });
  gone.setBehaviour(() => 410);
});

test('a seed preset retries a 410 like any 4xx and leaves the endpoint active', async () => {
  for (const name of ['custral', 'jitter-45h', 'tourical', 'kestrel', 'vestiarion'] as const) expect(PRESETS[name].policy.goneDisables).toBe(false);
  const { apiKey } = await postern.createOrg();
  const endpoint = await postern.createEndpoint(apiKey, { url: gone.url, policy: { preset: 'kestrel', ...fastPolicy(3, 20) } });
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'invoice.paid', data: {} } });
  const d = await waitUntil('the delivery failed', async () => {
    const got = await postern.api('GET', `/v1/deliveries/${posted.body.deliveries[0].id}`, { key: apiKey });
    return got.body.status === 'failed' ? got.body : undefined;
  });
  expect(d).toMatchObject({ attemptCount: 3, lastError: 'http_410' });
  expect((await postern.api('GET', `/v1/endpoints/${endpoint.id}`, { key: apiKey })).body.status).toBe('active');
});

test('goneDisables is a policy field: false on standard keeps retrying; a wrong shape is invalid_policy', async () => {
  const { apiKey } = await postern.createOrg();
  const endpoint = await postern.createEndpoint(apiKey, { url: gone.url, policy: { ...fastPolicy(2, 20), goneDisables: false } });
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'invoice.paid', data: {} } });
  await waitUntil('the delivery failed', async () => (await postern.api('GET', `/v1/deliveries/${posted.body.deliveries[0].id}`, { key: apiKey })).body.status === 'failed');
  expect((await postern.api('GET', `/v1/endpoints/${endpoint.id}`, { key: apiKey })).body.status).toBe('active');
  const bad = await postern.api('POST', '/v1/endpoints', { key: apiKey, body: { url: gone.url, policy: { goneDisables: 'yes' } } });
  expect(bad.status).toBe(400);
  expect(bad.body.error).toMatchObject({ code: 'invalid_policy' });
  expect(bad.body.error.message).toMatch(/^policy.goneDisables:/);
});

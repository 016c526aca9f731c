import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { createIdFactory } from '@postern/shared';
import { createApp } from '@postern/ingest';
import { apiClient, type ApiClient } from '../support/api-client.js';
import { startPostern, TEST_ADMIN_TOKEN, type TestPostern } from '../support/postern.js';

/**
 * Ingest serves API keys, orgs and endpoint lists from an in-process cache (LOOKUP_CACHE_TTL_MS,
 * 10 s by default; 60 s here, so only invalidation can explain what the tests see). Every change
 * must be seen by the very next event, on this ingest and on another one sharing the Redis.
 */

let postern: TestPostern;
let other: { server: Server; api: ApiClient };

beforeAll(async () => {
  postern = await startPostern({ sender: false, lookupCacheTtlMs: 60_000 });
  // A second ingest on the same Redis and prefix: its cache must see the first one's changes too.
  const app = createApp({
    redis: postern.redis,
    store: postern.store,
    queues: postern.queues,
    clock: { now: () => Date.now() },
    ids: createIdFactory(),
    logger: pino({ level: 'silent' }),
    config: { adminToken: TEST_ADMIN_TOKEN, maxBodyBytes: 1 << 20, allowList: ['127.0.0.1'], secretRotationGraceMs: 60_000, lookupCacheTtlMs: 60_000 },
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  other = { server, api: apiClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`) };
});
afterAll(async () => {
  await new Promise<void>((resolve) => other.server.close(() => resolve()));
  other.server.closeAllConnections();
  await postern.close();
});

const URL = 'http://127.0.0.1:9/hook';
/** Holds nothing for an inactive endpoint, so a paused one gets no delivery of a new event. */
const CANCEL_WHILE_INACTIVE = { onEndpointInactive: 'cancel' };

/** Posts an event through `api` (this ingest by default) and returns the endpoint ids it fanned out to. */
async function fanOut(key: string, type = 'order.created', api: ApiClient = postern.api): Promise<string[]> {
  const r = await api('POST', '/v1/events', { key, body: { type, data: { n: 1 } } });
  expect(r.status).toBe(202);
  return (r.body.deliveries as { endpointId: string }[]).map((d) => d.endpointId).sort();
}

test('a PATCH of eventTypes, a pause, a resume, a delete and a new endpoint are seen by the very next event', async () => {
  const org = await postern.createOrg('cache-endpoints');
  const a = await postern.createEndpoint(org.apiKey, { url: URL, eventTypes: ['order.created'], policy: CANCEL_WHILE_INACTIVE });
  const b = await postern.createEndpoint(org.apiKey, { url: URL, eventTypes: ['order.created'], policy: CANCEL_WHILE_INACTIVE });
  // Both ingests have the org cached now.
  expect(await fanOut(org.apiKey)).toEqual([a.id, b.id].sort());
  expect(await fanOut(org.apiKey, 'order.created', other.api)).toEqual([a.id, b.id].sort());

  expect((await postern.api('PATCH', `/v1/endpoints/${b.id}`, { key: org.apiKey, body: { eventTypes: ['order.paid'] } })).status).toBe(200);
  expect(await fanOut(org.apiKey)).toEqual([a.id]);
  expect(await fanOut(org.apiKey, 'order.created', other.api)).toEqual([a.id]);
  expect(await fanOut(org.apiKey, 'order.paid')).toEqual([b.id]);

  expect((await postern.api('POST', `/v1/endpoints/${a.id}/pause`, { key: org.apiKey })).status).toBe(200);
  expect(await fanOut(org.apiKey)).toEqual([]);
  expect(await fanOut(org.apiKey, 'order.created', other.api)).toEqual([]);
  expect((await postern.api('POST', `/v1/endpoints/${a.id}/resume`, { key: org.apiKey })).status).toBe(200);
  expect(await fanOut(org.apiKey, 'order.created', other.api)).toEqual([a.id]);

  expect((await postern.api('DELETE', `/v1/endpoints/${a.id}`, { key: org.apiKey })).status).toBe(204);
  expect(await fanOut(org.apiKey)).toEqual([]);
  expect(await fanOut(org.apiKey, 'order.created', other.api)).toEqual([]);

  const c = await postern.createEndpoint(org.apiKey, { url: URL, eventTypes: ['order.created'] });
  expect(await fanOut(org.apiKey)).toEqual([c.id]);
  expect(await fanOut(org.apiKey, 'order.created', other.api)).toEqual([c.id]);
});

test('a tripped breaker is seen by the next event', async () => {
  const org = await postern.createOrg('cache-breaker');
  const endpoint = await postern.createEndpoint(org.apiKey, { url: URL, policy: CANCEL_WHILE_INACTIVE });
  expect(await fanOut(org.apiKey)).toEqual([endpoint.id]);
  const tripped = await postern.store.notifications.tripBreaker({
    endpoint: { id: endpoint.id, orgId: org.id, url: URL },
    status: 'disabled',
    reason: 'test trip',
    pendingOnTrip: 'cancel',
    retention: { days: 30 },
    consecutiveFailures: 20,
    notificationId: 'ntf_cache_test',
    nowMs: Date.now(),
  });
  expect(tripped).not.toBeNull();
  expect(await fanOut(org.apiKey)).toEqual([]);
  expect(await fanOut(org.apiKey, 'order.created', other.api)).toEqual([]);
});

test('a revoked key gets 401 and a suspended org 403 on the very next request, on both ingests', async () => {
  const org = await postern.createOrg('cache-keys');
  await postern.createEndpoint(org.apiKey, { url: URL });
  const created = await postern.api('POST', '/v1/api-keys', { key: org.apiKey, body: { name: 'producer', scopes: ['events:write'] } });
  expect(created.status).toBe(201);
  const producer = created.body.apiKey as string;
  expect(await fanOut(producer)).toHaveLength(1);
  expect(await fanOut(producer, 'order.created', other.api)).toHaveLength(1);

  expect((await postern.api('DELETE', `/v1/api-keys/${created.body.id}`, { key: org.apiKey })).status).toBe(200);
  for (const api of [postern.api, other.api]) {
    const refused = await api('POST', '/v1/events', { key: producer, body: { type: 'order.created', data: 1 } });
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe('unauthorized');
  }

  expect((await postern.api('POST', `/v1/orgs/${org.id}/suspend`, { key: TEST_ADMIN_TOKEN })).status).toBe(200);
  for (const api of [postern.api, other.api]) {
    const refused = await api('POST', '/v1/events', { key: org.apiKey, body: { type: 'order.created', data: 1 } });
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('org_suspended');
  }
  expect((await postern.api('POST', `/v1/orgs/${org.id}/reactivate`, { key: TEST_ADMIN_TOKEN })).status).toBe(200);
  expect(await fanOut(org.apiKey, 'order.created', other.api)).toHaveLength(1);
});

test('a change made straight through the store (as the sender and tests do) is seen by the next event', async () => {
  const org = await postern.createOrg('cache-store');
  const endpoint = await postern.createEndpoint(org.apiKey, { url: URL, policy: CANCEL_WHILE_INACTIVE });
  expect(await fanOut(org.apiKey)).toEqual([endpoint.id]);
  expect(await postern.store.endpoints.update({ id: endpoint.id, orgId: org.id }, { status: 'paused' }, Date.now())).not.toBeNull();
  expect(await fanOut(org.apiKey)).toEqual([]);
});

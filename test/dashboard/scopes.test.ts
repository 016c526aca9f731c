import { createIdFactory } from '@postern/shared';
import { hashApiKey } from '@postern/ingest';
import { fastPolicy, startPostern, type TestPostern } from '../support/postern.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Scoped API keys (issue 7): every v1 route needs one scope; a key without it gets 403
 * `insufficient_scope` naming the scope; keys are created (shown once), listed (prefix only) and
 * revoked (refused at once); another org's ids stay 404.
 */

type Scope = 'events:write' | 'webhooks:read' | 'webhooks:write';
const ALL_SCOPES: Scope[] = ['events:write', 'webhooks:read', 'webhooks:write'];
// Nothing listens on port 9 on the test machine: every attempt fails fast with connection_failed.
const DEAD_URL = 'http://127.0.0.1:9/hook';

let postern: TestPostern;
let orgA: { id: string; apiKey: string };
let orgB: { id: string; apiKey: string };
const keyFor = {} as Record<Scope, string>;
let endpointId: string;
let eventId: string;
let failedDeliveryId: string;

async function createKey(owner: string, name: string, scopes: Scope[]): Promise<{ id: string; apiKey: string; prefix: string }> {
  const r = await postern.api('POST', '/v1/api-keys', { key: owner, body: { name, scopes } });
  if (r.status !== 201) throw new Error(`createKey: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

beforeAll(async () => {
  postern = await startPostern();
  orgA = await postern.createOrg('a');
  orgB = await postern.createOrg('b');
  for (const scope of ALL_SCOPES) keyFor[scope] = (await createKey(orgA.apiKey, `only ${scope}`, [scope])).apiKey;
  endpointId = (await postern.createEndpoint(orgA.apiKey, { url: DEAD_URL, policy: fastPolicy(1) })).id;
  const posted = await postern.api('POST', '/v1/events', { key: orgA.apiKey, body: { type: 'invoice.paid', data: { n: 1 } } });
  eventId = posted.body.id;
  failedDeliveryId = posted.body.deliveries[0].id;
  await waitUntil('the delivery to a dead port failed', async () => (await postern.api('GET', `/v1/deliveries/${failedDeliveryId}`, { key: orgA.apiKey })).body.status === 'failed');
});
afterAll(async () => {
  await postern.close();
});

function expectInsufficientScope(res: { status: number; body: any }, scope: Scope): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 403, code: 'insufficient_scope' });
  expect(res.body.error.message).toContain(scope);
}

interface Call {
  method: string;
  path: () => string | Promise<string>;
  body?: unknown;
  scope: Scope;
  /** The status a key holding the scope gets. */
  allowed: number;
}

const CALLS: [string, Call][] = [
  ['POST /v1/events', { method: 'POST', path: () => '/v1/events', body: { type: 'invoice.paid', data: {} }, scope: 'events:write', allowed: 202 }],
  ['GET /v1/endpoints', { method: 'GET', path: () => '/v1/endpoints', scope: 'webhooks:read', allowed: 200 }],
  ['GET /v1/endpoints/:id', { method: 'GET', path: () => `/v1/endpoints/${endpointId}`, scope: 'webhooks:read', allowed: 200 }],
  ['GET /v1/endpoints/:id/deliveries', { method: 'GET', path: () => `/v1/endpoints/${endpointId}/deliveries`, scope: 'webhooks:read', allowed: 200 }],
  ['GET /v1/endpoints/:id/timeline', { method: 'GET', path: () => `/v1/endpoints/${endpointId}/timeline`, scope: 'webhooks:read', allowed: 200 }],
  ['GET /v1/deliveries/:id', { method: 'GET', path: () => `/v1/deliveries/${failedDeliveryId}`, scope: 'webhooks:read', allowed: 200 }],
  ['GET /v1/events/:id', { method: 'GET', path: () => `/v1/events/${eventId}`, scope: 'webhooks:read', allowed: 200 }],
  ['GET /v1/notifications', { method: 'GET', path: () => '/v1/notifications', scope: 'webhooks:read', allowed: 200 }],
  ['GET /v1/api-keys', { method: 'GET', path: () => '/v1/api-keys', scope: 'webhooks:read', allowed: 200 }],
  ['POST /v1/endpoints', { method: 'POST', path: () => '/v1/endpoints', body: { url: DEAD_URL }, scope: 'webhooks:write', allowed: 201 }],
  ['PATCH /v1/endpoints/:id', { method: 'PATCH', path: () => `/v1/endpoints/${endpointId}`, body: { description: 'changed' }, scope: 'webhooks:write', allowed: 200 }],
  ['GET /v1/endpoints/:id/secret', { method: 'GET', path: () => `/v1/endpoints/${endpointId}/secret`, scope: 'webhooks:write', allowed: 200 }],
  ['POST /v1/endpoints/:id/pause', { method: 'POST', path: () => `/v1/endpoints/${endpointId}/pause`, scope: 'webhooks:write', allowed: 200 }],
  ['POST /v1/endpoints/:id/resume', { method: 'POST', path: () => `/v1/endpoints/${endpointId}/resume`, scope: 'webhooks:write', allowed: 200 }],
  ['POST /v1/endpoints/:id/rotate-secret', { method: 'POST', path: () => `/v1/endpoints/${endpointId}/rotate-secret`, scope: 'webhooks:write', allowed: 200 }],
  ['POST /v1/endpoints/:id/test', { method: 'POST', path: () => `/v1/endpoints/${endpointId}/test`, scope: 'webhooks:write', allowed: 202 }],
  ['POST /v1/deliveries/:id/redeliver', { method: 'POST', path: () => `/v1/deliveries/${failedDeliveryId}/redeliver`, scope: 'webhooks:write', allowed: 202 }],
  ['POST /v1/endpoints/:id/redeliver-failed', { method: 'POST', path: () => `/v1/endpoints/${endpointId}/redeliver-failed`, scope: 'webhooks:write', allowed: 202 }],
  ['POST /v1/endpoints/:id/recover', { method: 'POST', path: () => `/v1/endpoints/${endpointId}/recover`, body: { since: '2020-01-01T00:00:00Z' }, scope: 'webhooks:write', allowed: 202 }],
  ['POST /v1/api-keys', { method: 'POST', path: () => '/v1/api-keys', body: { name: 'made by a writer', scopes: ['webhooks:write'] }, scope: 'webhooks:write', allowed: 201 }],
  ['DELETE /v1/api-keys/:id', { method: 'DELETE', path: async () => `/v1/api-keys/${(await createKey(orgA.apiKey, 'to revoke', ['webhooks:read'])).id}`, scope: 'webhooks:write', allowed: 200 }],
  ['DELETE /v1/endpoints/:id', { method: 'DELETE', path: async () => `/v1/endpoints/${(await postern.createEndpoint(orgA.apiKey, { url: DEAD_URL })).id}`, scope: 'webhooks:write', allowed: 204 }],
];

describe('each route needs exactly its scope', () => {
  test.each(CALLS)('%s', async (_name, call) => {
    const path = await call.path();
    // The keys without the scope first: a refused call must change nothing the allowed one relies on.
    for (const scope of ALL_SCOPES.filter((s) => s !== call.scope)) {
      expectInsufficientScope(await postern.api(call.method, path, { key: keyFor[scope], body: call.body }), call.scope);
    }
    const allowed = await postern.api(call.method, path, { key: keyFor[call.scope], body: call.body });
    expect({ status: allowed.status, body: allowed.status === call.allowed ? 'as expected' : allowed.body }).toEqual({ status: call.allowed, body: 'as expected' });
  });

  test('a refused write changes nothing: the endpoint stays active after a read-only pause', async () => {
    expectInsufficientScope(await postern.api('POST', `/v1/endpoints/${endpointId}/pause`, { key: keyFor['webhooks:read'] }), 'webhooks:write');
    expect((await postern.api('GET', `/v1/endpoints/${endpointId}`, { key: keyFor['webhooks:read'] })).body.status).toBe('active');
  });

  test('a read-only key cannot post events, and nothing is stored', async () => {
    const before = (await postern.api('GET', `/v1/endpoints/${endpointId}/deliveries?limit=100`, { key: orgA.apiKey })).body.data.length;
    expectInsufficientScope(await postern.api('POST', '/v1/events', { key: keyFor['webhooks:read'], body: { type: 'invoice.paid', data: {} } }), 'events:write');
    const after = (await postern.api('GET', `/v1/endpoints/${endpointId}/deliveries?limit=100`, { key: orgA.apiKey })).body.data.length;
    expect(after).toBe(before);
  });
});

describe('GET /v1/me', () => {
  test('names the org and the scopes of each key, whatever they are', async () => {
    for (const scope of ALL_SCOPES) {
      const me = await postern.api('GET', '/v1/me', { key: keyFor[scope] });
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({ orgId: orgA.id, name: `only ${scope}`, scopes: [scope], prefix: keyFor[scope].slice(3, 11) });
    }
  });

  test('the key made by POST /v1/orgs holds every scope', async () => {
    const me = await postern.api('GET', '/v1/me', { key: orgA.apiKey });
    expect(me.body).toMatchObject({ orgId: orgA.id, scopes: ALL_SCOPES, prefix: orgA.apiKey.slice(3, 11) });
    expect(me.body.keyId).toMatch(/^key_/);
  });

  test('without a key → 401', async () => {
    expect((await postern.api('GET', '/v1/me')).status).toBe(401);
  });
});

describe('creating and listing keys', () => {
  test('a new key is shown once, in full, and works with exactly its scopes', async () => {
    const r = await postern.api('POST', '/v1/api-keys', { key: orgA.apiKey, body: { name: 'ci', scopes: ['webhooks:read', 'events:write'] } });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: 'ci', scopes: ['events:write', 'webhooks:read'], revokedAt: null });
    expect(r.body.apiKey).toMatch(/^pk_[A-Za-z0-9_-]{43}$/);
    expect(r.body.prefix).toBe(r.body.apiKey.slice(3, 11));
    expect((await postern.api('GET', '/v1/endpoints', { key: r.body.apiKey })).status).toBe(200);
    expect((await postern.api('POST', '/v1/events', { key: r.body.apiKey, body: { type: 'invoice.paid', data: {} } })).status).toBe(202);
    expectInsufficientScope(await postern.api('POST', `/v1/endpoints/${endpointId}/pause`, { key: r.body.apiKey }), 'webhooks:write');
  });

  test('the list shows each key by its prefix only: never the key, never its hash', async () => {
    const made = await createKey(orgA.apiKey, 'listed', ['webhooks:read']);
    const list = await postern.api('GET', '/v1/api-keys?limit=100', { key: keyFor['webhooks:read'] });
    expect(list.status).toBe(200);
    const entry = list.body.data.find((k: { id: string }) => k.id === made.id);
    expect(entry).toEqual({ id: made.id, name: 'listed', prefix: made.apiKey.slice(3, 11), scopes: ['webhooks:read'], createdAt: expect.any(String), revokedAt: null });
    const text = JSON.stringify(list.body);
    for (const key of [made.apiKey, orgA.apiKey, ...Object.values(keyFor)]) {
      expect(text).not.toContain(key);
      expect(text).not.toContain(hashApiKey(key));
    }
    expect(list.body.data.map((k: { name: string }) => k.name)).toEqual(expect.arrayContaining(['first key', 'only events:write', 'only webhooks:read', 'only webhooks:write']));
  });

  test('a key grants only scopes it holds itself', async () => {
    expectInsufficientScope(await postern.api('POST', '/v1/api-keys', { key: keyFor['webhooks:write'], body: { name: 'wider', scopes: ['webhooks:read'] } }), 'webhooks:read');
  });

  test.each([
    [{ name: 'x', scopes: [] }, /^scopes: /],
    [{ name: 'x', scopes: ['admin'] }, /^scopes\.0: .*webhooks:read/],
    [{ name: 'x' }, /^scopes: /],
    [{ scopes: ['webhooks:read'] }, /^name: /],
    [{ name: '', scopes: ['webhooks:read'] }, /^name: /],
  ])('%j → 400 naming the field', async (body, message) => {
    const r = await postern.api('POST', '/v1/api-keys', { key: orgA.apiKey, body });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('invalid_request');
    expect(r.body.error.message).toMatch(message);
  });
});

describe('revoking', () => {
  test('a revoked key is refused at once, and the list shows when it was revoked', async () => {
    const made = await createKey(orgA.apiKey, 'soon revoked', ['webhooks:read', 'webhooks:write']);
    expect((await postern.api('GET', '/v1/endpoints', { key: made.apiKey })).status).toBe(200);
    const revoked = await postern.api('DELETE', `/v1/api-keys/${made.id}`, { key: orgA.apiKey });
    expect(revoked.status).toBe(200);
    expect(revoked.body.revokedAt).toEqual(expect.any(String));
    for (const [method, path] of [['GET', '/v1/endpoints'], ['GET', '/v1/me'], ['POST', `/v1/endpoints/${endpointId}/pause`]] as const) {
      const r = await postern.api(method, path, { key: made.apiKey });
      expect({ path, status: r.status, code: r.body.error.code }).toEqual({ path, status: 401, code: 'unauthorized' });
    }
    const again = await postern.api('DELETE', `/v1/api-keys/${made.id}`, { key: orgA.apiKey });
    expect(again.body.revokedAt).toBe(revoked.body.revokedAt);
    const listed = (await postern.api('GET', '/v1/api-keys?limit=100', { key: orgA.apiKey })).body.data.find((k: { id: string }) => k.id === made.id);
    expect(listed.revokedAt).toBe(revoked.body.revokedAt);
  });

  test('a key can revoke itself; its next call is refused', async () => {
    const made = await createKey(orgA.apiKey, 'self', ['webhooks:read', 'webhooks:write']);
    expect((await postern.api('DELETE', `/v1/api-keys/${made.id}`, { key: made.apiKey })).status).toBe(200);
    expect((await postern.api('GET', '/v1/me', { key: made.apiKey })).status).toBe(401);
  });

  test('a key made before scopes keeps every scope, is listed after its first use, and can be revoked', async () => {
    // As keys were stored before issue 7: only the org-id lookup, no record.
    const now = Date.now();
    const org = { id: createIdFactory()('org', now), name: 'old', status: 'active' as const, createdAt: now };
    const oldKey = 'pk_oldstyleKEYbeforeScopes0123456789abcdefghijk';
    await postern.store.orgs.create(org, hashApiKey(oldKey));
    const me = await postern.api('GET', '/v1/me', { key: oldKey });
    expect(me.body).toMatchObject({ orgId: org.id, scopes: ALL_SCOPES, prefix: 'oldstyle' });
    expect((await postern.api('POST', '/v1/endpoints', { key: oldKey, body: { url: DEAD_URL } })).status).toBe(201);
    const list = await postern.api('GET', '/v1/api-keys', { key: oldKey });
    expect(list.body.data).toEqual([expect.objectContaining({ id: me.body.keyId, prefix: 'oldstyle', scopes: ALL_SCOPES })]);
    expect((await postern.api('DELETE', `/v1/api-keys/${me.body.keyId}`, { key: oldKey })).status).toBe(200);
    expect((await postern.api('GET', '/v1/me', { key: oldKey })).status).toBe(401);
  });
});

describe("another org's ids answer 404 to a key that holds the scope", () => {
  test.each([
    ['GET', '/v1/endpoints/{endpoint}', 'endpoint'],
    ['GET', '/v1/endpoints/{endpoint}/timeline', 'endpoint'],
    ['POST', '/v1/endpoints/{endpoint}/pause', 'endpoint'],
    ['POST', '/v1/endpoints/{endpoint}/rotate-secret', 'endpoint'],
    ['GET', '/v1/deliveries/{delivery}', 'delivery'],
    ['POST', '/v1/deliveries/{delivery}/redeliver', 'delivery'],
    ['GET', '/v1/events/{event}', 'event'],
  ])('%s %s', async (method, template, what) => {
    const path = template.replace('{endpoint}', endpointId).replace('{delivery}', failedDeliveryId).replace('{event}', eventId);
    const r = await postern.api(method, path, { key: orgB.apiKey });
    expect({ status: r.status, code: r.body.error.code, message: r.body.error.message }).toEqual({ status: 404, code: 'not_found', message: `${what} not found` });
  });

  test("org B can neither see nor revoke org A's keys", async () => {
    const a = await createKey(orgA.apiKey, 'of org A', ['webhooks:read']);
    const r = await postern.api('DELETE', `/v1/api-keys/${a.id}`, { key: orgB.apiKey });
    expect({ status: r.status, message: r.body.error.message }).toEqual({ status: 404, message: 'API key not found' });
    expect((await postern.api('GET', '/v1/me', { key: a.apiKey })).status).toBe(200);
    const listB = await postern.api('GET', '/v1/api-keys', { key: orgB.apiKey });
    expect(listB.body.data.map((k: { name: string }) => k.name)).toEqual(['first key']);
  });
});

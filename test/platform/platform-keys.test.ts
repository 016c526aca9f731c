import { Writable } from 'node:stream';
import { pino } from 'pino';
import { loggerOptions } from '@postern/shared';
import { startPostern, TEST_ADMIN_TOKEN, type TestPostern } from '../support/postern.js';

/**
 * Issue 15, item 3: a platform key, made with the admin token, acts for any org named in
 * `Postern-Org`, within its scopes; everything it does is confined to that org and logged with
 * the org and the key's id; a revoked key is refused at once.
 */

let postern: TestPostern;
const lines: string[] = [];

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  postern = await startPostern({ sender: false, logger: pino(loggerOptions('postern-test', 'info'), sink) });
});

afterAll(async () => {
  await postern.close();
});

async function makePlatformKey(scopes: string[], name = 'platform'): Promise<{ id: string; key: string }> {
  const r = await postern.api('POST', '/v1/platform-keys', { key: TEST_ADMIN_TOKEN, body: { name, scopes } });
  expect(r.status).toBe(201);
  return { id: r.body.id, key: r.body.key };
}

const as = (key: string, orgId?: string): { key: string; headers: Record<string, string> } => ({ key, headers: orgId === undefined ? {} : { 'postern-org': orgId } });

test('only the admin token makes, lists and revokes platform keys; the key is shown once', async () => {
  const { apiKey } = await postern.createOrg('owner');
  for (const key of [undefined, apiKey, 'not-the-admin-token']) {
    const r = await postern.api('POST', '/v1/platform-keys', { key, body: { name: 'x', scopes: ['webhooks:read'] } });
    expect({ status: r.status, code: r.body.error.code }).toEqual({ status: 401, code: 'unauthorized' });
  }
  const made = await postern.api('POST', '/v1/platform-keys', { key: TEST_ADMIN_TOKEN, body: { name: 'saas', scopes: ['webhooks:read', 'events:write'] } });
  expect(made.status).toBe(201);
  expect(made.body).toMatchObject({ id: expect.stringMatching(/^pfk_/), name: 'saas', scopes: ['events:write', 'webhooks:read'], revokedAt: null });
  expect(made.body.key).toMatch(/^ppk_[A-Za-z0-9_-]{43}$/);
  expect(made.body.prefix).toBe(made.body.key.slice(4, 12));

  const listed = await postern.api('GET', '/v1/platform-keys', { key: TEST_ADMIN_TOKEN });
  expect(listed.status).toBe(200);
  const row = listed.body.data.find((k: any) => k.id === made.body.id);
  expect(row).toEqual({ id: made.body.id, name: 'saas', prefix: made.body.prefix, scopes: ['events:write', 'webhooks:read'], createdAt: made.body.createdAt, revokedAt: null });
  expect(JSON.stringify(listed.body)).not.toContain(made.body.key);

  const bad = await postern.api('POST', '/v1/platform-keys', { key: TEST_ADMIN_TOKEN, body: { name: 'x', scopes: ['everything'] } });
  expect(bad.status).toBe(400);
  expect(bad.body.error.message).toMatch(/^scopes\.0: /);
  expect((await postern.api('DELETE', '/v1/platform-keys/pfk_nope', { key: TEST_ADMIN_TOKEN })).status).toBe(404);
});

test('acts for the org it names, and only within it: another org’s ids answer 404', async () => {
  const a = await postern.createOrg('tenant-a');
  const b = await postern.createOrg('tenant-b');
  const { id: keyId, key } = await makePlatformKey(['webhooks:read', 'webhooks:write', 'events:write']);

  const me = await postern.api('GET', '/v1/me', as(key, a.id));
  expect(me.body).toEqual({ orgId: a.id, keyId, name: 'platform', prefix: key.slice(4, 12), scopes: ['events:write', 'webhooks:read', 'webhooks:write'], credential: 'platform_key', portalSession: null });

  const inA = await postern.api('POST', '/v1/endpoints', { ...as(key, a.id), body: { url: 'http://127.0.0.1:9/a' } });
  expect(inA.status).toBe(201);
  const inB = await postern.createEndpoint(b.apiKey, { url: 'http://127.0.0.1:9/b' });

  // The endpoint made with the platform key is org A's: A's own API key sees it, B's does not.
  expect((await postern.api('GET', `/v1/endpoints/${inA.body.id}`, { key: a.apiKey })).status).toBe(200);
  expect((await postern.api('GET', `/v1/endpoints/${inA.body.id}`, { key: b.apiKey })).status).toBe(404);

  // Acting for A, B's endpoint does not exist, whatever the action.
  for (const [method, path] of [
    ['GET', `/v1/endpoints/${inB.id}`],
    ['PATCH', `/v1/endpoints/${inB.id}`],
    ['DELETE', `/v1/endpoints/${inB.id}`],
    ['POST', `/v1/endpoints/${inB.id}/pause`],
    ['GET', `/v1/endpoints/${inB.id}/deliveries`],
  ] as const) {
    const r = await postern.api(method, path, { ...as(key, a.id), body: method === 'PATCH' ? { description: 'x' } : undefined });
    expect({ method, path, status: r.status, code: r.body.error.code }).toEqual({ method, path, status: 404, code: 'not_found' });
  }
  const listA = await postern.api('GET', '/v1/endpoints', as(key, a.id));
  expect(listA.body.data.map((e: any) => e.id)).toEqual([inA.body.id]);

  // An event sent for B reaches B's endpoint only, and A cannot read it.
  const event = await postern.api('POST', '/v1/events', { ...as(key, b.id), body: { type: 'invoice.paid', data: { n: 1 } } });
  expect(event.status).toBe(202);
  expect(event.body.deliveries.map((d: any) => d.endpointId)).toEqual([inB.id]);
  expect((await postern.api('GET', `/v1/events/${event.body.id}`, as(key, a.id))).status).toBe(404);
  expect((await postern.api('GET', `/v1/deliveries/${event.body.deliveries[0].id}`, as(key, a.id))).status).toBe(404);
  expect((await postern.api('GET', `/v1/deliveries/${event.body.deliveries[0].id}`, as(key, b.id))).status).toBe(200);

  // Each request is logged with the org it acted for and the platform key's id.
  const logged = lines.map((l) => JSON.parse(l) as Record<string, any>).filter((e) => e.req?.url === '/v1/events' && e.platformKeyId === keyId);
  expect(logged).toEqual([expect.objectContaining({ orgId: b.id, platformKeyId: keyId, res: { statusCode: 202 } })]);
});

test('a missing, malformed or unknown org is a clear 400 or 404; a suspended org 403', async () => {
  const { key } = await makePlatformKey(['webhooks:read']);
  const missing = await postern.api('GET', '/v1/endpoints', as(key));
  expect({ status: missing.status, code: missing.body.error.code }).toEqual({ status: 400, code: 'org_required' });
  expect(missing.body.error.message).toContain('Postern-Org');
  const malformed = await postern.api('GET', '/v1/endpoints', as(key, 'acme'));
  expect({ status: malformed.status, code: malformed.body.error.code }).toEqual({ status: 400, code: 'invalid_request' });
  const unknown = await postern.api('GET', '/v1/endpoints', as(key, 'org_01KZZZZZZZZZZZZZZZZZZZZZZZ'));
  expect({ status: unknown.status, code: unknown.body.error.code }).toEqual({ status: 404, code: 'org_not_found' });

  const org = await postern.createOrg('to-suspend');
  await postern.api('POST', `/v1/orgs/${org.id}/suspend`, { key: TEST_ADMIN_TOKEN });
  const suspended = await postern.api('GET', '/v1/endpoints', as(key, org.id));
  expect({ status: suspended.status, code: suspended.body.error.code }).toEqual({ status: 403, code: 'org_suspended' });
  // An API key acts for its own org only: naming another is refused, naming its own is fine.
  const own = await postern.createOrg('own');
  const mismatch = await postern.api('GET', '/v1/endpoints', { key: own.apiKey, headers: { 'postern-org': org.id } });
  expect({ status: mismatch.status, code: mismatch.body.error.code }).toEqual({ status: 400, code: 'invalid_request' });
  expect(mismatch.body.error.message).toContain('Postern-Org');
  expect((await postern.api('GET', '/v1/endpoints', { key: own.apiKey, headers: { 'postern-org': own.id } })).status).toBe(200);
  // An unknown key is refused before the org is even looked at.
  const forged = await postern.api('GET', '/v1/endpoints', as('ppk_forged', org.id));
  expect({ status: forged.status, code: forged.body.error.code }).toEqual({ status: 401, code: 'unauthorized' });
});

test('scopes are enforced as for an API key, and a key cannot grant more than it holds', async () => {
  const org = await postern.createOrg('scoped');
  const { key } = await makePlatformKey(['webhooks:read']);
  expect((await postern.api('GET', '/v1/endpoints', as(key, org.id))).status).toBe(200);
  const write = await postern.api('POST', '/v1/endpoints', { ...as(key, org.id), body: { url: 'http://127.0.0.1:9/x' } });
  expect({ status: write.status, code: write.body.error.code }).toEqual({ status: 403, code: 'insufficient_scope' });
  expect(write.body.error.message).toBe('this platform key lacks the webhooks:write scope');
  const event = await postern.api('POST', '/v1/events', { ...as(key, org.id), body: { type: 'a.b', data: 1 } });
  expect(event.status).toBe(403);

  const { key: writer } = await makePlatformKey(['webhooks:write']);
  const grant = await postern.api('POST', '/v1/api-keys', { ...as(writer, org.id), body: { name: 'wider', scopes: ['webhooks:write', 'events:write'] } });
  expect({ status: grant.status, code: grant.body.error.code }).toEqual({ status: 403, code: 'insufficient_scope' });
  const narrow = await postern.api('POST', '/v1/api-keys', { ...as(writer, org.id), body: { name: 'narrow', scopes: ['webhooks:write'] } });
  expect(narrow.status).toBe(201);
  expect((await postern.api('GET', '/v1/me', { key: narrow.body.apiKey })).body.orgId).toBe(org.id);
});

test('a revoked platform key is refused by the very next request, for every org', async () => {
  const org = await postern.createOrg('revoked');
  const { id, key } = await makePlatformKey(['webhooks:read']);
  expect((await postern.api('GET', '/v1/endpoints', as(key, org.id))).status).toBe(200);
  const revoked = await postern.api('DELETE', `/v1/platform-keys/${id}`, { key: TEST_ADMIN_TOKEN });
  expect(revoked.status).toBe(200);
  expect(revoked.body.revokedAt).toEqual(expect.any(String));
  const after = await postern.api('GET', '/v1/endpoints', as(key, org.id));
  expect({ status: after.status, code: after.body.error.code }).toEqual({ status: 401, code: 'unauthorized' });
  // Revoking again keeps the first time.
  expect((await postern.api('DELETE', `/v1/platform-keys/${id}`, { key: TEST_ADMIN_TOKEN })).body.revokedAt).toBe(revoked.body.revokedAt);
});

import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { Tracer } from '@postern/telemetry';
import { AUDIT_RETENTION_MS, buildAuditEntry } from '@postern/shared';
import { fastPolicy, startPostern, TEST_ADMIN_TOKEN, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * The audit log: every change made through the API appends {id, at, actor, action, target,
 * changes, requestId} to the org's log (the instance's, for platform keys), readable at
 * GET /v1/audit-log with filters and cursor paging, logged as a pino line with a stable `audit`
 * field and, with tracing on, as a span. Changes are field names, never values.
 */

const lines: Record<string, any>[] = [];
const logStream = new Writable({
  write(chunk, _enc, done) {
    for (const line of String(chunk).split('\n')) if (line.trim()) lines.push(JSON.parse(line));
    done();
  },
});
const spans: { name: string; attributes: Record<string, unknown> }[] = [];
/** Records the spans ingest starts; enough of a Tracer for the routes this file calls. */
const tracer = {
  startSpan(name: string, opts: { attributes?: Record<string, unknown> } = {}) {
    spans.push({ name, attributes: opts.attributes ?? {} });
    return { end() {}, setAttributes() {}, setStatus() {}, recordException() {}, spanContext: () => ({ traceId: '1'.repeat(32), spanId: '2'.repeat(16), traceFlags: 1 }) };
  },
} as unknown as Tracer;

let postern: TestPostern;
let receiver: TestReceiver;
let orgId: string;
let apiKey: string;
let keyId: string;

beforeAll(async () => {
  postern = await startPostern({ logger: pino({ level: 'info' }, logStream), tracers: { ingest: tracer } });
  receiver = await startReceiver(() => 200);
  const org = await postern.api('POST', '/v1/orgs', { key: TEST_ADMIN_TOKEN, body: { name: 'audited' } });
  orgId = org.body.id;
  apiKey = org.body.apiKey;
  keyId = (await postern.api('GET', '/v1/me', { key: apiKey })).body.keyId;
});

afterAll(async () => {
  await postern.close();
  await receiver.close();
});

const log = async (query = '', key = apiKey) => {
  const r = await postern.api('GET', `/v1/audit-log${query}`, { key });
  expect(r.status).toBe(200);
  return r.body as { data: any[]; nextCursor: string | null };
};

test('each endpoint change is one entry naming the fields changed, never a secret value, with the request id', async () => {
  const created = await postern.api('POST', '/v1/endpoints', { key: apiKey, body: { url: receiver.url, eventTypes: ['audit.one'] }, headers: { 'x-request-id': 'req-create-1' } });
  expect(created.status).toBe(201);
  const id = created.body.id as string;
  const patched = await postern.api('PATCH', `/v1/endpoints/${id}`, {
    key: apiKey,
    body: { description: 'billing', policy: { preset: 'standard', maxAttempts: 3 }, auth: { type: 'bearer', token: 'sekrit-token-value-123' } },
  });
  expect(patched.status).toBe(200);
  for (const action of ['pause', 'resume', 'rotate-secret']) expect((await postern.api('POST', `/v1/endpoints/${id}/${action}`, { key: apiKey })).status).toBe(200);
  expect((await postern.api('DELETE', `/v1/endpoints/${id}`, { key: apiKey })).status).toBe(204);

  const page = await log(`?target=${id}`);
  expect(page.data.map((e) => e.action)).toEqual(['endpoint.deleted', 'endpoint.secret_rotated', 'endpoint.resumed', 'endpoint.paused', 'endpoint.updated', 'endpoint.created']);
  const [deleted, rotated, resumed, paused, updated, createdEntry] = page.data;
  expect(createdEntry).toMatchObject({ actor: { kind: 'api_key', id: keyId, name: 'first key' }, target: { type: 'endpoint', id }, requestId: 'req-create-1' });
  expect(createdEntry.id).toMatch(/^aud_/);
  expect(createdEntry.changes).toEqual(expect.arrayContaining(['url', 'eventTypes', 'signingSecrets']));
  expect(updated.changes).toEqual(expect.arrayContaining(['auth', 'description', 'policy.maxAttempts']));
  expect(updated.changes).not.toContain('url');
  expect(paused.changes).toEqual(['status']);
  expect(resumed.changes).toEqual(['status']);
  expect(rotated.changes).toEqual(['signingSecrets']);
  expect(deleted.changes).toEqual([]);
  expect(Date.parse(createdEntry.at)).toBeLessThanOrEqual(Date.parse(updated.at));
  const everything = JSON.stringify(page) + JSON.stringify(lines) + JSON.stringify(spans);
  expect(everything).not.toContain('sekrit-token-value-123');
  expect(everything).not.toContain(created.body.secret);

  // The same entry as a log line with a stable `audit` field, and as a span.
  const line = lines.find((l) => l.msg === 'audit' && l.audit?.id === updated.id);
  expect(line).toMatchObject({ orgId, audit: { action: 'endpoint.updated', actor: { kind: 'api_key', id: keyId }, target: { type: 'endpoint', id }, changes: updated.changes, requestId: updated.requestId } });
  expect(line!.audit.at).toBe(Date.parse(updated.at));
  expect(spans.find((s) => s.attributes['postern.audit.id'] === updated.id)).toMatchObject({ name: 'audit endpoint.updated', attributes: { 'postern.audit.action': 'endpoint.updated', 'postern.audit.target.id': id, 'postern.org_id': orgId } });
});

test('keys, org settings, portal sessions and platform keys are recorded with their actor', async () => {
  const key = await postern.api('POST', '/v1/api-keys', { key: apiKey, body: { name: 'ci', scopes: ['webhooks:read'] } });
  expect(key.status).toBe(201);
  expect((await postern.api('DELETE', `/v1/api-keys/${key.body.id}`, { key: apiKey })).status).toBe(200);
  expect((await postern.api('PATCH', '/v1/org', { key: apiKey, body: { disabledEventTypes: ['noisy.*'] } })).status).toBe(200);

  const session = await postern.api('POST', `/v1/orgs/${orgId}/portal-sessions`, { key: TEST_ADMIN_TOKEN, body: { ttlSeconds: 600, scopes: ['webhooks:read', 'webhooks:write'] } });
  expect(session.status).toBe(201);
  // A change made through the portal is the session's.
  const ep = await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: ['audit.portal'] });
  expect((await postern.api('POST', `/v1/endpoints/${ep.id}/pause`, { key: session.body.token })).status).toBe(200);
  expect((await postern.api('DELETE', `/v1/orgs/${orgId}/portal-sessions/${session.body.id}`, { key: TEST_ADMIN_TOKEN })).status).toBe(200);

  const platformKey = await postern.api('POST', '/v1/platform-keys', { key: TEST_ADMIN_TOKEN, body: { name: 'saas', scopes: ['webhooks:read', 'webhooks:write'] } });
  expect(platformKey.status).toBe(201);
  expect((await postern.api('POST', `/v1/endpoints/${ep.id}/resume`, { key: platformKey.body.key, headers: { 'postern-org': orgId } })).status).toBe(200);
  expect((await postern.api('DELETE', `/v1/platform-keys/${platformKey.body.id}`, { key: TEST_ADMIN_TOKEN })).status).toBe(200);

  const all = (await log('?limit=100')).data;
  const by = (action: string) => all.find((e) => e.action === action);
  expect(by('api_key.created')).toMatchObject({ actor: { kind: 'api_key', id: keyId }, target: { type: 'api_key', id: key.body.id }, changes: ['name', 'scopes'] });
  expect(by('api_key.revoked')).toMatchObject({ target: { id: key.body.id }, changes: ['revokedAt'] });
  expect(by('org.settings_updated')).toMatchObject({ target: { type: 'org', id: orgId }, changes: ['disabledEventTypes'] });
  expect(by('org.created')).toMatchObject({ actor: { kind: 'admin', id: 'admin' }, target: { type: 'org', id: orgId } });
  expect(by('portal_session.created')).toMatchObject({ actor: { kind: 'admin' }, target: { type: 'portal_session', id: session.body.id } });
  expect(by('portal_session.revoked')).toMatchObject({ target: { id: session.body.id } });
  expect(by('endpoint.paused')).toMatchObject({ actor: { kind: 'portal_session', id: session.body.id }, target: { id: ep.id } });
  expect(by('endpoint.resumed')).toMatchObject({ actor: { kind: 'platform_key', id: platformKey.body.id, name: 'saas' }, target: { id: ep.id } });
  expect(JSON.stringify(all)).not.toContain(session.body.token);

  // Platform keys belong to no org: the instance's own log, with the admin token.
  const platform = await postern.api('GET', '/v1/platform-audit-log', { key: TEST_ADMIN_TOKEN });
  expect(platform.status).toBe(200);
  expect(platform.body.data.filter((e: any) => e.target.id === platformKey.body.id).map((e: any) => e.action)).toEqual(['platform_key.revoked', 'platform_key.created']);
  expect((await postern.api('GET', '/v1/platform-audit-log', { key: apiKey })).status).toBe(401);
});

test('redeliver, bulk redelivery, recover and send-now are recorded', async () => {
  let failing = true;
  const flaky = await startReceiver(() => (failing ? 500 : 200));
  try {
    const ep = await postern.createEndpoint(apiKey, { url: flaky.url, eventTypes: ['audit.actions'], policy: fastPolicy(3, 60_000) });
    const sent = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'audit.actions', data: { n: 1 } } });
    const deliveryId = sent.body.deliveries[0].id as string;
    await waitUntil('the delivery to wait for its retry', async () => (await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey })).body.waitingForNextAttempt === true);
    failing = false;
    expect((await postern.api('POST', `/v1/deliveries/${deliveryId}/send-now`, { key: apiKey })).status).toBe(202);
    await waitUntil('the delivery to succeed', async () => (await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey })).body.status === 'succeeded');
    expect((await postern.api('POST', `/v1/deliveries/${deliveryId}/redeliver`, { key: apiKey })).status).toBe(202);
    expect((await postern.api('POST', `/v1/endpoints/${ep.id}/redeliver-failed`, { key: apiKey })).status).toBe(202);
    expect((await postern.api('POST', `/v1/endpoints/${ep.id}/recover`, { key: apiKey, body: { since: new Date(0).toISOString() } })).status).toBe(202);

    expect((await log(`?target=${deliveryId}`)).data.map((e) => e.action)).toEqual(['delivery.redelivered', 'delivery.sent_now']);
    expect((await log(`?target=${ep.id}&action=endpoint.recovered`)).data).toHaveLength(1);
    expect((await log(`?target=${ep.id}&action=endpoint.failed_redelivered`)).data).toHaveLength(1);
  } finally {
    await flaky.close();
  }
});

test('filters by action, actor and time; pages with a cursor; refuses bad queries with 400 naming the parameter', async () => {
  const all: any[] = [];
  let cursor: string | null = null;
  do {
    const page = await log(`?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
    expect(page.data.length).toBeLessThanOrEqual(3);
    all.push(...page.data);
    cursor = page.nextCursor;
  } while (cursor);
  const everything = (await log('?limit=100')).data;
  expect(all.map((e) => e.id)).toEqual(everything.map((e) => e.id));
  expect(new Set(all.map((e) => e.id)).size).toBe(all.length);

  const paused = await log('?action=endpoint.paused');
  expect(paused.data.length).toBeGreaterThan(0);
  expect(paused.data.every((e) => e.action === 'endpoint.paused')).toBe(true);
  expect((await log('?actor=admin')).data.every((e) => e.actor.kind === 'admin')).toBe(true);
  const middle = everything[Math.floor(everything.length / 2)];
  const since = (await log(`?since=${encodeURIComponent(middle.at)}&limit=100`)).data;
  expect(since.every((e) => Date.parse(e.at) >= Date.parse(middle.at))).toBe(true);
  expect(since.map((e) => e.id)).toContain(middle.id);
  const until = (await log(`?until=${encodeURIComponent(middle.at)}&limit=100`)).data;
  expect(until.every((e) => Date.parse(e.at) <= Date.parse(middle.at))).toBe(true);
  expect(since.length + until.length).toBeGreaterThanOrEqual(everything.length);

  const bad = async (query: string, message: RegExp) => {
    const r = await postern.api('GET', `/v1/audit-log${query}`, { key: apiKey });
    expect(r.status).toBe(400);
    expect(r.body.error.code).toBe('invalid_request');
    expect(r.body.error.message).toMatch(message);
  };
  await bad('?action=endpoint.exploded', /^action: action must be one of/);
  await bad('?cursor=aud_123', /^cursor: /);
  await bad('?limit=0', /^limit: /);
  await bad('?limit=1e1', /^limit: /);
  await bad('?since=yesterday', /^since: /);
  await bad('?since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z', /^since: since must not be after until/);
  await bad('?colour=blue', /unknown parameter "colour"/);
});

test("a portal session cannot read the org's audit log; another org sees none of it", async () => {
  const session = await postern.api('POST', `/v1/orgs/${orgId}/portal-sessions`, { key: TEST_ADMIN_TOKEN, body: { ttlSeconds: 600 } });
  const r = await postern.api('GET', '/v1/audit-log', { key: session.body.token });
  expect(r.status).toBe(403);
  expect(r.body.error.code).toBe('api_key_required');
  const other = await postern.createOrg('other');
  const theirs = (await log('?limit=100', other.apiKey)).data;
  expect(theirs.every((e) => e.target.id === theirs[0]?.target.id)).toBe(true);
  expect(theirs.map((e) => e.action)).toEqual(['org.created']);
});

test('kept 90 days by native expiry: the stream expires 90 days after its last entry, older entries are trimmed and never listed', async () => {
  const key = postern.store.keys.orgAuditLog(orgId);
  const ttl = await postern.redis.pttl(key);
  expect(ttl).toBeGreaterThan(AUDIT_RETENTION_MS - 60_000);
  expect(ttl).toBeLessThanOrEqual(AUDIT_RETENTION_MS);

  // An org whose log started 91 days ago (written straight to the store: no API call writes the past).
  const oldOrg = 'org_01KB2Z3R8Q5T7V9X1Y3Z5A7C9E';
  const now = Date.now();
  const dayMs = 24 * 3600 * 1000;
  const actor = { kind: 'admin', id: 'admin', name: 'admin token' } as const;
  const entry = (atMs: number, n: number) => buildAuditEntry({ id: `aud_${n}`, atMs, actor, action: 'org.suspended', target: { type: 'org', id: oldOrg }, requestId: `r${n}` });
  for (let n = 0; n < 300; n++) await postern.store.auditLog.append(oldOrg, entry(now - 91 * dayMs + n, n), now - 91 * dayMs + n);
  await postern.store.auditLog.append(oldOrg, entry(now, 999), now);
  const listed = await postern.store.auditLog.list(oldOrg, { limit: 100 }, now);
  expect(listed.items.map((e) => e.id)).toEqual(['aud_999']);
  expect(listed.nextCursor).toBeNull();
  // MINID trimming drops whole stream nodes (100 entries each by default): most old entries are gone from Redis.
  expect(await postern.redis.xlen(postern.store.keys.orgAuditLog(oldOrg))).toBeLessThan(150);
});

test('setting, changing, switching off and removing a transformation are recorded as changes of `transformation`, the code never shown', async () => {
  const created = await postern.api('POST', '/v1/endpoints', { key: apiKey, body: { url: receiver.url, eventTypes: ['audit.t'] } });
  const id = created.body.id as string;
  const code = (n: number) => `function handler(w) { w.payload = { marker: "code-${n}" }; return w; }`;
  for (const transformation of [{ code: code(1), enabled: true }, { code: code(2), enabled: true }, { code: code(2), enabled: false }, null]) {
    const r = await postern.api('PATCH', `/v1/endpoints/${id}`, { key: apiKey, body: { transformation } });
    expect(r.status).toBe(200);
  }
  const entries = (await log(`?target=${id}&action=endpoint.updated`)).data;
  expect(entries).toHaveLength(4);
  for (const e of entries) expect(e.changes).toEqual(['transformation']);
  expect(JSON.stringify(entries)).not.toContain('code-1');
});

import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { createSecretBox, type SecretKeyring } from '@postern/shared';
import { resealSecrets, type RedisClient } from '@postern/store';
import { fastPolicy, startPostern, testSecretKeyring, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';
import { startTokenServer } from '../support/oauth-server.js';

/**
 * Secrets at rest (README): every secret Postern stores — endpoint signing secrets (HMAC and
 * Ed25519, rotated-out ones included), request settings' secrets (secret headers, auth
 * credentials, cached OAuth tokens) and the org's pre-attempt check secret — is sealed in Redis;
 * a key rotation with `secrets:reencrypt` keeps every endpoint delivering; legacy plain values are
 * read and sealed by the re-encrypt; the janitor deletes signing secrets past their grace.
 */

const started: TestPostern[] = [];
let receiver: TestReceiver;
let check: TestReceiver;

beforeAll(async () => {
  receiver = await startReceiver(() => 200);
  check = await startReceiver(() => 200, '/check');
  check.setBehaviour((_r, _n, res) => {
    res.setHeader('content-type', 'application/json');
    res.end('{"action":"send"}');
    return 'handled';
  });
});
afterAll(async () => {
  for (const p of started.reverse()) await p.close();
  await receiver.close();
  await check.close();
});

async function start(options: Parameters<typeof startPostern>[0] = {}): Promise<TestPostern> {
  const p = await startPostern(options);
  started.push(p);
  return p;
}

/** Every value stored under the prefix (and its queues), whatever the key's type. */
async function everyStoredValue(redis: RedisClient, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for (const match of [`${prefix}:*`, `{${prefix}:q*`]) {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        const type = await redis.type(key);
        if (type === 'string') out.push((await redis.get(key)) ?? '');
        else if (type === 'hash') out.push(...Object.entries(await redis.hgetall(key)).flat());
        else if (type === 'list') out.push(...(await redis.lrange(key, 0, -1)));
        else if (type === 'set') out.push(...(await redis.smembers(key)));
        else if (type === 'zset') out.push(...(await redis.zrange(key, 0, -1)));
        else if (type === 'stream') out.push(...(await redis.xrange(key, '-', '+')).flatMap(([, fields]) => fields));
      }
    } while (cursor !== '0');
  }
  return out;
}

async function expectNothingInClear(p: TestPostern, secrets: string[]): Promise<void> {
  const values = await everyStoredValue(p.redis, p.prefix);
  expect(values.length).toBeGreaterThan(20);
  for (const value of values) {
    expect(value).not.toMatch(/whsec_|whsk_/);
    for (const secret of secrets) expect(value).not.toContain(secret.replace(/^wh(sec|sk)_/, ''));
  }
}

/** Posts one event for the org and waits until its every delivery succeeded; returns the event id. */
async function deliverOne(p: TestPostern, apiKey: string, type = 'invoice.paid'): Promise<string> {
  const r = await p.api('POST', '/v1/events', { key: apiKey, body: { type, data: { n: randomBytes(4).toString('hex') } } });
  expect(r.status).toBe(202);
  const ids = (r.body.deliveries as { id: string }[]).map((d) => d.id);
  await waitUntil('every delivery succeeded', async () => {
    for (const id of ids) if ((await p.api('GET', `/v1/deliveries/${id}`, { key: apiKey })).body.status !== 'succeeded') return false;
    return true;
  }, 15_000);
  return r.body.id as string;
}

/** The requests of one event to the paths given, each verified with that endpoint's secret (standardwebhooks); returns how many. */
function verifyAll(eventId: string, secretsByPath: Map<string, string>): number {
  const requests = receiver.requests.filter((r) => r.headers['webhook-id'] === eventId && secretsByPath.has(r.path));
  for (const r of requests) {
    const secret = secretsByPath.get(r.path)!;
    expect(() => new Webhook(secret).verify(r.body, r.headers as Record<string, string>)).not.toThrow();
  }
  return requests.length;
}

test('after deliveries, no signing secret, rotated-out secret or check secret is stored in clear', async () => {
  const p = await start();
  const org = await p.createOrg('sealed');
  expect((await p.api('PATCH', '/v1/org', { key: org.apiKey, body: { preAttemptCheckUrl: check.url } })).status).toBe(200);
  const checkSecret = (await p.api('GET', '/v1/org/check-secret', { key: org.apiKey })).body.secret as string;
  expect(checkSecret).toMatch(/^whsec_/);
  const policy = { ...fastPolicy(2), preAttemptCheck: 'every' };
  const hmac = await p.createEndpoint(org.apiKey, { url: `${receiver.url}?e=hmac`, policy });
  const ed = await p.createEndpoint(org.apiKey, { url: `${receiver.url}?e=ed`, policy, signatureScheme: 'ed25519' });
  expect(ed.secret).toMatch(/^whsk_/);
  const rotated = await p.api('POST', `/v1/endpoints/${hmac.id}/rotate-secret`, { key: org.apiKey });
  expect(rotated.status).toBe(200);
  const checksBefore = check.requests.length;
  await deliverOne(p, org.apiKey);
  // The check was asked (signed with its secret) and both endpoints got the event.
  expect(check.requests.length).toBeGreaterThan(checksBefore);
  expect(new Webhook(checkSecret).verify(check.requests.at(-1)!.body, check.requests.at(-1)!.headers as Record<string, string>)).toBeTruthy();

  // The API still shows them: sealing is invisible above the store.
  expect((await p.api('GET', `/v1/endpoints/${hmac.id}/secret`, { key: org.apiKey })).body).toMatchObject({ secret: rotated.body.secret, previous: 1 });
  await expectNothingInClear(p, [hmac.secret, rotated.body.secret, ed.secret, checkSecret]);
  const stored = await p.redis.hget(p.store.keys.endpoint(org.id, hmac.id), 'secrets');
  expect(stored).toMatch(/^sealed:v1:test1:/);
});

test('request settings too: secret header values, auth credentials and cached OAuth tokens are never stored in clear', async () => {
  const p = await start();
  const org = await p.createOrg('sealed-requests');
  const clientSecret = `cs-${randomBytes(12).toString('hex')}`;
  const tokens = await startTokenServer({ clientId: 'postern', clientSecret });
  try {
    const headerValue = `hv-${randomBytes(12).toString('hex')}`;
    const password = `pw-${randomBytes(12).toString('hex')}`;
    const bearer = `bt-${randomBytes(12).toString('hex')}`;
    const policy = fastPolicy(2);
    await p.createEndpoint(org.apiKey, { url: `${receiver.url}?r=basic`, policy, headers: [{ name: 'x-api-key', value: headerValue, secret: true }], auth: { type: 'basic', username: 'postern', password } });
    await p.createEndpoint(org.apiKey, { url: `${receiver.url}?r=bearer`, policy, auth: { type: 'bearer', token: bearer } });
    await p.createEndpoint(org.apiKey, { url: `${receiver.url}?r=oauth`, policy, auth: { type: 'oauth2_client_credentials', tokenUrl: tokens.tokenUrl, clientId: 'postern', clientSecret } });
    const eventId = await deliverOne(p, org.apiKey);
    const sent = receiver.requests.filter((r) => r.headers['webhook-id'] === eventId);
    expect(sent).toHaveLength(3);
    expect(sent.find((r) => r.path.endsWith('r=basic'))!.headers['x-api-key']).toBe(headerValue);
    expect(tokens.issued).toHaveLength(1);
    expect(sent.find((r) => r.path.endsWith('r=oauth'))!.headers.authorization).toBe(`Bearer ${tokens.issued[0]}`);
    await expectNothingInClear(p, [headerValue, password, bearer, clientSecret, tokens.issued[0]!]);
  } finally {
    await tokens.close();
  }
});

test('a key rotation with secrets:reencrypt keeps every endpoint delivering; a second run changes nothing', async () => {
  const k1 = testSecretKeyring().current!;
  const k2 = { id: 'k2', key: randomBytes(32) };
  const a = await start({ secretKeyring: { current: k1, previous: [] } });
  const org = await a.createOrg('rotating');
  const secrets = new Map<string, string>();
  for (const scheme of ['hmac-sha256', 'hmac-sha256', 'ed25519'] as const) {
    const path = `/hook?rot=${secrets.size}`;
    const ep = await a.createEndpoint(org.apiKey, { url: `${receiver.url.replace(/\/hook$/, '')}${path}`, policy: fastPolicy(2), signatureScheme: scheme });
    secrets.set(path, ep.secret);
  }
  expect(verifyAll(await deliverOne(a, org.apiKey), new Map([...secrets].filter(([, s]) => s.startsWith('whsec_'))))).toBe(2);
  await a.stopSender();

  // New key current, the old one still readable: what was sealed with it keeps delivering.
  const both: SecretKeyring = { current: k2, previous: [k1] };
  const b = await start({ prefix: a.prefix, secretKeyring: both });
  const hmacOnly = new Map([...secrets].filter(([, s]) => s.startsWith('whsec_')));
  expect(verifyAll(await deliverOne(b, org.apiKey), hmacOnly)).toBe(2);
  const first = await resealSecrets(b.redis, b.store.keys, createSecretBox(both));
  // The three endpoints' secrets, all moved from k1.
  expect(first).toMatchObject({ resealed: 3, sealedFromPlain: 0, unreadable: 0, contended: 0 });
  const again = await resealSecrets(b.redis, b.store.keys, createSecretBox(both));
  expect(again).toMatchObject({ resealed: 0, sealedFromPlain: 0, alreadyCurrent: first.values, unreadable: 0 });
  await b.stopSender();

  // The old key dropped: everything opens with k2 alone.
  const c = await start({ prefix: a.prefix, secretKeyring: { current: k2, previous: [] } });
  const eventId = await deliverOne(c, org.apiKey);
  expect(verifyAll(eventId, hmacOnly)).toBe(2);
  expect(receiver.requests.filter((r) => r.headers['webhook-id'] === eventId)).toHaveLength(3);
  for (const value of await everyStoredValue(c.redis, c.prefix)) expect(value).not.toMatch(/sealed:v1:test1:|whsec_|whsk_/);
});

test('plain-text secrets written before sealing keep working, and the re-encrypt seals them', async () => {
  const p = await start();
  const org = await p.createOrg('legacy');
  const ep = await p.createEndpoint(org.apiKey, { url: `${receiver.url}?e=legacy`, policy: fastPolicy(2) });
  expect((await p.api('PATCH', '/v1/org', { key: org.apiKey, body: { preAttemptCheckUrl: check.url } })).status).toBe(200);
  const checkSecret = (await p.api('GET', '/v1/org/check-secret', { key: org.apiKey })).body.secret as string;
  // As an older Postern wrote them: plain text.
  const endpointKey = p.store.keys.endpoint(org.id, ep.id);
  await p.redis.hset(endpointKey, 'secrets', JSON.stringify([{ secret: ep.secret, expiresAt: null }]));
  await p.redis.hset(p.store.keys.org(org.id), 'preAttemptCheckSecret', checkSecret);
  await p.redis.incr(p.store.keys.orgVersion(org.id));
  const eventId = await deliverOne(p, org.apiKey);
  expect(verifyAll(eventId, new Map([['/hook?e=legacy', ep.secret]]))).toBe(1);

  const box = createSecretBox(testSecretKeyring());
  const counts = await resealSecrets(p.redis, p.store.keys, box);
  expect(counts).toMatchObject({ sealedFromPlain: 2, resealed: 0, unreadable: 0 });
  expect(await resealSecrets(p.redis, p.store.keys, box)).toMatchObject({ sealedFromPlain: 0, resealed: 0 });
  await expectNothingInClear(p, [ep.secret, checkSecret]);
  expect(verifyAll(await deliverOne(p, org.apiKey), new Map([['/hook?e=legacy', ep.secret]]))).toBe(1);
});

test('the janitor deletes a rotated-out signing secret once its grace has ended', async () => {
  const p = await start({ secretRotationGraceMs: 200 });
  const org = await p.createOrg('grace');
  const ep = await p.createEndpoint(org.apiKey, { url: `${receiver.url}?e=grace`, policy: fastPolicy(2) });
  const rotated = await p.api('POST', `/v1/endpoints/${ep.id}/rotate-secret`, { key: org.apiKey });
  expect((await p.store.endpoints.get(org.id, ep.id))!.secrets).toHaveLength(2);
  expect((await p.sender!.janitor.runOnce()).secretsDropped).toBe(0);
  await waitUntil('the expired secret dropped', async () => (await p.sender!.janitor.runOnce()).secretsDropped === 1, 5000);
  expect((await p.store.endpoints.get(org.id, ep.id))!.secrets).toEqual([{ secret: rotated.body.secret, expiresAt: null }]);
  expect(await p.redis.hget(p.store.keys.endpoint(org.id, ep.id), 'secrets')).toMatch(/^sealed:v1:test1:/);
});

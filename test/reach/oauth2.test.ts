import { startPostern, fastPolicy, TEST_REDIS_URL, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { startTokenServer, type TokenServer } from '../support/oauth-server.js';
import { waitUntil } from '../support/wait-until.js';
import { killAllApps, spawnSender, waitForSenders, type AppProcess } from '../faults/support/app-process.js';
import { postEvents } from '../faults/support/load.js';

/**
 * OAuth 2.0 client credentials against a real token endpoint and a receiver that checks the bearer
 * token: three sender processes share one token for its whole lifetime; a token the receiver
 * revokes is replaced once, without spending an attempt; a token endpoint that is down is
 * `auth_failed:…`, retried, and nothing is lost.
 */

const CLIENT = { clientId: 'postern-client', clientSecret: 's3cret+/=' };

let postern: TestPostern;
let tokens: TokenServer;
let receiver: TestReceiver;
let apiKey: string;
let orgId: string;
const senders: AppProcess[] = [];

beforeAll(async () => {
  postern = await startPostern({ sender: false });
  // One lifetime covers the whole file (the cache keeps it for 10 % less): any second fetch is a refresh.
  tokens = await startTokenServer({ ...CLIENT, expiresInS: 600 });
  receiver = await startReceiver((req) => {
    const header = String(req.headers.authorization ?? '');
    return header.startsWith('Bearer ') && tokens.isValid(header.slice(7)) ? 200 : 401;
  });
  ({ apiKey, id: orgId } = await postern.createOrg('oauth2'));
  for (let i = 0; i < 3; i++) senders.push(spawnSender({ REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: postern.prefix, SENDER_CONCURRENCY: '10' }));
  await waitForSenders(postern.queue, 3, senders);
});
afterAll(async () => {
  await killAllApps();
  await receiver?.close();
  await tokens?.close();
  await postern?.close();
});

function oauthEndpoint(eventType: string, policy = fastPolicy(3, 20)) {
  return postern.createEndpoint(apiKey, {
    url: receiver.url,
    eventTypes: [eventType],
    policy,
    auth: { type: 'oauth2_client_credentials', tokenUrl: tokens.tokenUrl, ...CLIENT, scope: 'webhooks:receive', extraParams: { resource: 'hooks' } },
  });
}

async function allSucceeded(deliveryIds: string[], timeoutMs = 60_000) {
  return waitUntil('every delivery succeeded', async () => {
    const ds = await postern.store.deliveries.getMany(orgId, deliveryIds);
    return ds.length === deliveryIds.length && ds.every((d) => d.status === 'succeeded') ? ds : undefined;
  }, timeoutMs, 100).catch((err: Error) => {
    throw new Error(`${err.message}\n${senders.map((s) => s.output()).join('\n')}`);
  });
}

test('3 sender processes, 300 deliveries in one token lifetime: exactly 1 token fetch, every request carries that token', async () => {
  const created = await oauthEndpoint('oauth.load');
  expect(created.auth).toEqual({
    type: 'oauth2_client_credentials',
    tokenUrl: tokens.tokenUrl,
    clientId: CLIENT.clientId,
    clientSecret: '••••',
    scope: 'webhooks:receive',
    audience: null,
    extraParams: { resource: 'hooks' },
    clientAuthentication: 'client_secret_basic',
    tokenFetchedAt: null,
  });
  const events = await postEvents(postern.api, apiKey, 300, 10, 'oauth.load');
  const ds = await allSucceeded(events.flatMap((e) => e.deliveryIds));
  expect(ds).toHaveLength(300);

  expect(tokens.requests).toHaveLength(1);
  // RFC 6749 §4.4.2 with client_secret_basic: the secret only in the Authorization header.
  expect(tokens.requests[0]).toEqual({ form: { grant_type: 'client_credentials', scope: 'webhooks:receive', resource: 'hooks' }, basic: CLIENT });
  expect(ds.every((d) => d.attempts === 1)).toBe(true);
  expect(receiver.requests).toHaveLength(300);
  expect(new Set(receiver.requests.map((r) => r.headers.authorization))).toEqual(new Set([`Bearer ${tokens.issued[0]}`]));

  // The log shows that an authorization header went, never its value.
  const one = await postern.api('GET', `/v1/deliveries/${ds[0]!.id}`, { key: apiKey });
  expect(one.body.attempts[0].requestHeaders.authorization).toBe('••••');
  expect(JSON.stringify(one.body)).not.toContain(tokens.issued[0]);
});

test('a token revoked at the receiver: one refresh, the attempts resent under the same number', async () => {
  const fetchesBefore = tokens.requests.length;
  const requestsBefore = receiver.requests.length;
  tokens.revoke(tokens.issued[0]!);
  const events = await postEvents(postern.api, apiKey, 60, 10, 'oauth.load');
  const ds = await allSucceeded(events.flatMap((e) => e.deliveryIds));
  expect(tokens.requests.length - fetchesBefore).toBe(1);
  expect(ds.every((d) => d.attempts === 1 && d.lastError === null)).toBe(true);
  const seen = receiver.requests.slice(requestsBefore);
  const refused = seen.filter((r) => r.headers.authorization === `Bearer ${tokens.issued[0]}`);
  const accepted = seen.filter((r) => r.headers.authorization === `Bearer ${tokens.issued[1]}`);
  expect(refused.length).toBeGreaterThan(0);
  expect(accepted).toHaveLength(60);
  expect(refused.length + accepted.length).toBe(seen.length);
});

test('the token endpoint down: auth_failed:token_connection_failed_ECONNREFUSED, retried, nothing lost', async () => {
  // Its own endpoint, so no token is cached for it yet.
  await oauthEndpoint('oauth.down', fastPolicy(20, 1000));
  await tokens.stop();
  const requestsBefore = receiver.requests.length;
  const events = await postEvents(postern.api, apiKey, 20, 10, 'oauth.down');
  const ids = events.flatMap((e) => e.deliveryIds);
  await waitUntil('every delivery to fail an attempt on the token', async () => {
    const ds = await postern.store.deliveries.getMany(orgId, ids);
    return ds.every((d) => d.lastError === 'auth_failed:token_connection_failed_ECONNREFUSED');
  }, 20_000, 50);
  // Nothing reached the receiver without a token.
  expect(receiver.requests.length).toBe(requestsBefore);
  await tokens.start();
  const ds = await allSucceeded(ids);
  expect(ds.every((d) => d.attempts >= 2)).toBe(true);
  const detail = await postern.api('GET', `/v1/deliveries/${ds[0]!.id}`, { key: apiKey });
  expect(detail.body.attempts[0]).toMatchObject({ error: 'auth_failed:token_connection_failed_ECONNREFUSED', requestHeaders: null });
  const endpoint = await postern.api('GET', `/v1/endpoints/${ds[0]!.endpointId}`, { key: apiKey });
  // Counted against the endpoint, as the error table says.
  expect(endpoint.body.failedAttempts).toBeGreaterThan(0);
});

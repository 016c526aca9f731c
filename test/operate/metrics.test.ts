import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSenderHttp } from '@postern/sender';
import { fastPolicy, startPostern, type TestPostern } from '../support/postern.js';
import { parsePrometheus, sampleValue, type Sample } from '../support/prometheus.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { startTokenServer } from '../support/oauth-server.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Issue 6 metrics: what each app's /metrics shows after real deliveries — outcomes by bounded
 * error code, attempt durations, accepted → delivered latency, queue depth, in-flight attempts,
 * breaker trips, ingest requests by route pattern — and that no label carries an id or address.
 */

let postern: TestPostern;
let ok: TestReceiver;
let failing: TestReceiver;
let senderHttp: Server;
let senderBase: string;
let key: string;
let closedPort: number;

const ROOMY = { concurrency: { perEndpoint: 50, perOrg: 50 } };

beforeAll(async () => {
  postern = await startPostern({ senderConcurrency: 8 });
  ok = await startReceiver(() => 200);
  failing = await startReceiver(() => 503);
  // A port that was just free: connecting to it is refused.
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  closedPort = (probe.address() as AddressInfo).port;
  await new Promise((resolve) => probe.close(resolve));
  senderHttp = createSenderHttp({ registry: postern.senderRegistry, redis: postern.redis, worker: postern.sender!.worker });
  await new Promise<void>((resolve) => senderHttp.listen(0, '127.0.0.1', resolve));
  senderBase = `http://127.0.0.1:${(senderHttp.address() as AddressInfo).port}`;
  key = (await postern.createOrg()).apiKey;
});

afterAll(async () => {
  await new Promise((resolve) => senderHttp.close(resolve));
  await postern.close();
  await ok.close();
  await failing.close();
});

async function scrape(url: string): Promise<{ text: string; samples: Sample[]; contentType: string | null }> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  const text = await res.text();
  return { text, samples: parsePrometheus(text), contentType: res.headers.get('content-type') };
}

async function send(type: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const r = await postern.api('POST', '/v1/events', { key, body: { type, data: { i } } });
    expect(r.status).toBe(202);
    ids.push(...(r.body.deliveries as { id: string }[]).map((d) => d.id));
  }
  return ids;
}

async function waitFinished(ids: string[]): Promise<void> {
  await waitUntil('deliveries finished', async () => {
    for (const id of ids) {
      const r = await postern.api('GET', `/v1/deliveries/${id}`, { key });
      if (!['succeeded', 'failed', 'cancelled'].includes(r.body.status)) return false;
    }
    return true;
  }, 15_000);
}

test('sender metrics count outcomes, attempts, latency and breaker trips with bounded labels', async () => {
  const okEp = await postern.createEndpoint(key, { url: ok.url, eventTypes: ['m.ok'], policy: { ...fastPolicy(1), ...ROOMY } });
  const failEp = await postern.createEndpoint(key, { url: failing.url, eventTypes: ['m.fail'], policy: { ...fastPolicy(2, 10), ...ROOMY } });
  const refusedEp = await postern.createEndpoint(key, { url: `http://127.0.0.1:${closedPort}/hook`, eventTypes: ['m.refused'], policy: { ...fastPolicy(1), ...ROOMY } });
  // Trips on its second failed attempt and pauses itself.
  const breaker = { counts: 'attempts', of: 'all', threshold: 2, minStreakMs: 0, action: 'pause', pendingOnTrip: 'hold', reenable: 'resume', countTestEvents: false };
  const tripEp = await postern.createEndpoint(key, { url: failing.url, eventTypes: ['m.trip'], policy: { ...fastPolicy(3, 10), breaker, ...ROOMY } });

  const ids = [...(await send('m.ok', 3)), ...(await send('m.fail', 1)), ...(await send('m.refused', 1))];
  const tripIds = await send('m.trip', 1);
  await waitFinished(ids);
  await waitUntil('the breaker to pause its endpoint', async () => {
    const list = await postern.api('GET', '/v1/notifications', { key });
    return list.body.data.length > 0;
  }, 10_000);

  // The tripping attempt's job ends just after the notification is written.
  const { text, samples, contentType } = await waitUntil('the queue to settle', async () => {
    const scraped = await scrape(`${senderBase}/metrics`);
    return sampleValue(scraped.samples, 'postern_queue_jobs', { state: 'active' }) === 0 ? scraped : undefined;
  });
  expect(contentType).toMatch(/^text\/plain/);
  const v = (name: string, labels: Record<string, string> = {}) => sampleValue(samples, name, labels);

  expect(v('postern_deliveries_finished_total', { outcome: 'succeeded', error: 'none' })).toBe(3);
  expect(v('postern_deliveries_finished_total', { outcome: 'failed', error: 'http_503' })).toBe(1);
  expect(v('postern_deliveries_finished_total', { outcome: 'failed', error: 'connection_failed:ECONNREFUSED' })).toBe(1);

  // m.fail: 2 attempts; m.trip: 2 before its breaker paused the endpoint; m.refused: 1.
  expect(v('postern_attempts_total', { result: 'failure', error: 'http_503' })).toBe(4);
  expect(v('postern_attempts_total', { result: 'success', error: 'none' })).toBe(3);
  expect(v('postern_attempt_duration_seconds_count', { result: 'success' })).toBe(3);
  expect(v('postern_attempt_duration_seconds_count', { result: 'failure' })).toBe(5);
  expect(v('postern_attempt_duration_seconds_bucket', { result: 'success', le: '+Inf' })).toBe(3);

  // Accepted → delivered: one observation per successful delivery, each well under 10 s.
  expect(v('postern_delivery_latency_seconds_count')).toBe(3);
  expect(v('postern_delivery_latency_seconds_bucket', { le: '10' })).toBe(3);
  expect(v('postern_delivery_latency_seconds_sum')).toBeGreaterThan(0);

  // Accepted → first attempt started: one observation per delivery's first attempt (6 deliveries).
  expect(v('postern_first_attempt_latency_seconds_count')).toBe(6);
  expect(v('postern_first_attempt_latency_seconds_bucket', { le: '10' })).toBe(6);

  // The endpoints failing most, by id: the one metric that names endpoints, at most 10 of them.
  const orgId = (await postern.api('GET', '/v1/me', { key })).body.orgId as string;
  const topFailing = samples.filter((s) => s.name === 'postern_endpoint_recent_failed_attempts');
  const byCount = (a: { endpoint_id: string; value: number }, b: { endpoint_id: string; value: number }) => b.value - a.value || a.endpoint_id.localeCompare(b.endpoint_id);
  expect(topFailing.map((s) => ({ org_id: s.labels.org_id ?? '', endpoint_id: s.labels.endpoint_id ?? '', value: s.value })).sort(byCount)).toEqual(
    [
      { org_id: orgId, endpoint_id: failEp.id, value: 2 },
      { org_id: orgId, endpoint_id: tripEp.id, value: 2 },
      { org_id: orgId, endpoint_id: refusedEp.id, value: 1 },
    ].sort(byCount),
  );

  expect(v('postern_breaker_trips_total', { action: 'pause' })).toBe(1);
  expect(v('postern_attempts_in_flight')).toBe(0);
  expect(samples.filter((s) => s.name === 'postern_queue_jobs').map((s) => s.labels.state).sort()).toEqual(['active', 'delayed', 'failed', 'prioritized', 'waiting', 'waiting-children']);
  expect(v('postern_queue_jobs', { state: 'waiting' })).toBe(0);

  // No other label value names an id, an address or a URL.
  for (const s of samples.filter((sample) => sample.name !== 'postern_endpoint_recent_failed_attempts')) {
    for (const value of Object.values(s.labels)) {
      expect(value).not.toMatch(/(?:^|[^a-z])(?:ep|evt|dlv|org|key|ntf)_[0-9A-Za-z]/);
      expect(value).not.toMatch(/127\.0\.0\.1|http:\/\/|\/hook/);
    }
  }
  expect(text).not.toContain(okEp.id);
  expect(text).not.toContain(tripIds[0]);
});

test('OAuth 2.0 token fetches: counted by result, and the last one shown as auth.tokenFetchedAt', async () => {
  const client = { clientId: 'metrics-client', clientSecret: 's3cret' };
  const tokens = await startTokenServer(client);
  try {
    const oauth = (tokenUrl: string) => ({ type: 'oauth2_client_credentials', tokenUrl, ...client });
    const ep = await postern.createEndpoint(key, { url: ok.url, eventTypes: ['m.oauth'], policy: { ...fastPolicy(1), ...ROOMY }, auth: oauth(tokens.tokenUrl) });
    const down = await postern.createEndpoint(key, { url: ok.url, eventTypes: ['m.oauth-down'], policy: { ...fastPolicy(1), ...ROOMY }, auth: oauth(`http://127.0.0.1:${closedPort}/token`) });
    expect(ep.auth.tokenFetchedAt).toBeNull();
    const before = Date.now();
    const okIds = await send('m.oauth', 3);
    const downIds = await send('m.oauth-down', 1);
    await waitFinished([...okIds, ...downIds]);
    const after = Date.now();

    // Three deliveries, one token: the sender fetched once and said when.
    expect(tokens.requests).toHaveLength(1);
    const read = (await postern.api('GET', `/v1/endpoints/${ep.id}`, { key })).body;
    expect(read.auth).toMatchObject({ type: 'oauth2_client_credentials', clientSecret: '••••', tokenFetchedAt: expect.any(String) });
    const fetchedAt = Date.parse(read.auth.tokenFetchedAt);
    expect(fetchedAt).toBeGreaterThanOrEqual(before);
    expect(fetchedAt).toBeLessThanOrEqual(after);
    // A token endpoint that never answered: no fetch to show, the delivery failed with the reason.
    expect((await postern.api('GET', `/v1/endpoints/${down.id}`, { key })).body.auth.tokenFetchedAt).toBeNull();
    expect((await postern.api('GET', `/v1/deliveries/${downIds[0]}`, { key })).body.lastError).toBe('auth_failed:token_connection_failed_ECONNREFUSED');

    const { samples } = await scrape(`${senderBase}/metrics`);
    const fetches = samples.filter((s) => s.name === 'postern_oauth_token_fetches_total').map((s) => ({ result: s.labels.result, value: s.value }));
    expect(fetches.sort((a, b) => String(a.result).localeCompare(String(b.result)))).toEqual([
      { result: 'ok', value: 1 },
      // Bounded: the system code is not part of the label.
      { result: 'token_connection_failed', value: 1 },
    ]);

    // Recorded only while the endpoint exists: a fetch finishing after a delete does not bring its hash back.
    const orgId = (await postern.api('GET', '/v1/me', { key })).body.orgId as string;
    expect(await postern.store.oauthTokens.recordFetched(orgId, 'ep_0000000000000000000000gone', Date.now())).toBe(false);
    expect(await postern.redis.exists(postern.store.keys.endpoint(orgId, 'ep_0000000000000000000000gone'))).toBe(0);
  } finally {
    await tokens.close();
  }
});

test('queue depth reports jobs waiting for a sender', async () => {
  await postern.stopSender();
  try {
    await postern.createEndpoint(key, { url: ok.url, eventTypes: ['m.queued'], policy: { ...fastPolicy(1), ...ROOMY } });
    await send('m.queued', 4);
    const { samples } = await scrape(`${senderBase}/metrics`);
    expect(sampleValue(samples, 'postern_queue_jobs', { state: 'waiting' })).toBe(4);
    // Nothing takes them: the oldest has waited past its due time, and that keeps growing.
    await waitUntil('the oldest pending delivery to be 0.2 s overdue', async () => sampleValue((await scrape(`${senderBase}/metrics`)).samples, 'postern_queue_oldest_pending_seconds') >= 0.2);
  } finally {
    await postern.startSender();
  }
  await waitUntil('the oldest pending age back to 0 once a sender takes the jobs', async () => sampleValue((await scrape(`${senderBase}/metrics`)).samples, 'postern_queue_oldest_pending_seconds') === 0);
});

test('ingest metrics count requests by method, route pattern and status', async () => {
  const ep = await postern.createEndpoint(key, { url: ok.url, eventTypes: ['m.none'], policy: { ...fastPolicy(1), ...ROOMY } });
  expect((await postern.api('GET', `/v1/endpoints/${ep.id}`, { key })).status).toBe(200);
  expect((await postern.api('GET', '/v1/endpoints/ep_doesnotexist0000', { key })).status).toBe(404);
  // Refused by the auth middleware before any route ran: still named by its pattern.
  expect((await postern.api('GET', `/v1/endpoints/${ep.id}`)).status).toBe(401);
  expect((await postern.api('GET', '/no/such/path/abc123')).status).toBe(404);
  // Sub-apps are one label each, whatever path under them was asked for.
  expect((await postern.api('GET', '/admin/queues/api/queues/xyz789')).status).toBe(401);
  await postern.api('GET', '/dashboard/no-such-file-qwe456.js');
  expect((await postern.api('POST', '/v1/events', { key, body: { type: 'm.none', data: 1 } })).status).toBe(202);

  const { text, samples, contentType } = await scrape(`${postern.baseUrl}/metrics`);
  expect(contentType).toMatch(/^text\/plain/);
  const v = (labels: Record<string, string>) => sampleValue(samples, 'postern_http_requests_total', labels);
  expect(v({ method: 'GET', route: '/v1/endpoints/:id', status: '200' })).toBeGreaterThanOrEqual(1);
  expect(v({ method: 'GET', route: '/v1/endpoints/:id', status: '404' })).toBe(1);
  expect(v({ method: 'GET', route: '/v1/endpoints/:id', status: '401' })).toBe(1);
  expect(v({ method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
  expect(v({ method: 'POST', route: '/v1/events', status: '202' })).toBeGreaterThanOrEqual(1);
  expect(v({ method: 'POST', route: '/v1/orgs', status: '201' })).toBe(1);
  expect(v({ method: 'GET', route: '/admin/queues', status: '401' })).toBe(1);
  expect(v({ method: 'GET', route: '/dashboard' })).toBe(1);
  expect(sampleValue(samples, 'postern_http_request_duration_seconds_count', { method: 'POST', route: '/v1/events' })).toBeGreaterThanOrEqual(1);

  const routes = new Set(samples.filter((s) => s.name === 'postern_http_requests_total').map((s) => s.labels.route));
  for (const route of routes) expect(route === 'unmatched' || route?.startsWith('/')).toBe(true);
  expect([...routes].filter((r) => /[0-9A-Z]{10}/.test(r ?? ''))).toEqual([]);
  expect(text).not.toContain(ep.id);
  for (const raw of ['abc123', 'xyz789', 'qwe456']) expect(text).not.toContain(raw);
});

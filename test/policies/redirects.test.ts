import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver, type ReceivedRequest } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Redirects under a following policy (tourical: up to 3 hops, each target re-checked, loops and
 * the hop limit are failures) and under the default, which never follows (custral).
 *
 * Only 127.0.0.1 is allowed; a hop to 127.0.0.2 (also loopback on Linux) must be refused.
 */

const TOURICAL_ONE_SHOT = { preset: 'tourical', maxAttempts: 1 };

let postern: TestPostern;
let hops: TestReceiver;
let apiKey: string;
/** A server on 127.0.0.2, reachable on loopback but not on Postern's allow-list. */
let privateServer: Server;
let privateUrl: string;
let privateHits = 0;

/** Redirect routes of the `hops` receiver, by request path. */
function route(req: ReceivedRequest): { status: number; location?: string } {
  const path = req.path;
  if (path === '/loop') return { status: 302, location: '/loop' };
  const other = /^\/see-other\/(\d{3})$/.exec(path);
  if (other) return { status: Number(other[1]), location: '/chain0/0' };
  if (path === '/to-private') return { status: 302, location: privateUrl };
  const scheme = /^\/to-scheme\/(\w+)$/.exec(path);
  if (scheme) return { status: 302, location: { file: 'file:///etc/passwd', ftp: 'ftp://127.0.0.1/x', data: 'data:text/plain,hi', unix: 'http://unix:/var/run/docker.sock:/info' }[scheme[1]!] };
  const chain = /^\/chain(\d+)\/(\d+)$/.exec(path);
  if (chain) {
    // /chainN/k redirects to /chainN/k+1 until k = N, which answers 200: N redirects in all.
    const length = Number(chain[1]);
    const step = Number(chain[2]);
    return step < length ? { status: 302, location: `/chain${length}/${step + 1}` } : { status: 200 };
  }
  return { status: 200 };
}

beforeAll(async () => {
  postern = await startPostern({ allowList: ['127.0.0.1'] });
  hops = await startReceiver((req, _n, res) => {
    const { status, location } = route(req);
    res.statusCode = status;
    if (location) res.setHeader('location', location);
    res.end();
    return 'handled';
  }, '/');
  privateServer = createServer((_req, res) => {
    privateHits++;
    res.end('private');
  });
  await new Promise<void>((resolve, reject) => {
    privateServer.once('error', reject);
    privateServer.listen(0, '127.0.0.2', resolve);
  });
  privateUrl = `http://127.0.0.2:${(privateServer.address() as AddressInfo).port}/`;
  apiKey = (await postern.createOrg()).apiKey;
});
afterAll(async () => {
  await postern.close();
  await hops.close();
  privateServer.closeAllConnections();
  await new Promise<void>((resolve) => privateServer.close(() => resolve()));
});

let runs = 0;

/** One event to a new endpoint at `path` of the hops receiver; resolves with the finished delivery. */
async function deliverTo(path: string, policy: unknown): Promise<{ delivery: any; requests: ReceivedRequest[] }> {
  const type = `redirect.probe${++runs}`;
  await postern.createEndpoint(apiKey, { url: `http://127.0.0.1:${hops.port}${path}`, eventTypes: [type], policy });
  const before = hops.requests.length;
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type, data: { run: runs } } });
  expect(posted.status).toBe(202);
  const deliveryId = posted.body.deliveries[0].id as string;
  const delivery = await waitUntil('delivery finished', async () => {
    const r = await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey });
    return r.body.status === 'succeeded' || r.body.status === 'failed' ? r.body : undefined;
  });
  return { delivery, requests: hops.requests.slice(before) };
}

test('following: 302 → 302 → 200 succeeds and the final hop gets the signed POST body', async () => {
  const { delivery, requests } = await deliverTo('/chain2/0', TOURICAL_ONE_SHOT);
  expect(delivery.status).toBe('succeeded');
  expect(delivery.lastResponseStatus).toBe(200);
  expect(requests.map((r) => r.path)).toEqual(['/chain2/0', '/chain2/1', '/chain2/2']);
  const final = requests[2] as ReceivedRequest;
  expect(final.method).toBe('POST');
  expect(final.body).toBe(requests[0]?.body);
  expect(JSON.parse(final.body).data).toEqual({ run: runs });
  expect(final.headers['webhook-id']).toBe(delivery.eventId);
  expect(final.headers['webhook-signature']).toMatch(/^v1,/);
});

test.each([301, 302, 303, 307, 308])('following: after a %i the next hop still gets the same signed POST', async (status) => {
  const { delivery, requests } = await deliverTo(`/see-other/${status}`, TOURICAL_ONE_SHOT);
  expect(requests.map((r) => [r.method, r.path])).toEqual([
    ['POST', `/see-other/${status}`],
    ['POST', '/chain0/0'],
  ]);
  expect(requests[1]?.body).toBe(requests[0]?.body);
  expect(requests[1]?.headers['webhook-signature']).toBe(requests[0]?.headers['webhook-signature']);
  expect(delivery.status).toBe('succeeded');
});

test.each(['file', 'ftp', 'data', 'unix'])('following: a redirect to a %s URL is never followed → unsafe_url:redirect_scheme', async (scheme) => {
  const { delivery, requests } = await deliverTo(`/to-scheme/${scheme}`, TOURICAL_ONE_SHOT);
  expect(delivery.status).toBe('failed');
  expect(delivery.attempts.map((a: { error: string }) => a.error)).toEqual(['unsafe_url:redirect_scheme']);
  expect(requests.map((r) => r.path)).toEqual([`/to-scheme/${scheme}`]);
});

test('following: exactly 3 hops, the limit, still succeeds', async () => {
  const { delivery, requests } = await deliverTo('/chain3/0', { redirects: { follow: true, maxHops: 3 }, ...fastPolicy(1) });
  expect(delivery.status).toBe('succeeded');
  expect(requests).toHaveLength(4);
});

test('following: 4 hops is one too many → too_many_redirects', async () => {
  const { delivery, requests } = await deliverTo('/chain4/0', { redirects: { follow: true, maxHops: 3 }, ...fastPolicy(1) });
  expect(delivery.status).toBe('failed');
  expect(delivery.lastError).toBe('too_many_redirects');
  expect(delivery.attempts.map((a: { error: string }) => a.error)).toEqual(['too_many_redirects']);
  // The fourth redirect's target is never requested.
  expect(requests.map((r) => r.path)).toEqual(['/chain4/0', '/chain4/1', '/chain4/2', '/chain4/3']);
});

test('following: a redirect loop (A → A) → too_many_redirects', async () => {
  const { delivery, requests } = await deliverTo('/loop', TOURICAL_ONE_SHOT);
  expect(delivery.status).toBe('failed');
  expect(delivery.lastError).toBe('too_many_redirects');
  expect(requests.length).toBeLessThanOrEqual(4);
  expect(new Set(requests.map((r) => r.path))).toEqual(new Set(['/loop']));
});

test('following: a hop to a private address fails unsafe_url:loopback and that server is never contacted', async () => {
  // The target is reachable: only Postern's rules keep it from being called.
  const direct = await fetch(privateUrl);
  expect(await direct.text()).toBe('private');
  expect(privateHits).toBe(1);

  const { delivery, requests } = await deliverTo('/to-private', TOURICAL_ONE_SHOT);
  expect(delivery.status).toBe('failed');
  expect(delivery.lastError).toBe('unsafe_url:loopback');
  expect(requests.map((r) => r.path)).toEqual(['/to-private']);
  expect(privateHits).toBe(1);
});

test('not following (standard): a 302 is redirect_not_followed and the Location is never requested', async () => {
  const { delivery, requests } = await deliverTo('/chain1/0', fastPolicy(1));
  expect(delivery.status).toBe('failed');
  expect(delivery.lastError).toBe('redirect_not_followed');
  expect(delivery.lastResponseStatus).toBe(302);
  expect(requests.map((r) => r.path)).toEqual(['/chain1/0']);
});

test('not following: a 302 to a private address does not reach it either', async () => {
  const { delivery } = await deliverTo('/to-private', fastPolicy(1));
  expect(delivery.lastError).toBe('redirect_not_followed');
  expect(privateHits).toBe(1);
});

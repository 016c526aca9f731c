import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Outbound address safety with nothing private allowed (`allowList: []`). DNS is faked for the
 * pre-attempt check, so host names can "resolve" anywhere without any packet leaving the machine;
 * the transport's guarded agents underneath still use the real resolver at connect time.
 * No test here connects to a non-loopback address: a refused destination is refused before connecting.
 */

/** Fake DNS answers by host name; a host not listed fails like a missing name. */
const DNS: Record<string, string[]> = {
  'loopback.test': ['127.0.0.1'],
  'metadata.test': ['169.254.169.254'],
  'mapped.test': ['::ffff:127.0.0.1'],
  'private.test': ['10.0.0.1'],
  'cgnat.test': ['100.64.0.1'],
  'nat64.test': ['64:ff9b::7f00:1'],
  'sixtofour.test': ['2002:7f00:1::1'],
  'unspecified.test': ['0.0.0.0'],
  // One bad answer among good ones is enough to refuse.
  'mixed.test': ['93.184.216.34', '10.0.0.1'],
};
const lookups: string[] = [];

let postern: TestPostern;
let receiver: TestReceiver;
let orgCount = 0;

beforeAll(async () => {
  postern = await startPostern({
    allowList: [],
    lookupAll: async (hostname) => {
      lookups.push(hostname);
      const answer = DNS[hostname];
      if (answer) return answer;
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    },
  });
  receiver = await startReceiver(() => 200);
});
afterAll(async () => {
  await postern.close();
  await receiver.close();
});

interface Attempt {
  number: number;
  responseStatus: number | null;
  error: string | null;
}

const urlOn = (host: string) => `http://${host}:${receiver.port}/hook`;

/** Posts one event to a fresh org holding these endpoints; resolves with every delivery once finished, keyed by URL. */
async function deliverTo(endpoints: { url: string; policy?: unknown }[]): Promise<Map<string, any>> {
  const { apiKey } = await postern.createOrg(`unsafe-${++orgCount}`);
  const urlById = new Map<string, string>();
  for (const e of endpoints) urlById.set((await postern.createEndpoint(apiKey, e)).id, e.url);
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'invoice.paid', data: { n: 1 } } });
  expect(posted.status).toBe(202);
  const out = new Map<string, any>();
  await Promise.all(
    (posted.body.deliveries as { id: string; endpointId: string }[]).map(async (d) => {
      const delivery = await waitUntil(`delivery ${d.id} finished`, async () => {
        const r = await postern.api('GET', `/v1/deliveries/${d.id}`, { key: apiKey });
        return ['succeeded', 'failed', 'cancelled'].includes(r.body.status) ? r.body : undefined;
      });
      out.set(urlById.get(d.endpointId)!, delivery);
    }),
  );
  expect(out.size).toBe(endpoints.length);
  return out;
}

test('the API refuses a literal private address when it is not allowed', async () => {
  const { apiKey } = await postern.createOrg('literal');
  const r = await postern.api('POST', '/v1/endpoints', { key: apiKey, body: { url: receiver.url } });
  expect(r.status).toBe(400);
  expect(r.body.error.code).toBe('unsafe_url');
});

describe('a host name resolving to a non-public address, under the standard policy (unsafe URL permanent)', () => {
  const table: [string, string][] = [
    ['loopback.test', 'unsafe_url:loopback'],
    ['metadata.test', 'unsafe_url:link_local'],
    ['mapped.test', 'unsafe_url:ipv4_mapped'],
    ['private.test', 'unsafe_url:private'],
    ['cgnat.test', 'unsafe_url:cgnat'],
    ['nat64.test', 'unsafe_url:nat64'],
    ['sixtofour.test', 'unsafe_url:6to4'],
    ['unspecified.test', 'unsafe_url:unspecified'],
    ['mixed.test', 'unsafe_url:private'],
  ];
  let deliveries: Map<string, any>;

  beforeAll(async () => {
    deliveries = await deliverTo(table.map(([host]) => ({ url: urlOn(host) })));
  });

  test.each(table)('%s → %s, failed after 1 attempt', (host, error) => {
    const d = deliveries.get(urlOn(host));
    expect(d.status).toBe('failed');
    expect(d.lastError).toBe(error);
    expect(d.attempts.map((a: Attempt) => [a.number, a.error, a.responseStatus])).toEqual([[1, error, null]]);
    expect(lookups).toContain(host);
  });
});

test('under a policy that retries unsafe URLs, every attempt is made and refused; the receiver gets nothing', async () => {
  // `localhost` really is this machine: were the guards missing, the receiver would get these requests.
  DNS.localhost = ['127.0.0.1'];
  const url = urlOn('localhost');
  const lookupsBefore = lookups.length;
  const deliveries = await deliverTo([{ url, policy: fastPolicy(3, 20, { unsafeUrl: 'retry' }) }]);
  const d = deliveries.get(url);
  expect(d.status).toBe('failed');
  expect(d.attempts.map((a: Attempt) => [a.number, a.error])).toEqual([
    [1, 'unsafe_url:loopback'],
    [2, 'unsafe_url:loopback'],
    [3, 'unsafe_url:loopback'],
  ]);
  // jitter-45h: re-resolved before each attempt.
  expect(lookups.slice(lookupsBefore).filter((h) => h === 'localhost')).toHaveLength(3);
  expect(receiver.requests).toHaveLength(0);
});

test('a name that does not resolve gives dns_lookup_failed:ENOTFOUND', async () => {
  const url = urlOn('nowhere.test');
  const deliveries = await deliverTo([{ url, policy: fastPolicy(2, 20) }]);
  const d = deliveries.get(url);
  expect(d.status).toBe('failed');
  expect(d.attempts.map((a: Attempt) => [a.error, a.responseStatus])).toEqual([
    ['dns_lookup_failed:ENOTFOUND', null],
    ['dns_lookup_failed:ENOTFOUND', null],
  ]);
});

test('the connect-time guard refuses loopback even when the pre-check was told the host is public', async () => {
  // The real resolver, which the agent uses when connecting, says 127.0.0.1.
  DNS.localhost = ['93.184.216.34'];
  const url = urlOn('localhost');
  const deliveries = await deliverTo([{ url, policy: fastPolicy(1) }]);
  const d = deliveries.get(url);
  expect(d.status).toBe('failed');
  expect(d.attempts).toHaveLength(1);
  expect(d.lastError).toMatch(/^unsafe_url:/);
  expect(d.lastError).toBe('unsafe_url:loopback');
  expect(d.attempts[0].responseStatus).toBeNull();
  expect(receiver.requests).toHaveLength(0);
});

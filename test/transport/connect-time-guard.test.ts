import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { classifyAddress } from '@postern/shared';
import { checkDestination, createGotTransport, guardedLookup, type DeliveryTransport, type OutboundRequest } from '@postern/sender';

/**
 * The connect-time guard applies Postern's own `classifyAddress` and allow-list, so it refuses
 * exactly what the pre-send check refuses, with the same reason, before any connection is made.
 *
 * DNS is injected (`lookupAll`), so host names "resolve" anywhere without a packet leaving the
 * machine. The agents' request-filtering-agent layer is told to allow all of 127.0.0.0/8: every
 * loopback refusal below is Postern's own, and were the guard missing, the request would reach
 * the receiver on 127.0.0.1 (counted) instead of any other machine. Only 127.0.0.1 is ever dialled.
 */

const DNS: Record<string, string[]> = {
  'compat.test': ['::7f00:1'],
  'loopback.test': ['127.0.0.1'],
  'private.test': ['10.0.0.1'],
  'metadata.test': ['169.254.169.254'],
  'allowed.test': ['127.0.0.1'],
  // One refused address among allowed ones refuses the whole answer, as the pre-send check does.
  'mixed.test': ['127.0.0.1', '10.0.0.1'],
};
const lookupAll = async (hostname: string): Promise<string[]> => {
  const answer = DNS[hostname];
  if (answer) return answer;
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
};
/** What request-filtering-agent is told: nothing on loopback is refused by it. */
const AGENT_ALLOW_LIST = ['127.0.0.0/8'];

let server: Server;
let port: number;
let connections = 0;
let requests = 0;
const transports: DeliveryTransport[] = [];

function transportAllowing(allowList: string[]): { transport: DeliveryTransport; classify: (a: string) => string | null } {
  const classify = (address: string) => classifyAddress(address, allowList);
  const transport = createGotTransport({ allowList: AGENT_ALLOW_LIST, classifyAddress: classify, lookupAll });
  transports.push(transport);
  return { transport, classify };
}

const post = (url: string, follow = false): OutboundRequest => ({
  url,
  headers: { 'content-type': 'application/json' },
  body: '{"n":1}',
  timeout: { ms: 5_000, measures: 'whole-response' },
  redirects: follow ? { follow: true, maxHops: 3 } : { follow: false },
  maxResponseBytesRead: 1024,
});

beforeAll(async () => {
  // Safety net: the guard must refuse every non-loopback answer before anything below may dial.
  const lookup = guardedLookup(lookupAll, (a) => classifyAddress(a, []));
  for (const host of ['compat.test', 'private.test', 'metadata.test']) {
    const err = await new Promise<unknown>((resolve) => lookup(host, { all: true }, (e) => resolve(e)));
    if (!err) throw new Error(`guardedLookup let ${host} through: not running tests that could dial it`);
  }
  server = createServer((req, res) => {
    requests++;
    req.resume();
    const location = /^\/redirect\/(.+)$/.exec(req.url ?? '')?.[1];
    if (location) {
      res.writeHead(302, { location: decodeURIComponent(location) });
      return res.end();
    }
    res.end('ok');
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const t of transports) t.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('nothing private allowed', () => {
  const table: [string, string][] = [
    ['compat.test', 'unsafe_url:ipv4_compatible'],
    ['loopback.test', 'unsafe_url:loopback'],
    ['private.test', 'unsafe_url:private'],
    ['metadata.test', 'unsafe_url:link_local'],
  ];

  test.each(table)('%s is refused at connect time as %s, the pre-send check\'s reason, without connecting', async (host, code) => {
    const { transport, classify } = transportAllowing([]);
    const url = `http://${host}:${port}/hook`;
    const connectionsBefore = connections;
    expect(await checkDestination(new URL(url), classify, lookupAll)).toBe(code);
    expect(await transport.send(post(url))).toEqual({ kind: 'error', code });
    expect(connections).toBe(connectionsBefore);
  });

  test('an IP address as the host is refused the same way (net dials it without a lookup)', async () => {
    const { transport, classify } = transportAllowing([]);
    const connectionsBefore = connections;
    for (const url of [`http://127.0.0.1:${port}/hook`, `http://[::ffff:127.0.0.1]:${port}/hook`]) {
      const pre = await checkDestination(new URL(url), classify, lookupAll);
      expect(pre).toMatch(/^unsafe_url:/);
      expect(await transport.send(post(url))).toEqual({ kind: 'error', code: pre });
    }
    expect(connections).toBe(connectionsBefore);
  });
});

describe('127.0.0.1 allowed', () => {
  test('an allowed answer is delivered', async () => {
    const { transport, classify } = transportAllowing(['127.0.0.1']);
    const url = `http://allowed.test:${port}/hook`;
    const before = { connections, requests };
    expect(await checkDestination(new URL(url), classify, lookupAll)).toBeNull();
    expect(await transport.send(post(url))).toMatchObject({ kind: 'response', status: 200 });
    expect({ connections: connections - before.connections, requests: requests - before.requests }).toEqual({ connections: 1, requests: 1 });
  });

  test.each([
    ['mixed.test', 'unsafe_url:private'],
    ['compat.test', 'unsafe_url:ipv4_compatible'],
  ])('%s is still refused as %s, like the pre-send check', async (host, code) => {
    const { transport, classify } = transportAllowing(['127.0.0.1']);
    const url = `http://${host}:${port}/hook`;
    const connectionsBefore = connections;
    expect(await checkDestination(new URL(url), classify, lookupAll)).toBe(code);
    expect(await transport.send(post(url))).toEqual({ kind: 'error', code });
    expect(connections).toBe(connectionsBefore);
  });

  test.each([
    ['a host name answering ::7f00:1', 'http://compat.test:PORT/hook', 'unsafe_url:ipv4_compatible'],
    ['a host name answering 169.254.169.254', 'http://metadata.test:PORT/hook', 'unsafe_url:link_local'],
    ['another loopback address, given as the host', 'http://127.0.0.2:PORT/hook', 'unsafe_url:loopback'],
  ])('a redirect hop to %s is refused at connect time', async (_what, target, code) => {
    const { transport } = transportAllowing(['127.0.0.1']);
    const before = { connections, requests };
    const url = `http://127.0.0.1:${port}/redirect/${encodeURIComponent(target.replace('PORT', String(port)))}`;
    expect(await transport.send(post(url, true))).toEqual({ kind: 'error', code });
    // Only the first hop reached the receiver.
    expect(requests - before.requests).toBe(1);
    expect(connections - before.connections).toBeLessThanOrEqual(1);
  });
});

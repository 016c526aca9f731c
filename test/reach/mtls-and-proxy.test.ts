import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createProxy, type ProxyServer } from 'proxy';
import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * mTLS: a receiver that requires a client certificate from its own CA accepts Postern's when the
 * endpoint has the right one, and the handshake fails (`tls_error:<code>`) otherwise. Egress
 * proxy: deliveries go through a real forward proxy on loopback (it sees the CONNECT), its
 * credentials are sent, its failures are `proxy_error:<code>`, and a target the address rules
 * refuse never reaches it.
 */

interface Pki {
  ca: string;
  serverKey: string;
  serverCert: string;
  clientKey: string;
  clientCert: string;
  otherKey: string;
  otherCert: string;
}

/** A CA, a server certificate for 127.0.0.1 and a client certificate from it, and a client certificate from another CA. */
function makePki(): Pki {
  const dir = mkdtempSync(join(tmpdir(), 'postern-mtls-'));
  const f = (name: string) => join(dir, name);
  const run = (...args: string[]) => execFileSync('openssl', args, { stdio: 'ignore' });
  try {
    for (const ca of ['ca', 'other-ca']) run('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${ca}`, '-days', '1', '-keyout', f(`${ca}.key`), '-out', f(`${ca}.pem`));
    writeFileSync(f('server.ext'), 'subjectAltName=IP:127.0.0.1\n');
    const issue = (name: string, cn: string, ca: string, ext?: string) => {
      run('req', '-new', '-newkey', 'rsa:2048', '-nodes', '-subj', `/CN=${cn}`, '-keyout', f(`${name}.key`), '-out', f(`${name}.csr`));
      run('x509', '-req', '-in', f(`${name}.csr`), '-CA', f(`${ca}.pem`), '-CAkey', f(`${ca}.key`), '-CAcreateserial', '-days', '1', '-out', f(`${name}.pem`), ...(ext ? ['-extfile', f(ext)] : []));
    };
    issue('server', '127.0.0.1', 'ca', 'server.ext');
    issue('client', 'postern-client', 'ca');
    issue('other', 'someone-else', 'other-ca');
    const read = (name: string) => readFileSync(f(name), 'utf8');
    return { ca: read('ca.pem'), serverKey: read('server.key'), serverCert: read('server.pem'), clientKey: read('client.key'), clientCert: read('client.pem'), otherKey: read('other.key'), otherCert: read('other.pem') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

let pki: Pki;
let postern: TestPostern;
let apiKey: string;
let orgId: string;
let tlsReceiver: Server;
let tlsUrl: string;
const clientNames: string[] = [];
let receiver: TestReceiver;
let proxy: ProxyServer;
let proxyPort: number;
const connects: string[] = [];
const proxySockets = new Set<Socket>();

beforeAll(async () => {
  pki = makePki();
  tlsReceiver = createServer({ key: pki.serverKey, cert: pki.serverCert, ca: pki.ca, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    clientNames.push(String((req.socket as TLSSocket).getPeerCertificate().subject?.CN));
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((resolve) => tlsReceiver.listen(0, '127.0.0.1', resolve));
  tlsUrl = `https://127.0.0.1:${(tlsReceiver.address() as AddressInfo).port}/hook`;
  receiver = await startReceiver();

  proxy = createProxy(createHttpServer());
  proxy.authenticate = (req) => {
    const header = req.headers['proxy-authorization'];
    // Unauthenticated CONNECTs are allowed; credentials, when sent, must be right.
    return header === undefined || header === `Basic ${Buffer.from('egress:p@ss word').toString('base64')}`;
  };
  proxy.on('connect', (req) => connects.push(String(req.url)));
  proxy.on('connection', (s: Socket) => {
    proxySockets.add(s);
    s.on('close', () => proxySockets.delete(s));
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyPort = (proxy.address() as AddressInfo).port;

  // blocked.test resolves to a private address: the pre-send check refuses it.
  postern = await startPostern({ lookupAll: async (host) => (host === 'blocked.test' ? ['10.0.0.7'] : ['127.0.0.1']) });
  ({ apiKey, id: orgId } = await postern.createOrg('mtls-proxy'));
});
afterAll(async () => {
  await postern?.close();
  tlsReceiver.closeAllConnections();
  await new Promise<void>((resolve) => tlsReceiver.close(() => resolve()));
  await receiver.close();
  for (const s of proxySockets) s.destroy();
  await new Promise<void>((resolve) => proxy.close(() => resolve()));
});

let n = 0;
/** A new endpoint with `fields`, one event to it, and its delivery once it has an outcome. */
async function deliverOnce(fields: Record<string, unknown>): Promise<any> {
  const type = `reach.t${++n}`;
  await postern.createEndpoint(apiKey, { eventTypes: [type], policy: fastPolicy(1), ...fields });
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type, data: { n } } });
  expect(posted.status).toBe(202);
  const id = posted.body.deliveries[0].id as string;
  return waitUntil('the delivery to end', async () => {
    const d = await postern.api('GET', `/v1/deliveries/${id}`, { key: apiKey });
    return d.body.status === 'succeeded' || d.body.status === 'failed' ? d.body : undefined;
  });
}

describe('mTLS', () => {
  test('the right client certificate: 200, and the receiver saw it', async () => {
    const before = clientNames.length;
    const d = await deliverOnce({ url: tlsUrl, auth: { type: 'mtls', certificate: pki.clientCert, privateKey: pki.clientKey, ca: pki.ca } });
    expect(d).toMatchObject({ status: 'succeeded', lastResponseStatus: 200 });
    expect(clientNames.slice(before)).toEqual(['postern-client']);
    const endpoint = await postern.api('GET', `/v1/endpoints/${d.endpointId}`, { key: apiKey });
    expect(endpoint.body.auth).toEqual({ type: 'mtls', certificate: pki.clientCert, privateKey: '••••', ca: pki.ca });
    expect(JSON.stringify(endpoint.body)).not.toContain('PRIVATE KEY');
  });

  test('no client certificate, or one the receiver does not trust: tls_error, nothing delivered', async () => {
    const before = clientNames.length;
    const none = await deliverOnce({ url: tlsUrl });
    expect(none.status).toBe('failed');
    expect(none.lastError).toMatch(/^tls_error:[A-Za-z0-9_]+$/);
    const other = await deliverOnce({ url: tlsUrl, auth: { type: 'mtls', certificate: pki.otherCert, privateKey: pki.otherKey, ca: pki.ca } });
    expect(other.status).toBe('failed');
    expect(other.lastError).toMatch(/^(tls_error|connection_failed):[A-Za-z0-9_]+$/);
    expect(clientNames.length).toBe(before);
  });

  test('PEM is checked when written: a key that does not match, an encrypted or malformed one, an http URL', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ url: tlsUrl, auth: { type: 'mtls', certificate: pki.clientCert, privateKey: pki.otherKey } }, /^auth\.privateKey: does not match/],
      [{ url: tlsUrl, auth: { type: 'mtls', certificate: pki.clientCert, privateKey: 'not a key' } }, /^auth\.privateKey:/],
      [{ url: tlsUrl, auth: { type: 'mtls', certificate: pki.clientCert.replace(/[A-Za-z]{8}/, 'AAAAAAAA'), privateKey: pki.clientKey } }, /^auth\.certificate:/],
      [{ url: tlsUrl, auth: { type: 'mtls', certificate: pki.clientCert, privateKey: pki.clientKey, ca: 'nope' } }, /^auth\.ca:/],
      [{ url: receiver.url, auth: { type: 'mtls', certificate: pki.clientCert, privateKey: pki.clientKey } }, /^auth: mtls needs an https/],
    ];
    for (const [body, message] of cases) {
      const res = await postern.api('POST', '/v1/endpoints', { key: apiKey, body });
      expect({ status: res.status, code: res.body.error?.code, message: message.test(res.body.error?.message) }).toEqual({ status: 400, code: 'invalid_request', message: true });
    }
  });
});

describe('egress proxy', () => {
  test('deliveries go through the proxy: it sees the CONNECT, with its credentials', async () => {
    const before = connects.length;
    const d = await deliverOnce({ url: receiver.url, proxy: `http://egress:p%40ss%20word@127.0.0.1:${proxyPort}` });
    expect(d).toMatchObject({ status: 'succeeded', lastResponseStatus: 200 });
    expect(connects.slice(before)).toEqual([`127.0.0.1:${receiver.port}`]);
    const endpoint = await postern.api('GET', `/v1/endpoints/${d.endpointId}`, { key: apiKey });
    expect(endpoint.body.proxy).toEqual({ url: `http://127.0.0.1:${proxyPort}`, username: 'egress', password: '••••' });
  });

  test('mTLS inside the tunnel reaches the receiver', async () => {
    const before = connects.length;
    const d = await deliverOnce({ url: tlsUrl, proxy: `http://127.0.0.1:${proxyPort}`, auth: { type: 'mtls', certificate: pki.clientCert, privateKey: pki.clientKey, ca: pki.ca } });
    expect(d.status).toBe('succeeded');
    expect(connects.slice(before)).toEqual([new URL(tlsUrl).host]);
  });

  test('a target the address rules refuse is refused before the proxy is contacted', async () => {
    const before = connects.length;
    const d = await deliverOnce({ url: 'http://blocked.test/hook', proxy: `http://127.0.0.1:${proxyPort}` });
    expect(d).toMatchObject({ status: 'failed', lastError: 'unsafe_url:private' });
    expect(connects.length).toBe(before);
  });

  test('proxy failures are proxy_error:<code>', async () => {
    const wrong = await deliverOnce({ url: receiver.url, proxy: `http://egress:wrong@127.0.0.1:${proxyPort}` });
    expect(wrong.lastError).toBe('proxy_error:status_407');
    const closed = createHttpServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const deadPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const down = await deliverOnce({ url: receiver.url, proxy: `http://127.0.0.1:${deadPort}` });
    expect(down.lastError).toBe('proxy_error:ECONNREFUSED');
    const ds = await postern.store.deliveries.getMany(orgId, [wrong.id, down.id]);
    expect(ds.map((x) => x.status)).toEqual(['failed', 'failed']);
  });
});

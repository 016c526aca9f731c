import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * An HTTPS endpoint whose certificate Postern cannot trust gives `tls_error:<CODE>`, and nothing is
 * delivered; one that never finishes the handshake times out under either timeout rule.
 */

let postern: TestPostern;
let server: Server;
let port: number;
let requestsServed = 0;
let tlsErrors = 0;
/** Accepts TCP connections and never says a word: a TLS handshake with it never completes. */
let mute: TcpServer;
const muteSockets = new Set<Socket>();

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'postern-tls-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-days', '1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
    server = createServer({ key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) }, (_req, res) => {
      requestsServed += 1;
      res.end('ok');
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  server.on('tlsClientError', () => {
    tlsErrors += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  mute = createTcpServer((socket) => {
    muteSockets.add(socket);
    socket.on('close', () => muteSockets.delete(socket));
  });
  await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve));
  postern = await startPostern();
});
afterAll(async () => {
  await postern.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  for (const socket of muteSockets) socket.destroy();
  await new Promise<void>((resolve) => mute.close(() => resolve()));
});

async function deliverOnce(url: string, policy: Record<string, unknown>): Promise<any> {
  const { apiKey } = await postern.createOrg(`tls-${Math.random()}`);
  await postern.createEndpoint(apiKey, { url, policy });
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'invoice.paid', data: { n: 1 } } });
  expect(posted.status).toBe(202);
  const deliveryId = posted.body.deliveries[0].id as string;
  return waitUntil(`delivery ${deliveryId} finished`, async () => {
    const r = await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey });
    return ['succeeded', 'failed', 'cancelled'].includes(r.body.status) ? r.body : undefined;
  }, 5000);
}

test('a self-signed certificate fails the attempt with tls_error and no request is served', async () => {
  const delivery = await deliverOnce(`https://127.0.0.1:${port}/hook`, fastPolicy(1));

  expect(delivery.status).toBe('failed');
  expect(delivery.lastError).toMatch(/^tls_error:[A-Z0-9_]+$/);
  expect(delivery.lastError).toBe('tls_error:DEPTH_ZERO_SELF_SIGNED_CERT');
  expect(delivery.attempts.map((a: { error: string; responseStatus: number | null }) => [a.error, a.responseStatus])).toEqual([[delivery.lastError, null]]);
  expect(requestsServed).toBe(0);
  // The handshake did reach the server: the failure is TLS, not a connection that never opened.
  await waitUntil('the server saw the refused handshake', () => tlsErrors >= 1, 2000);
});

test.each(['whole-response', 'response-headers'])('a server that never completes the TLS handshake times out (%s)', async (measures) => {
  const delivery = await deliverOnce(`https://127.0.0.1:${(mute.address() as AddressInfo).port}/hook`, fastPolicy(1, 20, { timeout: { ms: 300, measures } }));

  expect(delivery.status).toBe('failed');
  expect(delivery.attempts.map((a: { error: string; responseStatus: number | null }) => [a.error, a.responseStatus])).toEqual([['timeout', null]]);
  expect(delivery.attempts[0].durationMs).toBeGreaterThanOrEqual(280);
  expect(delivery.attempts[0].durationMs).toBeLessThan(3000);
});

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { waitUntil } from '../support/wait-until.js';

/** An HTTPS endpoint whose certificate Postern cannot trust gives `tls_error:<CODE>`, and nothing is delivered. */

let postern: TestPostern;
let server: Server;
let port: number;
let requestsServed = 0;
let tlsErrors = 0;

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
  postern = await startPostern();
});
afterAll(async () => {
  await postern.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

test('a self-signed certificate fails the attempt with tls_error and no request is served', async () => {
  const { apiKey } = await postern.createOrg();
  await postern.createEndpoint(apiKey, { url: `https://127.0.0.1:${port}/hook`, policy: fastPolicy(1) });
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'invoice.paid', data: { n: 1 } } });
  expect(posted.status).toBe(202);
  const deliveryId = posted.body.deliveries[0].id as string;

  const delivery = await waitUntil('delivery finished', async () => {
    const r = await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey });
    return ['succeeded', 'failed', 'cancelled'].includes(r.body.status) ? r.body : undefined;
  });

  expect(delivery.status).toBe('failed');
  expect(delivery.lastError).toMatch(/^tls_error:[A-Z0-9_]+$/);
  expect(delivery.lastError).toBe('tls_error:DEPTH_ZERO_SELF_SIGNED_CERT');
  expect(delivery.attempts.map((a: { error: string; responseStatus: number | null }) => [a.error, a.responseStatus])).toEqual([[delivery.lastError, null]]);
  expect(requestsServed).toBe(0);
  // The handshake did reach the server: the failure is TLS, not a connection that never opened.
  await waitUntil('the server saw the refused handshake', () => tlsErrors >= 1, 2000);
});

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { redisTargetOf } from '@postern/store';
import { killAllApps, spawnIngest, spawnIngestOnly, spawnSender, type AppProcess } from '../faults/support/app-process.js';
import { fastPolicy, startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';
import { documentedAcl, freePort, makeCertificates, removeDir, startRedisServer, type TestCertificates, type TestRedisServer } from './support.js';

/**
 * Postern against a Redis as production runs it (docs/production-redis.md): mutual TLS with a
 * private CA, an ACL user with the documented least privilege, and the default user switched off.
 * First in process (every core path: endpoints, events, retries, the delivery log, the console's
 * reads), then both apps as processes configured only through the documented environment.
 */

const PASSWORD = `pw-${randomBytes(12).toString('hex')}`;
const ADMIN_PASSWORD = `admin-${randomBytes(12).toString('hex')}`;

let certs: TestCertificates;
let server: TestRedisServer;
let receiver: TestReceiver;
let port: number;

/** TLS options of a client with the test CA and the client certificate. */
const tlsOf = (c: TestCertificates) => ({ ca: readFileSync(c.caFile), cert: readFileSync(c.clientCertFile), key: readFileSync(c.clientKeyFile), servername: 'localhost' });

beforeAll(async () => {
  certs = await makeCertificates();
  port = await freePort();
  server = await startRedisServer(
    ['--port', '0', '--tls-port', String(port), '--bind', '127.0.0.1', '--tls-cert-file', certs.serverCertFile, '--tls-key-file', certs.serverKeyFile, '--tls-ca-cert-file', certs.caFile, '--tls-auth-clients', 'yes', '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction'],
    { host: '127.0.0.1', port, tls: tlsOf(certs) },
  );
  // An admin user for the test itself; the default user goes off, as on a managed service.
  const admin = new Redis({ host: '127.0.0.1', port, tls: tlsOf(certs) });
  await admin.call('ACL', 'SETUSER', 'admin', 'on', `>${ADMIN_PASSWORD}`, '~*', '&*', '+@all');
  await admin.call('ACL', 'SETUSER', 'default', 'off');
  admin.disconnect();
  receiver = await startReceiver((req) => (req.path.includes('fail-once') && req.headers['webhook-attempt'] === '1' ? 500 : 200));
}, 60_000);
afterAll(async () => {
  await killAllApps();
  await receiver?.close();
  await server?.kill();
  await removeDir(certs?.dir);
});

/** An admin connection (for setting up users). */
async function adminConnection(): Promise<Redis> {
  const r = new Redis({ host: '127.0.0.1', port, tls: tlsOf(certs), username: 'admin', password: ADMIN_PASSWORD });
  await r.ping();
  return r;
}

describe('in process, as the documented ACL user over mutual TLS', () => {
  let postern: TestPostern;
  const prefix = `acl${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    const admin = await adminConnection();
    await admin.call('ACL', 'SETUSER', 'postern', ...(await documentedAcl(prefix, PASSWORD)));
    admin.disconnect();
    const target = redisTargetOf({
      REDIS_URL: `rediss://postern:${PASSWORD}@127.0.0.1:${port}`,
      REDIS_CLUSTER_NODES: '',
      REDIS_TLS_CA_FILE: certs.caFile,
      REDIS_TLS_CERT_FILE: certs.clientCertFile,
      REDIS_TLS_KEY_FILE: certs.clientKeyFile,
      REDIS_TLS_SERVERNAME: 'localhost',
    });
    postern = await startPostern({ redisTarget: target, prefix });
  }, 60_000);
  afterAll(async () => {
    await postern?.close();
  });

  test('endpoints, events, a retry, redelivery, the delivery log and the console reads all work under the least-privilege user', async () => {
    const { apiKey, id: orgId } = await postern.createOrg();
    const endpoint = await postern.createEndpoint(apiKey, { url: `${receiver.url}/fail-once`, policy: fastPolicy(3, 50) });
    const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'order.created', data: { n: 1 } } });
    expect(posted.status).toBe(202);
    const deliveryId = posted.body.deliveries[0].id as string;
    const done = await waitUntil('delivered on attempt 2', async () => {
      const d = await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey });
      return d.body.status === 'succeeded' ? d.body : false;
    }, 20_000);
    expect(done.attempts).toHaveLength(2);
    expect(done.attempts.map((a: { responseStatus: number }) => a.responseStatus)).toEqual([500, 200]);

    const redelivered = await postern.api('POST', `/v1/deliveries/${deliveryId}/redeliver`, { key: apiKey });
    expect(redelivered.status).toBe(202);
    await waitUntil('the redelivery succeeded', async () => { const r = await postern.api('GET', `/v1/deliveries/${redelivered.body.delivery.id}`, { key: apiKey }); if (r.body.status !== 'succeeded') throw new Error(JSON.stringify([redelivered.body, r.body])); return true; }, 20_000);

    for (const path of [`/v1/endpoints/${endpoint.id}/deliveries`, `/v1/endpoints/${endpoint.id}`, `/v1/endpoints/${endpoint.id}/timeline`, '/v1/endpoints', '/v1/events', `/v1/events/${posted.body.id}`, '/v1/stats', '/v1/org', '/v1/notifications']) {
      const r = await postern.api('GET', path, { key: apiKey });
      expect([path, r.status]).toEqual([path, 200]);
    }
    // Nothing was refused along the way: Redis logs every command and key the ACL denied.
    const admin = await adminConnection();
    const denied = (await admin.call('ACL', 'LOG', '100')) as unknown[][];
    admin.disconnect();
    expect(denied.map((entry) => entry.slice(0, 12).join(' ')).filter((e) => e.includes(' postern '))).toEqual([]);
    expect(orgId).toMatch(/^org_/);
  }, 60_000);

  test('the user reaches no key outside its prefix, and no dangerous command', async () => {
    const r = new Redis({ host: '127.0.0.1', port, tls: tlsOf(certs), username: 'postern', password: PASSWORD });
    try {
      await expect(r.set('other:key', '1')).rejects.toThrow(/NOPERM/);
      await expect(r.call('KEYS', '*')).rejects.toThrow(/NOPERM/);
      await expect(r.call('FLUSHALL')).rejects.toThrow(/NOPERM/);
      await expect(r.call('CONFIG', 'GET', 'maxmemory')).rejects.toThrow(/NOPERM/);
      expect(await r.set(`${prefix}:probe`, '1')).toBe('OK');
      await r.del(`${prefix}:probe`);
    } finally {
      r.disconnect();
    }
  });
});

describe('as processes, configured by the environment alone', () => {
  const prefix = `env${randomBytes(4).toString('hex')}`;
  let ingest: Awaited<ReturnType<typeof spawnIngest>>;
  let sender: AppProcess;
  let env: Record<string, string>;

  beforeAll(async () => {
    const admin = await adminConnection();
    await admin.call('ACL', 'SETUSER', 'postern-env', ...(await documentedAcl(prefix, PASSWORD)));
    admin.disconnect();
    env = {
      REDIS_URL: `rediss://127.0.0.1:${port}`,
      REDIS_USERNAME: 'postern-env',
      REDIS_PASSWORD: PASSWORD,
      REDIS_TLS_CA_FILE: certs.caFile,
      REDIS_TLS_CERT_FILE: certs.clientCertFile,
      REDIS_TLS_KEY_FILE: certs.clientKeyFile,
      REDIS_TLS_SERVERNAME: 'localhost',
      REDIS_PREFIX: prefix,
      LOG_LEVEL: 'info',
    };
    ingest = await spawnIngest(env, 30_000);
    sender = spawnSender(env);
  }, 60_000);

  test('ingest and a sender over mutual TLS as an ACL user deliver an event; no log line holds the password', async () => {
    const api = async (method: string, path: string, key: string, body?: unknown) => {
      const r = await fetch(`${ingest.baseUrl}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: r.status, body: (await r.json()) as any };
    };
    const org = await api('POST', '/v1/orgs', 'test-admin-token-0123456789', { name: 'tls' });
    expect(org.status).toBe(201);
    const key = org.body.apiKey as string;
    const endpoint = await api('POST', '/v1/endpoints', key, { url: `${receiver.url}/env` });
    expect(endpoint.status).toBe(201);
    const event = await api('POST', '/v1/events', key, { type: 'tls.test', data: {} });
    expect(event.status).toBe(202);
    await waitUntil('the event reaches the receiver', () => receiver.requests.some((r) => r.headers['webhook-id'] === event.body.id), 30_000);
    const started = await waitUntil('the start-up lines say where Redis is', () => {
      const lines = `${ingest.output()}\n${sender.output()}`;
      return lines.includes(`standalone 127.0.0.1:${port} over TLS as postern-env`) ? lines : false;
    });
    expect(started).not.toContain(PASSWORD);
  }, 60_000);

  test('a CA that did not sign the server, or a missing client certificate, is refused: ingest stays unready and says why', async () => {
    for (const [what, extra, said] of [
      ['another CA', { REDIS_TLS_CA_FILE: certs.otherCaFile }, /certificate|self.signed|unable to verify/i],
      ['no client certificate', { REDIS_TLS_CERT_FILE: '', REDIS_TLS_KEY_FILE: '' }, /redis connection error/],
    ] as const) {
      const app = await spawnIngestOnly({ ...env, ...extra });
      const readyz = await waitUntil(`ingest with ${what} answers /readyz and logs the refusal`, async () => {
        if (app.exited) throw new Error(`ingest exited\n${app.output()}`);
        const r = await fetch(`${app.baseUrl}/readyz`).catch(() => null);
        return r && said.test(app.output()) ? r.status : false;
      }, 20_000, 100);
      expect([what, readyz]).toEqual([what, 503]);
      await app.kill();
    }
  }, 60_000);

  test('contradicting settings stop the app at start with one line naming the setting', async () => {
    const app = await spawnIngestOnly({ ...env, REDIS_TLS_KEY_FILE: '' });
    const exit = await app.exit;
    expect(exit.code).toBe(1);
    expect(app.output()).toContain('invalid configuration: REDIS_TLS_KEY_FILE: mutual TLS needs both REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE');
    // A file that is not a PEM certificate or key stops it too, naming the settings.
    const notPem = await spawnIngestOnly({ ...env, REDIS_TLS_KEY_FILE: certs.caFile });
    expect((await notPem.exit).code).toBe(1);
    expect(notPem.output()).toContain('invalid configuration: REDIS_TLS_CERT_FILE / REDIS_TLS_KEY_FILE: not a usable PEM file');
  }, 30_000);
});

import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { explainRedisProbe, probeRedis, type RedisProbe } from '../../scripts/redis-util.mjs';
import { freePort, makeCertificates, removeDir, startRedisServer, type TestCertificates, type TestRedisServer } from '../production-redis/support.js';
import { TEST_REDIS_URL } from '../support/postern.js';
import { REPO_ROOT } from '../support/spawn-app.js';

/**
 * `npm start` against a Redis it cannot reach over TLS names what it tried (TLS to host:port) and
 * what to check — a plain Redis on the port, nothing listening, a certificate not trusted, a client
 * certificate missing, refused credentials — instead of trying to start a local Redis on a port
 * that is taken and reporting the port as in use. Real servers: the test Redis (plain) and a
 * redis-server with mutual TLS and a password started here.
 */

const PASSWORD = `pw-${randomBytes(8).toString('hex')}`;
const plain = new URL(TEST_REDIS_URL);
const plainHost = plain.hostname;
const plainPort = Number(plain.port || 6379);

let certs: TestCertificates;
let server: TestRedisServer;
let tlsPort: number;

beforeAll(async () => {
  certs = await makeCertificates();
  tlsPort = await freePort();
  const tls = { ca: readFileSync(certs.caFile), cert: readFileSync(certs.clientCertFile), key: readFileSync(certs.clientKeyFile), servername: 'localhost' };
  server = await startRedisServer(
    ['--port', '0', '--tls-port', String(tlsPort), '--bind', '127.0.0.1', '--tls-cert-file', certs.serverCertFile, '--tls-key-file', certs.serverKeyFile, '--tls-ca-cert-file', certs.caFile, '--tls-auth-clients', 'yes', '--requirepass', PASSWORD, '--save', '', '--appendonly', 'no'],
    { host: '127.0.0.1', port: tlsPort, tls, password: PASSWORD },
  );
}, 60_000);
afterAll(async () => {
  await server?.kill();
  await removeDir(certs?.dir);
});

/** The probe's failure (fails the test when it answered). */
async function failure(url: string, options: Parameters<typeof probeRedis>[1] = {}): Promise<Exclude<RedisProbe, { ok: true }>> {
  const probe = await probeRedis(url, { timeoutMs: 3000, ...options });
  if (probe.ok) throw new Error(`${url} answered`);
  return probe;
}

describe('probeRedis says what stands between it and a PONG', () => {
  const client = () => ({ ca: readFileSync(certs.caFile), cert: readFileSync(certs.clientCertFile), key: readFileSync(certs.clientKeyFile) });

  test('the TLS Redis answers with the CA, the client certificate and the password', async () => {
    expect(await probeRedis(`rediss://:${PASSWORD}@127.0.0.1:${tlsPort}`, { timeoutMs: 3000, ...client() })).toEqual({ ok: true });
    expect(await probeRedis(`redis://127.0.0.1:${tlsPort}`, { timeoutMs: 3000, tls: true, password: PASSWORD, ...client() })).toEqual({ ok: true });
  });

  test('TLS to a plain Redis: connected, the handshake unanswered', async () => {
    const probe = await failure(`rediss://${plainHost}:${plainPort}`);
    expect(probe).toMatchObject({ stage: 'tls', code: 'TLS_NO_ANSWER' });
    const said = explainRedisProbe({ host: plainHost, port: plainPort }, probe, { tls: true, plainRedisAnswers: true });
    expect(said).toBe(`could not reach Redis: tried TLS to ${plainHost}:${plainPort} (REDIS_URL is rediss://): a Redis answers there without TLS, so the TLS handshake went unanswered. Use redis:// for a plain Redis, or the port your Redis serves TLS on (its tls-port).`);
  });

  test('nothing listening: refused, at the connection', async () => {
    const port = await freePort();
    const probe = await failure(`rediss://127.0.0.1:${port}`);
    expect(probe).toMatchObject({ stage: 'connect', code: 'ECONNREFUSED' });
    expect(explainRedisProbe({ host: '127.0.0.1', port }, probe, { tls: true })).toMatch(new RegExp(`^could not reach Redis: tried TLS to 127\\.0\\.0\\.1:${port} .*: nothing listens there \\(connection refused\\)\\. .*tls-port`));
  });

  test('a certificate signed by a CA not given, or naming another host: REDIS_TLS_CA_FILE / REDIS_TLS_SERVERNAME', async () => {
    for (const options of [{}, { ca: readFileSync(certs.otherCaFile) }, { ...client(), servername: 'redis.elsewhere.example' }]) {
      const probe = await failure(`rediss://:${PASSWORD}@127.0.0.1:${tlsPort}`, options);
      expect(probe.stage).toBe('tls');
      const said = explainRedisProbe({ host: '127.0.0.1', port: tlsPort }, probe, { tls: true });
      expect(said).toContain(`tried TLS to 127.0.0.1:${tlsPort}`);
      expect(said).toContain("the server's certificate was not accepted");
      expect(said).toContain('REDIS_TLS_CA_FILE');
    }
  });

  test('no client certificate where Redis asks for one: REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE', async () => {
    const probe = await failure(`rediss://:${PASSWORD}@127.0.0.1:${tlsPort}`, { ca: readFileSync(certs.caFile) });
    expect(probe.stage).toBe('tls');
    expect(explainRedisProbe({ host: '127.0.0.1', port: tlsPort }, probe, { tls: true })).toBe(
      `could not reach Redis: tried TLS to 127.0.0.1:${tlsPort} (REDIS_URL is rediss://): Redis asks for a client certificate (tls-auth-clients) and none was given. Set REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE to a certificate its CA signed, and its key.`,
    );
  });

  test('a wrong password over TLS: the credentials are named', async () => {
    const probe = await failure(`rediss://:wrong@127.0.0.1:${tlsPort}`, client());
    expect(probe.stage).toBe('auth');
    expect(explainRedisProbe({ host: '127.0.0.1', port: tlsPort }, probe, { tls: true })).toMatch(/Redis refused the credentials \(WRONGPASS.*REDIS_USERNAME and REDIS_PASSWORD/);
  });

  test('plain TCP to a port that speaks TLS: closed without an answer, and the hint is rediss://', async () => {
    const probe = await failure(`redis://127.0.0.1:${tlsPort}`);
    expect(explainRedisProbe({ host: '127.0.0.1', port: tlsPort }, probe, { tls: false })).toMatch(new RegExp(`^could not reach Redis: tried plain TCP to 127\\.0\\.0\\.1:${tlsPort} \\(REDIS_URL\\): .*use rediss://`));
  });
});

/** Runs `npm start`'s script with `env` until it exits (it must, before starting anything). */
function runStart(env: Record<string, string>): Promise<{ code: number | null; stderr: string; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'scripts/start.mjs')], {
      cwd: REPO_ROOT,
      // A SECRETS_KEY of its own: the development key file in .data/ is neither read nor written.
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SECRETS_KEY: randomBytes(32).toString('base64'), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`start.mjs did not exit within 20 s; stderr so far:\n${stderr}`));
    }, 20_000);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, stdout });
    });
  });
}

describe('npm start with a rediss:// REDIS_URL that does not answer', () => {
  test('a plain Redis on that port: exit 1 naming TLS to host:port and the plain Redis there, not "port in use"', async () => {
    const r = await runStart({ REDIS_URL: `rediss://${plainHost}:${plainPort}` });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`[start] could not reach Redis: tried TLS to ${plainHost}:${plainPort} (REDIS_URL is rediss://): a Redis answers there without TLS`);
    expect(r.stderr).not.toMatch(/in use|started redis-server/);
  });

  test('nothing on a local port: exit 1 saying nothing listens, and no plain redis-server started in its place', async () => {
    const port = await freePort();
    const r = await runStart({ REDIS_URL: `rediss://127.0.0.1:${port}` });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`tried TLS to 127.0.0.1:${port}`);
    expect(r.stderr).toContain('nothing listens there (connection refused)');
    expect(r.stderr).not.toMatch(/started redis-server|in use/);
  });

  test('a TLS Redis whose CA is not given: the certificate and REDIS_TLS_CA_FILE are named; with REDIS_TLS=true on a redis:// URL too', async () => {
    const r = await runStart({ REDIS_URL: `rediss://:${PASSWORD}@127.0.0.1:${tlsPort}` });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`tried TLS to 127\\.0\\.0\\.1:${tlsPort} \\(REDIS_URL is rediss://\\): the server's certificate was not accepted .*REDIS_TLS_CA_FILE`));
    const forced = await runStart({ REDIS_URL: `redis://:${PASSWORD}@127.0.0.1:${tlsPort}`, REDIS_TLS: 'true' });
    expect(forced.code).toBe(1);
    expect(forced.stderr).toContain(`tried TLS to 127.0.0.1:${tlsPort} (REDIS_TLS=true): the server's certificate was not accepted`);
  });

  test('a CA file that cannot be read is named before anything is tried', async () => {
    const r = await runStart({ REDIS_URL: `rediss://127.0.0.1:${tlsPort}`, REDIS_TLS_CA_FILE: '/nonexistent/ca.pem' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('[start] REDIS_TLS_CA_FILE=/nonexistent/ca.pem cannot be read (ENOENT).');
  });
});

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import { freePort } from '../faults/support/free-port.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Real Redis servers the production-Redis tests start themselves (README, "Production Redis"): a
 * CA with server and client certificates made with `openssl`, a redis-server over mutual TLS,
 * and a primary + replica watched by a Sentinel (`redis-server --sentinel`).
 */

/** PEM files of a CA made for one test file, a server certificate for `localhost`/127.0.0.1 and a client certificate. */
export interface TestCertificates {
  dir: string;
  caFile: string;
  serverCertFile: string;
  serverKeyFile: string;
  clientCertFile: string;
  clientKeyFile: string;
  /** Another CA's certificate: one that signed none of the above. */
  otherCaFile: string;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'ignore' });
}

/** Makes a CA, a server and a client certificate (RSA 2048, valid 2 days) in a temp dir. */
export async function makeCertificates(): Promise<TestCertificates> {
  const dir = await mkdtemp(path.join(tmpdir(), 'postern-tls-'));
  const ca = (name: string) => openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.crt`, '-days', '2', '-subj', `/CN=${name}`], dir);
  ca('test-ca');
  ca('other-ca');
  await writeFile(path.join(dir, 'server.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  await writeFile(path.join(dir, 'client.ext'), 'extendedKeyUsage=clientAuth\n');
  for (const [name, cn] of [['server', 'localhost'], ['client', 'postern']] as const) {
    openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`], dir);
    openssl(['x509', '-req', '-in', `${name}.csr`, '-CA', 'test-ca.crt', '-CAkey', 'test-ca.key', '-CAcreateserial', '-out', `${name}.crt`, '-days', '2', '-extfile', `${name}.ext`], dir);
  }
  const f = (name: string) => path.join(dir, name);
  return { dir, caFile: f('test-ca.crt'), serverCertFile: f('server.crt'), serverKeyFile: f('server.key'), clientCertFile: f('client.crt'), clientKeyFile: f('client.key'), otherCaFile: f('other-ca.crt') };
}

/** A redis-server child of one test file. */
export interface TestRedisServer {
  port: number;
  child: ChildProcess;
  /** SIGKILL and wait for the exit. */
  kill(): Promise<void>;
}

const servers = new Set<TestRedisServer>();
process.once('exit', () => {
  for (const s of servers) s.child.kill('SIGKILL');
});

/**
 * Starts `redis-server` with `args` (after a config file path, when given), and waits until a
 * connection made with `connect` answers PING (or, for a Sentinel, `SENTINEL MASTERS`).
 */
export async function startRedisServer(args: string[], connect: RedisOptions & { port: number }, opts: { sentinel?: boolean; configFile?: string } = {}): Promise<TestRedisServer> {
  const argv = [...(opts.configFile ? [opts.configFile] : []), ...args, ...(opts.sentinel ? ['--sentinel'] : [])];
  // Its own working directory: a replica writes the snapshot it syncs from there (never the repository).
  const child = spawn('redis-server', argv, { cwd: mkdtempSync(path.join(tmpdir(), 'postern-redis-')), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-4000)));
  child.stderr!.on('data', (c: Buffer) => (output = (output + c.toString()).slice(-4000)));
  const server: TestRedisServer = {
    port: connect.port,
    child,
    async kill() {
      servers.delete(server);
      if (child.exitCode !== null || child.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGKILL');
      });
    },
  };
  servers.add(server);
  await waitUntil(`redis-server on ${connect.port} to answer`, async () => {
    if (child.exitCode !== null) throw new Error(`redis-server exited ${child.exitCode}:\n${output}`);
    const probe = new Redis({ ...connect, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      if (opts.sentinel) await probe.call('SENTINEL', 'MASTERS');
      else await probe.ping();
      return true;
    } catch {
      return false;
    } finally {
      probe.disconnect();
    }
  }, 15_000, 100);
  return server;
}

/**
 * The minimal ACL of docs/production-redis.md, read from the document itself (so the tests use what
 * users copy): the `ACL SETUSER postern …` line, with `prefix` for `postern` in the key and channel
 * patterns and `password` for the placeholder.
 */
export async function documentedAcl(prefix: string, password: string): Promise<string[]> {
  const doc = await readFile(new URL('../../docs/production-redis.md', import.meta.url), 'utf8');
  const line = doc.split('\n').find((l) => l.startsWith('ACL SETUSER postern '));
  if (!line) throw new Error('docs/production-redis.md has no line starting "ACL SETUSER postern "');
  return line
    .trim()
    .split(/\s+/)
    .slice(3)
    .map((part) => (part === '>CHANGE-ME' ? `>${password}` : /^[~&]/.test(part) ? part.replace('postern', prefix) : part));
}

/** Removes a temp dir made by {@link makeCertificates} (or any). */
export async function removeDir(dir: string | undefined): Promise<void> {
  if (dir) await rm(dir, { recursive: true, force: true });
}

export { freePort };

/**
 * Plumbing for `npm run bench` (bench/run.ts): a private Redis, the receiver process, Postern's two
 * apps as processes, a lean HTTP client for producers, RSS sampling and percentiles.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { createServer } from 'node:net';
import path from 'node:path';
import { createRedisConnection } from '@postern/store';
import type { Redis } from 'ioredis';
import { APP_NODE_FLAGS } from '../scripts/node-flags.mjs';
import { findRedisServer, startLocalRedis, stopRedis } from '../scripts/redis-util.mjs';
import { REPO_ROOT, spawnApp, type SpawnedApp } from '../test/support/spawn-app.js';

export { REPO_ROOT };

/** The admin token of the benchmark's ingest. */
export const BENCH_ADMIN_TOKEN = 'bench-admin-token-0123456789';

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The Redis every scenario runs on. */
export interface BenchRedis {
  url: string;
  /** True when the benchmark started it (so `used_memory` counts only the benchmark's keys). */
  own: boolean;
  client: Redis;
  usedMemory(): Promise<number>;
  stop(): Promise<void>;
}

/** The flags docker-compose.yml starts Redis with (after `redis-server`): production's settings. */
export function composeRedisFlags(): string[] {
  const compose = parseYaml(readFileSync(path.join(REPO_ROOT, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: { redis: { command: string[] } } };
  return compose.services.redis.command.slice(1);
}

/**
 * Builds every workspace (`npm run build`; turbo rebuilds only what changed) and makes the apps the
 * bench starts run from `dist/`, as production runs them: no TypeScript loader in the figures.
 */
export function buildCompiledApps(log: (line: string) => void): void {
  log('building the apps (npm run build)');
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
  process.env.POSTERN_APP_MODE = 'compiled';
}

/**
 * Starts a private redis-server with docker-compose.yml's flags (AOF, noeviction, …; no RDB
 * snapshots) on a free port, so memory figures count only the benchmark's keys. Without
 * redis-server it falls back to `REDIS_URL` and says memory figures include other keys.
 */
export async function startBenchRedis(log: (line: string) => void): Promise<BenchRedis> {
  let url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  let child: ChildProcess | null = null;
  const dataDir = path.join(REPO_ROOT, '.data', `bench-redis-${process.pid}`);
  if (findRedisServer()) {
    const port = await freePort();
    child = await startLocalRedis({ port, dataDir, extraArgs: [...composeRedisFlags(), '--save', ''] });
    url = `redis://127.0.0.1:${port}`;
  } else {
    log(`redis-server not found: using REDIS_URL (${url}); used_memory then includes other keys`);
  }
  const client = createRedisConnection(url, 'worker');
  await client.ping();
  return {
    url,
    own: child !== null,
    client,
    async usedMemory() {
      const info = await client.info('memory');
      return Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0);
    },
    async stop() {
      await client.quit().catch(() => undefined);
      if (child) {
        await stopRedis(child, 5000);
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  };
}

/** The receiver process (bench/receiver.ts). */
export interface ReceiverProcess {
  base: string;
  /** The node process serving the receiver (spawned directly, so this is the one doing the work). */
  pid: number | undefined;
  stats(): Promise<{ count: number; firstAtMs: number; lastAtMs: number; latenciesMs: number[]; withAuthorization: number; transformedBodies: number }>;
  reset(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts a bench script that prints `{"port": N}` on stdout as its own process; resolves with the child and the port. */
async function startPortProcess(script: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (chunk: Buffer) => resolve((JSON.parse(chunk.toString('utf8')) as { port: number }).port));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}`)));
  });
  return { child, port };
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Starts bench/receiver.ts as its own process and waits for its port. */
export async function startReceiverProcess(): Promise<ReceiverProcess> {
  const { child, port } = await startPortProcess('bench/receiver.ts');
  const base = `http://127.0.0.1:${port}`;
  return {
    base,
    pid: child.pid,
    stats: async () => (await fetch(`${base}/_stats`)).json() as Promise<{ count: number; firstAtMs: number; lastAtMs: number; latenciesMs: number[]; withAuthorization: number; transformedBodies: number }>,
    reset: async () => void (await fetch(`${base}/_reset`, { method: 'POST' })).text(),
    stop: () => stopChild(child),
  };
}

/** The forward proxy process (bench/forward-proxy.ts): CONNECT tunnels to 127.0.0.1 only. */
export interface ForwardProxyProcess {
  /** `http://127.0.0.1:<port>`, as an endpoint's `proxy` or `EGRESS_PROXY_URL`. */
  url: string;
  /** The node process doing the proxying (for its CPU time). */
  pid: number | undefined;
  stop(): Promise<void>;
}

/** Starts bench/forward-proxy.ts as its own process and waits for its port. */
export async function startForwardProxyProcess(): Promise<ForwardProxyProcess> {
  const { child, port } = await startPortProcess('bench/forward-proxy.ts');
  return { url: `http://127.0.0.1:${port}`, pid: child.pid, stop: () => stopChild(child) };
}

/** Postern's ingest and sender as processes on one key prefix, as `npm start` runs them. */
export interface PosternProcesses {
  ingest: SpawnedApp;
  sender: SpawnedApp | null;
  apiBase: string;
  /** The sender's health and metrics port (`/metrics`). */
  senderBase: string;
  prefix: string;
  startSender(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The node flags the benchmark's apps run with: the apps' defaults (scripts/node-flags.mjs, as
 * `npm start` and the Docker image use them), or `BENCH_NODE_ARGS` instead when it is set
 * (`BENCH_NODE_ARGS=` runs them with Node's own defaults).
 */
export function benchNodeFlags(): string[] {
  const given = process.env.BENCH_NODE_ARGS;
  return given === undefined ? [...APP_NODE_FLAGS] : given.split(' ').filter(Boolean);
}

/**
 * Spawns ingest (and, unless `withSender` is false, a sender) with LOG_LEVEL=warn: per-request
 * info lines to a pipe would measure the terminal, not Postern. Both get `baseNodeArgs` (default
 * {@link benchNodeFlags}), then `nodeArgs` (e.g. `--cpu-prof`); `env` is added to (and overrides)
 * their environment.
 */
export async function startPosternProcesses(opts: { redisUrl: string; prefix: string; concurrency: number; withSender?: boolean; baseNodeArgs?: readonly string[]; nodeArgs?: (app: 'ingest' | 'sender') => string[]; env?: Record<string, string> }): Promise<PosternProcesses> {
  const env = {
    REDIS_URL: opts.redisUrl,
    REDIS_PREFIX: opts.prefix,
    LOG_LEVEL: 'warn',
    ALLOWED_ADDRESSES: '127.0.0.1',
    ADMIN_TOKEN: BENCH_ADMIN_TOKEN,
    HOST: '127.0.0.1',
    PORT: String(await freePort()),
    SENDER_HOST: '127.0.0.1',
    SENDER_PORT: String(await freePort()),
    SENDER_CONCURRENCY: String(opts.concurrency),
    NODE_ENV: 'production',
    // Production requires both; the key is the tests' (spawnApp's default) unless opts.env gives one.
    PUBLIC_URL: 'http://127.0.0.1',
    // e.g. REDIS_CLUSTER_NODES and QUEUE_PARTITIONS for the cluster runs.
    ...opts.env,
  };
  const extraNodeArgs = [...(opts.baseNodeArgs ?? benchNodeFlags())];
  const ingest = spawnApp('ingest', env, [...extraNodeArgs, ...(opts.nodeArgs?.('ingest') ?? [])]);
  const apiBase = `http://127.0.0.1:${env.PORT}`;
  const ready = async (base: string, what: string) => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const ok = await fetch(`${base}/readyz`).then((r) => r.ok, () => false);
      if (ok) return;
      if (Date.now() > deadline) throw new Error(`${what} not ready within 30 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  await ready(apiBase, 'ingest');
  const processes: PosternProcesses = {
    ingest,
    sender: null,
    apiBase,
    senderBase: `http://127.0.0.1:${env.SENDER_PORT}`,
    prefix: opts.prefix,
    async startSender() {
      processes.sender = spawnApp('sender', env, [...extraNodeArgs, ...(opts.nodeArgs?.('sender') ?? [])]);
      await ready(`http://127.0.0.1:${env.SENDER_PORT}`, 'sender');
    },
    async stop() {
      await Promise.all([ingest.stop(), processes.sender?.stop()]);
    },
  };
  if (opts.withSender !== false) await processes.startSender();
  return processes;
}

/** Resident set size of a process, bytes (Linux /proc), or 0 when it is gone. */
export function rssBytes(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Samples the peak RSS of some processes every 200 ms until stopped. */
export function sampleRss(pids: Record<string, number | undefined>): { stop(): Record<string, number> } {
  const peak: Record<string, number> = Object.fromEntries(Object.keys(pids).map((k) => [k, 0]));
  const take = () => {
    for (const [name, pid] of Object.entries(pids)) peak[name] = Math.max(peak[name] ?? 0, rssBytes(pid));
  };
  take();
  const timer = setInterval(take, 200);
  return {
    stop() {
      clearInterval(timer);
      take();
      return peak;
    },
  };
}

/** A keep-alive JSON client for the producers: lighter than fetch, so the driver is not the bottleneck. */
export function jsonClient(base: string, maxSockets: number) {
  const agent = new Agent({ keepAlive: true, maxSockets });
  const url = new URL(base);
  return {
    post(pathname: string, body: unknown, token?: string): Promise<{ status: number; body: any }> {
      const payload = JSON.stringify(body);
      return new Promise((resolve, reject) => {
        const req = request(
          {
            host: url.hostname,
            port: url.port,
            path: pathname,
            method: 'POST',
            agent,
            headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...(token ? { authorization: `Bearer ${token}` } : {}) },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () => {
              const text = Buffer.concat(chunks).toString('utf8');
              resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
            });
          },
        );
        req.on('error', reject);
        req.end(payload);
      });
    },
    close() {
      agent.destroy();
    },
  };
}

/** The p-th percentile (0..100) of `values`, nearest rank; NaN when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** Waits until `check` is true, polling every `intervalMs`; false when `timeoutMs` passed first. */
export async function pollUntil(check: () => Promise<boolean> | boolean, timeoutMs: number, intervalMs = 50): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  return check();
}

/** Sum of `MEMORY USAGE` of every key under `prefix:` (SCAN; what Redis itself charges to them). */
export async function memoryUnderPrefix(redis: Redis, prefix: string): Promise<{ bytes: number; keys: number }> {
  let cursor = '0';
  let bytes = 0;
  let keys = 0;
  do {
    const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 2000);
    cursor = next;
    if (batch.length === 0) continue;
    const pipeline = redis.pipeline();
    for (const key of batch) pipeline.memory('USAGE', key, 'SAMPLES', '0');
    for (const [, n] of (await pipeline.exec()) ?? []) bytes += Number(n ?? 0);
    keys += batch.length;
  } while (cursor !== '0');
  return { bytes, keys };
}

/**
 * `npm run bench:durability`: what `ACCEPT_DURABILITY=replica` costs ingest's answer
 * (docs/production-redis.md). Starts its own primary and replica (redis-server on free ports),
 * ingest as a process twice — `local`, then `replica` — and posts events at `BENCH_RATE` per second
 * (default 250) for `BENCH_SECONDS` (default 15) to one org with one endpoint (no sender: only the
 * accept path is measured). Reports the 202 latency p50 / p99 of each, and their ratio, from the
 * same run. Writes bench-results/durability-<time>.json.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { BENCH_ADMIN_TOKEN, jsonClient, percentile, REPO_ROOT, startPosternProcesses } from './bench-support.js';

const RATE = Number(process.env.BENCH_RATE ?? 250);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const log = (line: string) => process.stdout.write(`[durability] ${line}\n`);

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

async function startServer(port: number, extra: string[]): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...extra], { stdio: 'ignore' });
  for (const deadline = Date.now() + 10_000; ; ) {
    const probe = new Redis({ port, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
    probe.on('error', () => undefined);
    const ok = await probe.connect().then(() => probe.ping(), () => null);
    probe.disconnect();
    if (ok === 'PONG') return child;
    if (Date.now() > deadline) throw new Error(`redis-server on ${port} did not start`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function measure(primaryPort: number, mode: 'local' | 'replica'): Promise<{ mode: string; accepted: number; other: Record<string, number>; p50Ms: number; p99Ms: number }> {
  const p = await startPosternProcesses({ redisUrl: `redis://127.0.0.1:${primaryPort}`, prefix: `dur-${mode}`, concurrency: 1, withSender: false, env: { ACCEPT_DURABILITY: mode } });
  try {
    const admin = jsonClient(p.apiBase, 4);
    const org = await admin.post('/v1/orgs', { name: `durability-${mode}` }, BENCH_ADMIN_TOKEN);
    const key = org.body.apiKey as string;
    const client = jsonClient(p.apiBase, 64);
    await client.post('/v1/endpoints', { url: 'https://hooks.example.org/durability' }, key);
    const latencies: number[] = [];
    const other: Record<string, number> = {};
    const sends: Promise<void>[] = [];
    const start = Date.now();
    for (let i = 0; i < RATE * SECONDS; i++) {
      const due = start + (i * 1000) / RATE;
      const wait = due - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const t0 = performance.now();
      sends.push(
        client.post('/v1/events', { type: 'bench.durability', data: { i } }, key).then((r) => {
          if (r.status === 202) latencies.push(performance.now() - t0);
          else other[r.status] = (other[r.status] ?? 0) + 1;
        }),
      );
    }
    await Promise.all(sends);
    return { mode, accepted: latencies.length, other, p50Ms: Math.round(percentile(latencies, 50) * 100) / 100, p99Ms: Math.round(percentile(latencies, 99) * 100) / 100 };
  } finally {
    await p.stop();
  }
}

const primaryPort = await freePort();
const replicaPort = await freePort();
const servers = [await startServer(primaryPort, [])];
servers.push(await startServer(replicaPort, ['--replicaof', '127.0.0.1', String(primaryPort)]));
try {
  log(`primary ${primaryPort}, replica ${replicaPort}; ${RATE} events/s for ${SECONDS} s each; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  const local = await measure(primaryPort, 'local');
  log(`local:   ${local.accepted} accepted ${JSON.stringify(local.other)}, 202 in p50 ${local.p50Ms} ms, p99 ${local.p99Ms} ms`);
  const replica = await measure(primaryPort, 'replica');
  log(`replica: ${replica.accepted} accepted ${JSON.stringify(replica.other)}, 202 in p50 ${replica.p50Ms} ms, p99 ${replica.p99Ms} ms`);
  const ratio = { p50: Math.round((replica.p50Ms / local.p50Ms) * 100) / 100, p99: Math.round((replica.p99Ms / local.p99Ms) * 100) / 100 };
  log(`replica / local: p50 ×${ratio.p50}, p99 ×${ratio.p99}`);
  const dir = path.join(REPO_ROOT, 'bench-results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `durability-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, JSON.stringify({ rate: RATE, seconds: SECONDS, local, replica, ratio, loadAverage: loadavg() }, null, 2));
  log(`wrote ${path.relative(REPO_ROOT, file)}`);
} finally {
  for (const s of servers) s.kill('SIGKILL');
}

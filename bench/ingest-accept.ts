/**
 * `node --import tsx bench/ingest-accept.ts`: the cost of ingest's accept path alone.
 *
 * Starts a private redis-server (docker-compose.yml's flags), builds ingest in this process with
 * `createApp` on port 0 (wired as `main.ts` wires it, no sender), creates an org with 1 endpoint
 * and one with 10, and fires `POST /v1/events` at them from a load generator in a child process
 * (so this process's CPU time is ingest's). For each scenario and run it reports events/s, CPU ms
 * per accepted event (`process.cpuUsage`), Redis commands per event (`INFO commandstats` delta:
 * every command, those run inside Lua scripts included) and, from a short `MONITOR` pass, the
 * commands ingest itself sends per event (Lua-internal ones left out). Medians over the runs.
 *
 * Settings: `BENCH_EVENTS` (per run, default 3000), `BENCH_CONCURRENCY` (default 50),
 * `BENCH_RUNS` (default 5). Profile with
 * `node --cpu-prof --cpu-prof-dir=bench-results/prof --import tsx bench/ingest-accept.ts`, then
 * `node --import tsx bench/ingest-accept.ts --summarise <file.cpuprofile>`.
 */
import { fork } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Agent, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApp } from '@postern/ingest';
import { createIdFactory } from '@postern/shared';
import { createDeliveryQueues, createRedisConnection, createStore } from '@postern/store';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import { BENCH_ADMIN_TOKEN, REPO_ROOT, startBenchRedis } from './bench-support.js';
import { summariseCpuProfile } from './cpu-profile.js';
import { Postern } from '@postern/client';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 3000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 50);
const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const MONITOR_EVENTS = 200;

interface LoadRequest {
  base: string;
  apiKey: string;
  events: number;
  concurrency: number;
}
interface LoadResult {
  wallMs: number;
  accepted: number;
  other: Record<string, number>;
}

/** The load generator (child process): keep-alive HTTP, `concurrency` requests in flight. */
async function runLoad(req: LoadRequest): Promise<LoadResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: req.concurrency });
  const url = new URL(req.base);
  const post = (i: number) =>
    new Promise<number>((resolve, reject) => {
      const payload = JSON.stringify({ type: 'order.created', data: { orderId: `ord_${i}`, amount: 1299, currency: 'EUR', items: [{ sku: 'sku_1', qty: 2 }], note: 'x'.repeat(120) } });
      const r = request(
        { host: url.hostname, port: url.port, path: '/v1/events', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), authorization: `Bearer ${req.apiKey}` } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      r.on('error', reject);
      r.end(payload);
    });
  let next = 0;
  let accepted = 0;
  const other: Record<string, number> = {};
  const started = performance.now();
  await Promise.all(
    Array.from({ length: req.concurrency }, async () => {
      while (next < req.events) {
        const status = await post(next++);
        if (status === 202) accepted++;
        else other[status] = (other[status] ?? 0) + 1;
      }
    }),
  );
  const wallMs = performance.now() - started;
  agent.destroy();
  return { wallMs, accepted, other };
}

if (process.argv[2] === '--load') {
  process.on('message', (msg: LoadRequest) => {
    void runLoad(msg).then((r) => process.send!(r));
  });
} else if (process.argv[2] === '--summarise') {
  const summary = summariseCpuProfile(process.argv[3]!, 12);
  console.log(JSON.stringify(summary, null, 2));
} else {
  await main();
}

/** Waits until a fail-fast connection is ready (its commands are refused before that). */
async function ready(connection: Redis): Promise<void> {
  if (connection.status !== 'ready') await new Promise((resolve) => connection.once('ready', resolve));
}

/** Builds ingest the way `main.ts` does, on `prefix`, listening on 127.0.0.1:0. */
async function startIngest(redisUrl: string, prefix: string) {
  const redis = createRedisConnection(redisUrl, 'api');
  const queueRedis = createRedisConnection(redisUrl, 'api');
  await Promise.all([ready(redis), ready(queueRedis)]);
  const store = createStore({ redis, prefix });
  const queues = createDeliveryQueues(queueRedis, store.keys);
  const app = createApp({
    redis,
    store,
    queues,
    clock: { now: () => Date.now() },
    ids: createIdFactory(),
    logger: pino({ level: 'info' }, pino.destination({ dest: '/dev/null', sync: false })),
    config: { adminToken: BENCH_ADMIN_TOKEN, maxBodyBytes: 1024 * 1024, allowList: ['127.0.0.1'], secretRotationGraceMs: 60_000 },
  });
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await queues.close();
      await redis.quit();
      await queueRedis.quit();
    },
  };
}

async function commandCalls(client: Redis): Promise<Map<string, number>> {
  const info = await client.info('commandstats');
  const calls = new Map<string, number>();
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(m[1]!, Number(m[2]));
  return calls;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

async function main(): Promise<void> {
  const log = (line: string) => console.error(line);
  const redis = await startBenchRedis(log);
  const prefix = `bench-accept:${process.pid}`;
  const ingest = await startIngest(redis.url, prefix);
  const load = fork(fileURLToPath(import.meta.url), ['--load'], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  const fire = (apiKey: string, events: number, concurrency: number) =>
    new Promise<LoadResult>((resolve) => {
      load.once('message', (r) => resolve(r as LoadResult));
      load.send({ base: ingest.base, apiKey, events, concurrency } satisfies LoadRequest);
    });

  const results: Record<string, unknown>[] = [];
  try {
    for (const endpointCount of [1, 10]) {
      const org = await new Postern({ baseUrl: ingest.base, adminToken: BENCH_ADMIN_TOKEN }).orgs.create({ name: `bench-${endpointCount}` });
      const client = new Postern({ baseUrl: ingest.base, apiKey: org.apiKey });
      for (let i = 0; i < endpointCount; i++) {
        await client.endpoints.create({ url: `http://127.0.0.1:9/hook-${i}`, eventTypes: ['order.created', 'order.paid'] });
      }
      await fire(org.apiKey, 300, CONCURRENCY); // warm-up: JIT, script loading, connections

      // Commands ingest itself sends per event (MONITOR marks the ones a Lua script ran).
      const monitored = redis.client.duplicate();
      const monitor = (await monitored.monitor()) as unknown as Redis;
      let clientCommands = 0;
      const byCommand = new Map<string, number>();
      monitor.on('monitor', (_time: string, args: string[], source: string) => {
        if (source === 'lua') return;
        const name = (args[0] ?? '').toLowerCase();
        if (name === 'monitor' || name === 'info') return;
        clientCommands++;
        byCommand.set(name, (byCommand.get(name) ?? 0) + 1);
      });
      await new Promise((r) => setTimeout(r, 100));
      await fire(org.apiKey, MONITOR_EVENTS, 10);
      await new Promise((r) => setTimeout(r, 200));
      monitor.disconnect();
      monitored.disconnect();
      const sentPerEvent = clientCommands / MONITOR_EVENTS;
      const sentBreakdown = Object.fromEntries([...byCommand.entries()].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, Math.round((v / MONITOR_EVENTS) * 100) / 100]));

      const runs: { eventsPerS: number; cpuMsPerEvent: number; redisCommandsPerEvent: number }[] = [];
      for (let run = 0; run < RUNS; run++) {
        const before = await commandCalls(redis.client);
        const cpu = process.cpuUsage();
        const r = await fire(org.apiKey, EVENTS, CONCURRENCY);
        const used = process.cpuUsage(cpu);
        const after = await commandCalls(redis.client);
        let commands = 0;
        for (const [name, calls] of after) if (name !== 'info') commands += calls - (before.get(name) ?? 0);
        if (r.accepted !== EVENTS) throw new Error(`run ${run}: ${r.accepted}/${EVENTS} accepted, others ${JSON.stringify(r.other)}`);
        runs.push({
          eventsPerS: Math.round((r.accepted / r.wallMs) * 1000),
          cpuMsPerEvent: Math.round(((used.user + used.system) / 1000 / r.accepted) * 1000) / 1000,
          redisCommandsPerEvent: Math.round((commands / r.accepted) * 10) / 10,
        });
        log(`${endpointCount} endpoint(s), run ${run + 1}/${RUNS}: ${JSON.stringify(runs[runs.length - 1])}`);
      }
      results.push({
        endpoints: endpointCount,
        eventsPerS: median(runs.map((r) => r.eventsPerS)),
        cpuMsPerEvent: median(runs.map((r) => r.cpuMsPerEvent)),
        redisCommandsPerEvent: median(runs.map((r) => r.redisCommandsPerEvent)),
        commandsSentPerEvent: Math.round(sentPerEvent * 100) / 100,
        sentBreakdown,
        runs,
      });
    }
  } finally {
    load.kill();
    await ingest.close();
    await redis.stop();
  }
  const report = { events: EVENTS, concurrency: CONCURRENCY, runs: RUNS, node: process.version, results };
  mkdirSync(path.join(REPO_ROOT, 'bench-results'), { recursive: true });
  writeFileSync(path.join(REPO_ROOT, 'bench-results', 'ingest-accept.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(JSON.stringify(report.results.map(({ runs: _runs, ...r }) => r), null, 2));
}

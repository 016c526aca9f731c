/**
 * Ingest CPU per event of `POST /v1/events/batch` (100 events a request) against `POST /v1/events`,
 * in the same run on the same ingest process: part of `npm run bench` (bench/run.ts), and alone as
 * `npm run bench:batch`.
 *
 * Ingest runs as its own process with no sender (only the accept path is measured: every event,
 * its delivery and its job are in Redis before its answer, as always), one org with one endpoint.
 * Both routes get the same events (`{type, data}` as the throughput runs send them, no idempotency
 * key) from producers in this process, whose CPU is not charged: `producers` requests in flight
 * for the single route, `batchProducers` for the batch route. After a warm-up of both, rounds
 * alternate single and batch (so a drift of the machine's load hits both alike), each of `events`
 * events; ingest's CPU (/proc/<pid>/stat, bench/resource-cost.ts) and Redis commands (INFO
 * commandstats) are summed per route and divided by the events accepted.
 *
 * Alone (`npm run bench:batch`): a private redis-server, the apps compiled as in production
 * (BENCH_APP_MODE=source: tsx), BENCH_BATCH_EVENTS per round (default 5000), BENCH_BATCH_ROUNDS
 * (default 3); BENCH_PROFILE=always also runs the batch route alone under `--cpu-prof` and prints
 * ingest's top costs. Writes bench-results/batch-ingest.json.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Redis } from 'ioredis';
import { createOrgs, type BenchOrg } from './scenarios.js';
import { jsonClient, REPO_ROOT, startBenchRedis, startPosternProcesses, type BenchRedis, type PosternProcesses } from './bench-support.js';
import { summariseCpuProfile, type ProfileSummary } from './cpu-profile.js';
import { commandCalls, cpuTimeMs } from './resource-cost.js';

/** Events per batch request: the API's most. */
export const EVENTS_PER_BATCH = 100;
/** The goal: batch ingest CPU per event at most this share of the single route's. */
export const BATCH_CPU_RATIO_TARGET = 0.4;

/** What `measureBatchIngest` reports; CPU in ms per accepted event. */
export interface BatchIngestCost {
  /** Ingest CPU per event through the batch route. */
  cpuMsPerEvent: number;
  /** Ingest CPU per event through `POST /v1/events`, same run. */
  singleRouteCpuMsPerEvent: number;
  /** `cpuMsPerEvent / singleRouteCpuMsPerEvent`; the goal is ≤ {@link BATCH_CPU_RATIO_TARGET}. */
  ratio: number;
  eventsPerBatch: number;
  /** Events measured per route (warm-up left out). */
  events: number;
  eventsPerSecond: { batch: number; single: number };
  /** Redis commands per event (Lua scripts' own included). */
  redisCommandsPerEvent: { batch: number; single: number };
  loadAverage: number[];
}

/** Settings of one measurement. */
export interface BatchIngestOptions {
  /** Events per round and route. */
  events: number;
  rounds: number;
  /** Single-route requests in flight. */
  producers: number;
  /** Batch requests in flight. */
  batchProducers: number;
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;
const eventBody = (n: number) => ({ type: 'bench.event', data: { n, note: 'benchmark' } });

/** Sends `events` events to one route with `inFlight` requests at a time; resolves with the events accepted. */
async function send(p: PosternProcesses, org: BenchOrg, route: 'single' | 'batch', events: number, inFlight: number): Promise<number> {
  const api = jsonClient(p.apiBase, inFlight);
  let next = 0;
  let accepted = 0;
  try {
    await Promise.all(
      Array.from({ length: inFlight }, async () => {
        while (next < events) {
          if (route === 'single') {
            const r = await api.post('/v1/events', eventBody(next++), org.apiKey);
            if (r.status !== 202) throw new Error(`POST /v1/events: ${r.status} ${JSON.stringify(r.body)}`);
            accepted++;
            continue;
          }
          const size = Math.min(EVENTS_PER_BATCH, events - next);
          const batch = Array.from({ length: size }, () => eventBody(next++));
          const r = await api.post('/v1/events/batch', { events: batch }, org.apiKey);
          if (r.status !== 207) throw new Error(`POST /v1/events/batch: ${r.status} ${JSON.stringify(r.body)}`);
          for (const result of r.body.results as { status: number }[]) {
            if (result.status !== 202) throw new Error(`POST /v1/events/batch: an event answered ${JSON.stringify(result)}`);
            accepted++;
          }
        }
      }),
    );
  } finally {
    api.close();
  }
  return accepted;
}

/** Ingest CPU and Redis commands of one round of one route. */
async function measureRound(redis: Redis, p: PosternProcesses, org: BenchOrg, route: 'single' | 'batch', events: number, inFlight: number): Promise<{ cpuMs: number; commands: number; events: number; seconds: number }> {
  const pid = p.ingest.child.pid;
  const callsBefore = await commandCalls(redis);
  const cpuBefore = cpuTimeMs(pid);
  const started = performance.now();
  const accepted = await send(p, org, route, events, inFlight);
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = cpuTimeMs(pid);
  const callsAfter = await commandCalls(redis);
  if (cpuBefore === null || cpuAfter === null) throw new Error('ingest CPU time could not be read from /proc');
  // Less the INFO that opened the window.
  let commands = -1;
  for (const [name, calls] of callsAfter) commands += calls - (callsBefore.get(name) ?? 0);
  return { cpuMs: cpuAfter - cpuBefore, commands, events: accepted, seconds };
}

type Totals = Record<'single' | 'batch', { cpuMs: number; commands: number; events: number; seconds: number }>;

/** Warms up and measures `routes` on an ingest of its own (no sender), rounds alternating between them. */
async function runRoutes(redis: BenchRedis, opts: BatchIngestOptions, routes: readonly ('single' | 'batch')[], log: (line: string) => void, nodeArgs?: (app: 'ingest' | 'sender') => string[]): Promise<Totals> {
  const prefix = `bench-batch:${process.pid}-${Date.now().toString(36)}`;
  const p = await startPosternProcesses({ redisUrl: redis.url, prefix, concurrency: opts.producers, withSender: false, nodeArgs });
  const inFlight = (route: 'single' | 'batch') => (route === 'single' ? opts.producers : opts.batchProducers);
  try {
    // No sender runs: the endpoint is never called.
    const [org] = await createOrgs(p.apiBase, { orgs: 1, endpointsPerOrg: 1, url: 'http://127.0.0.1:9/never', policy: 'standard' });
    // Warm-up: V8's optimiser, connection pools, script loading.
    for (const route of routes) await send(p, org!, route, 3000, inFlight(route));
    const totals: Totals = { single: { cpuMs: 0, commands: 0, events: 0, seconds: 0 }, batch: { cpuMs: 0, commands: 0, events: 0, seconds: 0 } };
    for (let round = 1; round <= opts.rounds; round++) {
      for (const route of routes) {
        const r = await measureRound(redis.client, p, org!, route, opts.events, inFlight(route));
        const t = totals[route];
        t.cpuMs += r.cpuMs;
        t.commands += r.commands;
        t.events += r.events;
        t.seconds += r.seconds;
        log(`    round ${round}/${opts.rounds}, ${route === 'single' ? 'POST /v1/events      ' : `batch of ${EVENTS_PER_BATCH}`}: ${r.events} events, ${Math.round(r.events / r.seconds)}/s, ingest ${round3(r.cpuMs / r.events)} CPU ms per event`);
      }
    }
    return totals;
  } finally {
    await p.stop();
  }
}

/**
 * Measures batch against single-route ingest CPU per event on an ingest of its own (no sender),
 * on `redis`. `log` reports each round.
 */
export async function measureBatchIngest(redis: BenchRedis, opts: BatchIngestOptions, log: (line: string) => void): Promise<BatchIngestCost> {
  const totals = await runRoutes(redis, opts, ['single', 'batch'], log);
  const batch = totals.batch.cpuMs / totals.batch.events;
  const single = totals.single.cpuMs / totals.single.events;
  const perEvent = (route: 'single' | 'batch') => Math.round((totals[route].commands / totals[route].events) * 100) / 100;
  return {
    cpuMsPerEvent: round3(batch),
    singleRouteCpuMsPerEvent: round3(single),
    ratio: Math.round((batch / single) * 100) / 100,
    eventsPerBatch: EVENTS_PER_BATCH,
    events: totals.batch.events,
    eventsPerSecond: { batch: Math.round(totals.batch.events / totals.batch.seconds), single: Math.round(totals.single.events / totals.single.seconds) },
    redisCommandsPerEvent: { batch: perEvent('batch'), single: perEvent('single') },
    loadAverage: loadavg().map((l) => Math.round(l * 10) / 10),
  };
}

/** One line for the report. */
export function batchIngestLine(c: BatchIngestCost): string {
  return `Batch ingest (${c.eventsPerBatch} events a request, ${c.events} events per route, same ingest): ${c.cpuMsPerEvent} CPU ms per event against ${c.singleRouteCpuMsPerEvent} through POST /v1/events = ${c.ratio}× (target ≤ ${BATCH_CPU_RATIO_TARGET}); ${c.eventsPerSecond.batch} vs ${c.eventsPerSecond.single} events/s; ${c.redisCommandsPerEvent.batch} vs ${c.redisCommandsPerEvent.single} Redis commands per event`;
}

/** The batch route alone on an ingest under `--cpu-prof`: its top costs. */
export async function profileBatch(redis: BenchRedis, opts: BatchIngestOptions, log: (line: string) => void): Promise<ProfileSummary> {
  const dir = path.join(REPO_ROOT, 'bench-results', 'profiles', 'batch-ingest');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  await runRoutes(redis, { ...opts, rounds: 1 }, ['batch'], log, () => ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
  return readdirSync(dir)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => summariseCpuProfile(path.join(dir, f), 15))
    .sort((a, b) => b.busyMs - a.busyMs)[0]!;
}

async function main(): Promise<void> {
  const log = (line: string) => process.stdout.write(`[bench:batch] ${line}\n`);
  if (process.env.BENCH_APP_MODE !== 'source') {
    log('building the apps (npm run build)');
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    process.env.POSTERN_APP_MODE = 'compiled';
  }
  const opts: BatchIngestOptions = { events: Number(process.env.BENCH_BATCH_EVENTS ?? 5000), rounds: Number(process.env.BENCH_BATCH_ROUNDS ?? 3), producers: 16, batchProducers: 4 };
  const redis = await startBenchRedis(log);
  try {
    log(`load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    const cost = await measureBatchIngest(redis, opts, log);
    console.log(batchIngestLine(cost));
    let profile: ProfileSummary | null = null;
    if (process.env.BENCH_PROFILE === 'always') {
      log('the batch route under --cpu-prof');
      profile = await profileBatch(redis, { ...opts, events: opts.events * 2 }, log);
      console.log(`Top costs of ingest on the batch route (busy ${profile.busyMs} ms of ${profile.wallMs} ms):`);
      console.table(profile.components.slice(0, 8));
      console.table(profile.functions.slice(0, 15));
    }
    mkdirSync(path.join(REPO_ROOT, 'bench-results'), { recursive: true });
    writeFileSync(path.join(REPO_ROOT, 'bench-results', 'batch-ingest.json'), `${JSON.stringify({ when: new Date().toISOString(), node: process.version, batchIngest: cost, profile }, null, 2)}\n`);
  } finally {
    await redis.stop();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(`[bench:batch] failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      process.exit(1);
    },
  );
}

/**
 * `npm run bench:transformation`: the transformation run of `npm run bench` on its own, repeated.
 * One set of processes (ingest, sender, private Redis, receiver); a plain 1-endpoint org and one
 * whose endpoint has the 20-line field-picking transformation (bench/transformation-cost.ts), both
 * warmed up; then BENCH_ROUNDS (default 5) pairs of full-speed runs, each in its own cost window,
 * plain first in odd pairs and transformed first in even ones (a drift of the machine's speed
 * then favours neither). Each pair gives ratios of CPU ms per delivery (ingest, sender, Redis,
 * total); the report prints every pair and the median ratios, Redis commands per delivery, the
 * transformation's own p99 from the sender's histogram over each transformed run, and at the end
 * the exact call times of the same code in a pool in this process (`sandboxCallTimes`).
 *
 * BENCH_PROFILE=1 runs the sender under `--cpu-prof` (every thread writes a profile: the main
 * thread and each sandbox thread) and prints each thread's top costs after the runs; its CPU
 * figures are then inflated by the profiler (compare ratios, not ms).
 * Other settings: BENCH_DURATION_S (8), BENCH_CONCURRENCY (50), BENCH_APP_MODE (compiled | source).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createKeySchema, DELIVERY_QUEUE_NAME } from '@postern/store';
import type { PolicyInput } from '@postern/client';
import { REPO_ROOT, startBenchRedis, startPosternProcesses, startReceiverProcess } from './bench-support.js';
import { summariseCpuProfile } from './cpu-profile.js';
import { clockTicksPerSecond, openCostWindow, redisServerPid, waitForNoActiveJobs, type DeliveryCost } from './resource-cost.js';
import { createOrgs, posternThroughput, warmUp } from './scenarios.js';
import { histogramP99Ms, PICK_FIELDS_CODE, sandboxCallTimes } from './transformation-cost.js';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 8);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 50);
const PROFILE = process.env.BENCH_PROFILE === '1';
/** BENCH_ONLY=plain or transformed: that org's runs alone (to profile one kind of run); ratios are then not computed. */
const ONLY = process.env.BENCH_ONLY as 'plain' | 'transformed' | undefined;
const APP_MODE = process.env.BENCH_APP_MODE === 'source' ? 'source' : 'compiled';
const POLICY: PolicyInput = { preset: 'standard', concurrency: { perEndpoint: CONCURRENCY, perOrg: CONCURRENCY } };
const log = (line: string) => process.stdout.write(`[transformation] ${line}\n`);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const r2 = (n: number) => Math.round(n * 100) / 100;

/** CPU ms of each thread of a process (Linux /proc/<pid>/task/<tid>/stat: utime + stime), by thread id. */
function threadCpuMs(pid: number | undefined): Map<string, { name: string; ms: number }> {
  const out = new Map<string, { name: string; ms: number }>();
  if (pid === undefined) return out;
  const ticks = clockTicksPerSecond();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
        const close = stat.lastIndexOf(')');
        const name = stat.slice(stat.indexOf('(') + 1, close);
        const fields = stat.slice(close + 2).split(' ');
        out.set(tid, { name, ms: ((Number(fields[11]) + Number(fields[12])) * 1000) / ticks });
      } catch {
        // The thread ended meanwhile.
      }
    }
  } catch {
    // The process is gone.
  }
  return out;
}

/** The sender's CPU per delivery by thread between two readings, busiest first: the main thread, the sandbox threads, libuv's pool. */
function threadsPerDelivery(before: Map<string, { name: string; ms: number }>, after: Map<string, { name: string; ms: number }>, deliveries: number, mainTid: string): string {
  return [...after.entries()]
    .map(([tid, t]) => ({ label: tid === mainTid ? 'main' : `${t.name}#${tid}`, ms: (t.ms - (before.get(tid)?.ms ?? 0)) / Math.max(1, deliveries) }))
    .filter((t) => t.ms >= 0.005)
    .sort((a, b) => b.ms - a.ms)
    .map((t) => `${t.label} ${t.ms.toFixed(3)}`)
    .join(', ');
}

async function main(): Promise<void> {
  if (APP_MODE === 'compiled') {
    log('building the apps (npm run build)');
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'inherit'] });
    process.env.POSTERN_APP_MODE = 'compiled';
  }
  const profileDir = path.join(REPO_ROOT, 'bench-results', 'profiles', `transformation-sender${ONLY ? `-${ONLY}` : ''}`);
  if (PROFILE) {
    rmSync(profileDir, { recursive: true, force: true });
    mkdirSync(profileDir, { recursive: true });
  }
  const redis = await startBenchRedis(log);
  const redisPid = await redisServerPid(redis.client);
  const receiver = await startReceiverProcess();
  const p = await startPosternProcesses({ redisUrl: redis.url, prefix: `bench:${randomBytes(4).toString('hex')}`, concurrency: CONCURRENCY, nodeArgs: (app) => (PROFILE && app === 'sender' ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []) });
  const scrape = () => fetch(`${p.senderBase}/metrics`).then((r) => r.text());
  const activeKey = `${createKeySchema(p.prefix).queuePrefix(0)}:${DELIVERY_QUEUE_NAME}:active`;
  try {
    log(`apps ${APP_MODE}, concurrency ${CONCURRENCY}, ${ROUNDS} pairs of ${DURATION_S} s runs${PROFILE ? ', sender under --cpu-prof' : ''}; load average ${loadavg().map((n) => n.toFixed(1)).join(' ')}`);
    const [plainOrg] = await createOrgs(p.apiBase, { orgs: 1, endpointsPerOrg: 1, url: `${receiver.base}/ok`, policy: POLICY });
    const [transformOrg] = await createOrgs(p.apiBase, { orgs: 1, endpointsPerOrg: 1, url: `${receiver.base}/ok`, policy: POLICY, request: { transformation: { code: PICK_FIELDS_CODE, enabled: true } } });
    if (ONLY !== 'transformed') await warmUp(p, receiver, plainOrg!, { events: 3000, producers: 16 });
    if (ONLY !== 'plain') await warmUp(p, receiver, transformOrg!, { events: 3000, producers: 16 });
    const measure = async (org: typeof plainOrg): Promise<DeliveryCost & { deliveriesPerSecond: number; transformedBodies: number; threads: string }> => {
      const senderPid = p.sender?.child.pid;
      const window = await openCostWindow({ redis: redis.client, pids: { ingest: p.ingest.child.pid, sender: senderPid, redis: redisPid } });
      const threadsBefore = threadCpuMs(senderPid);
      const run = await posternThroughput(p, receiver, [org!], { durationS: DURATION_S, producers: 16, maxBacklog: 4 * CONCURRENCY });
      const probes = await waitForNoActiveJobs(redis.client, activeKey);
      const threads = threadsPerDelivery(threadsBefore, threadCpuMs(senderPid), run.deliveries, String(senderPid));
      const cost = await window.end(run.deliveries, { llen: probes });
      return { ...cost, deliveriesPerSecond: Math.round(run.deliveriesPerSecond), transformedBodies: (await receiver.stats()).transformedBodies, threads };
    };
    const ratios: Record<'ingest' | 'sender' | 'redis' | 'total', number[]> = { ingest: [], sender: [], redis: [], total: [] };
    if (ONLY) {
      for (let round = 1; round <= ROUNDS; round++) {
        const c = await measure(ONLY === 'plain' ? plainOrg : transformOrg);
        log(`${ONLY} run ${round}: ${c.deliveriesPerSecond}/s, ${c.deliveries} deliveries, sender ${c.cpuMsPerDelivery.sender} CPU ms per delivery; threads: ${c.threads}`);
      }
    }
    let histogramBefore = '';
    for (let round = 1; !ONLY && round <= ROUNDS; round++) {
      const plainFirst = round % 2 === 1;
      const plain = plainFirst ? await measure(plainOrg) : null;
      histogramBefore = await scrape();
      const transformed = await measure(transformOrg);
      const after = await scrape();
      const plainRun = plain ?? (await measure(plainOrg));
      const h = histogramP99Ms(after, 'postern_transformation_duration_seconds', histogramBefore);
      const row = (name: string, c: typeof transformed) => `${name}: ${c.deliveriesPerSecond}/s, ${c.deliveries} deliveries, CPU ms per delivery ingest ${c.cpuMsPerDelivery.ingest} sender ${c.cpuMsPerDelivery.sender} redis ${c.cpuMsPerDelivery.redis} total ${c.cpuMsPerDelivery.total}, ${c.redisCommandsPerDelivery} Redis commands; sender threads, CPU ms per delivery: ${c.threads}`;
      const pair: Partial<Record<keyof typeof ratios, number>> = {};
      for (const k of Object.keys(ratios) as (keyof typeof ratios)[]) {
        const a = transformed.cpuMsPerDelivery[k];
        const b = plainRun.cpuMsPerDelivery[k];
        if (a !== null && b !== null && b > 0) ratios[k].push((pair[k] = r2(a / b)));
      }
      log(`pair ${round}: ${row('plain', plainRun)}`);
      log(`pair ${round}: ${row('transformed', transformed)} (${transformed.transformedBodies} bodies transformed)`);
      log(`pair ${round}: ratio sender ${pair.sender} total ${pair.total}; transformation p99 ≤ ${h.p99Ms} ms over ${h.count} calls`);
    }
    const calls = await sandboxCallTimes();
    log(`the same code called ${calls.calls} times in a pool like the sender's (this process), exact times in its thread: p50 ${calls.p50Ms} ms, p99 ${calls.p99Ms} ms, max ${calls.maxMs} ms; ${calls.cpuMsPerCall} CPU ms per call`);
    if (!ONLY) log(`median ratio over ${ROUNDS} pairs: ingest ${median(ratios.ingest)} sender ${median(ratios.sender)} redis ${median(ratios.redis)} total ${median(ratios.total)} (each: ${ratios.total.join(', ')})`);
  } finally {
    await p.stop();
    await receiver.stop();
    await redis.stop();
  }
  if (PROFILE) {
    for (const f of readdirSync(profileDir).filter((n) => n.endsWith('.cpuprofile'))) {
      const s = summariseCpuProfile(path.join(profileDir, f), 12);
      if (s.busyMs < 500) continue;
      log(`profile ${f}: busy ${s.busyMs} ms`);
      for (const c of s.components) log(`    ${c.percent}% ${c.ms} ms ${c.name}`);
      for (const c of s.functions) log(`      ${c.percent}% ${c.ms} ms ${c.name}`);
    }
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);

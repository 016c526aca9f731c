/**
 * `npm run bench:heap`: what V8 heap settings cost and save, compared in one run. For each setting
 * (a set of node flags given to both apps), fresh ingest and sender processes on the private Redis:
 * ingest's RSS once ready and idle, then one endpoint warmed up with 3,000 deliveries and a
 * full-speed run like `npm run bench`'s 1-endpoint run, with each app's peak RSS (sampled every
 * 200 ms) and CPU ms per delivery (bench/resource-cost.ts). Settings run in turn, round after
 * round, so a drift of the machine's load hits them alike; the report takes each setting's
 * median over the rounds.
 *
 * Settings (environment): BENCH_HEAP_SETTINGS (`;`-separated flag sets, `none` = Node's own
 * defaults; default: none, `--max-old-space-size=384` with `--max-semi-space-size=` 2, 4 and 8,
 * the apps' defaults (scripts/node-flags.mjs: the 4 MB one with `--single-threaded-gc`), and those
 * with `--initial-old-space-size=64`), BENCH_HEAP_ROUNDS (2),
 * BENCH_DURATION_S (10), BENCH_CONCURRENCY (50), BENCH_APP_MODE (compiled | source).
 * Writes bench-results/heap-settings.json.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { createKeySchema, DELIVERY_QUEUE_NAME } from '@postern/store';
import type { PolicyInput } from '@postern/client';
import { APP_NODE_FLAGS } from '../scripts/node-flags.mjs';
import { buildCompiledApps, REPO_ROOT, rssBytes, startBenchRedis, startPosternProcesses, startReceiverProcess } from './bench-support.js';
import { openCostWindow, redisServerPid, waitForNoActiveJobs } from './resource-cost.js';
import { createOrgs, posternThroughput, warmUp } from './scenarios.js';

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 50);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const ROUNDS = Number(process.env.BENCH_HEAP_ROUNDS ?? 2);
const SETTINGS = (process.env.BENCH_HEAP_SETTINGS ?? ['none', ...[2, 4, 8].map((mb) => `--max-old-space-size=384 --max-semi-space-size=${mb}`), APP_NODE_FLAGS.join(' '), `${APP_NODE_FLAGS.join(' ')} --initial-old-space-size=64`].join(';'))
  .split(';')
  .map((s) => s.trim())
  .filter(Boolean);
const WARM_UP_EVENTS = 3000;
const ROOMY_POLICY: PolicyInput = { preset: 'standard', concurrency: { perEndpoint: CONCURRENCY, perOrg: CONCURRENCY } };

const log = (line: string) => process.stdout.write(`[bench:heap] ${line}\n`);
const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

/** One setting's figures in one round. */
interface HeapRun {
  idleIngestRssBytes: number;
  peakRssBytes: { ingest: number; sender: number };
  cpuMsPerDelivery: { ingest: number | null; sender: number | null; redis: number | null; total: number | null };
  deliveriesPerSecond: number;
}

async function main(): Promise<void> {
  if (process.env.BENCH_APP_MODE !== 'source') buildCompiledApps(log);
  const redis = await startBenchRedis(log);
  const redisPid = await redisServerPid(redis.client);
  const receiver = await startReceiverProcess();
  const runs = new Map<string, HeapRun[]>(SETTINGS.map((s) => [s, []]));
  log(`settings: ${SETTINGS.join(' | ')}; ${ROUNDS} rounds, ${DURATION_S} s full speed each; load average ${loadavg().map((n) => n.toFixed(1)).join(' ')}`);
  try {
    for (let round = 1; round <= ROUNDS; round++) {
      for (const setting of SETTINGS) {
        const flags = setting === 'none' ? [] : setting.split(' ').filter(Boolean);
        const prefix = `bench:${randomBytes(4).toString('hex')}`;
        const p = await startPosternProcesses({ redisUrl: redis.url, prefix, concurrency: CONCURRENCY, baseNodeArgs: flags });
        try {
          const idleIngestRssBytes = rssBytes(p.ingest.child.pid);
          const [org] = await createOrgs(p.apiBase, { orgs: 1, endpointsPerOrg: 1, url: `${receiver.base}/ok`, policy: ROOMY_POLICY });
          await warmUp(p, receiver, org!, { events: WARM_UP_EVENTS, producers: 16 });
          const window = await openCostWindow({ redis: redis.client, pids: { ingest: p.ingest.child.pid, sender: p.sender?.child.pid, redis: redisPid }, otherPids: { receiver: receiver.pid } });
          const run = await posternThroughput(p, receiver, [org!], { durationS: DURATION_S, producers: 16, maxBacklog: 4 * CONCURRENCY });
          const probes = await waitForNoActiveJobs(redis.client, `${createKeySchema(prefix).queuePrefix(0)}:${DELIVERY_QUEUE_NAME}:active`);
          const cost = await window.end(run.deliveries, { llen: probes });
          const r: HeapRun = { idleIngestRssBytes, peakRssBytes: run.peakRssBytes, cpuMsPerDelivery: cost.cpuMsPerDelivery, deliveriesPerSecond: Math.round(run.deliveriesPerSecond) };
          runs.get(setting)!.push(r);
          log(`round ${round}, ${setting}: idle ingest ${mb(idleIngestRssBytes)} MB; peak ingest ${mb(r.peakRssBytes.ingest)} MB, sender ${mb(r.peakRssBytes.sender)} MB; CPU ms per delivery ingest ${r.cpuMsPerDelivery.ingest}, sender ${r.cpuMsPerDelivery.sender}, total ${r.cpuMsPerDelivery.total}; ${r.deliveriesPerSecond} deliveries/s`);
        } finally {
          await p.stop();
        }
      }
    }
  } finally {
    await receiver.stop();
    await redis.stop();
  }
  const summary = SETTINGS.map((setting) => {
    const rs = runs.get(setting)!;
    const med = (pick: (r: HeapRun) => number | null) => {
      const values = rs.map(pick).filter((v): v is number => v !== null);
      return values.length ? Math.round(median(values) * 1000) / 1000 : null;
    };
    return {
      setting,
      default: setting === (APP_NODE_FLAGS.join(' ') || 'none'),
      idleIngestRssMB: mb(med((r) => r.idleIngestRssBytes) ?? 0),
      peakRssMB: { ingest: mb(Math.max(...rs.map((r) => r.peakRssBytes.ingest))), sender: mb(Math.max(...rs.map((r) => r.peakRssBytes.sender))) },
      cpuMsPerDelivery: { ingest: med((r) => r.cpuMsPerDelivery.ingest), sender: med((r) => r.cpuMsPerDelivery.sender), total: med((r) => r.cpuMsPerDelivery.total) },
      deliveriesPerSecond: med((r) => r.deliveriesPerSecond),
      runs: rs,
    };
  });
  const outDir = path.join(REPO_ROOT, 'bench-results');
  mkdirSync(outDir, { recursive: true });
  writeFileSync(path.join(outDir, 'heap-settings.json'), `${JSON.stringify({ when: new Date().toISOString(), rounds: ROUNDS, durationS: DURATION_S, loadAverageAtEnd: loadavg(), settings: summary }, null, 2)}\n`);
  console.log(`Heap settings, 1 endpoint at full speed (peak RSS: the highest of ${ROUNDS} rounds; CPU ms per delivery and deliveries/s: medians)`);
  console.table(
    summary.map((s) => ({
      setting: s.setting + (s.default ? ' (default)' : ''),
      'idle ingest MB': s.idleIngestRssMB,
      'peak ingest MB': s.peakRssMB.ingest,
      'peak sender MB': s.peakRssMB.sender,
      'ingest CPU ms': s.cpuMsPerDelivery.ingest,
      'sender CPU ms': s.cpuMsPerDelivery.sender,
      'total CPU ms': s.cpuMsPerDelivery.total,
      'deliveries/s': s.deliveriesPerSecond,
    })),
  );
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`[bench:heap] failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);

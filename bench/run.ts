/**
 * `npm run bench`: one command, one run, side by side on the same Redis and the same receiver.
 *
 * 1. Bare BullMQ: `addBulk` + a no-op worker at the sender's concurrency.
 * 2. Bare got: POSTs of an envelope-sized body to the receiver at the same concurrency.
 * 3. Postern end to end (POST /v1/events → ingest → Redis → sender → receiver), ingest and sender as
 *    their own processes: 1 endpoint, and 100 endpoints across 10 orgs; then 1 endpoint at a fixed
 *    1,000 events/s and at a fixed 250 events/s for latency below saturation.
 *    Right after the plain 1-endpoint run, two more like it (bench/request-settings-cost.ts): its
 *    endpoint with bearer auth and three static headers (one secret), and the plain endpoint through
 *    a forward proxy on loopback (bench/forward-proxy.ts, its own process), each as a ratio of CPU
 *    per delivery to the plain run.
 * Plus Redis memory per pending delivery (payload excluded), and a scale point: 100,000 pending
 * delayed deliveries — Redis memory, and how late scheduled retries fire among them. And batch
 * ingest (bench/batch-ingest.ts, also `npm run bench:batch`): ingest CPU per event of
 * `POST /v1/events/batch` at 100 events a request against `POST /v1/events`, in the same run
 * (`batchIngest` in bench.json; goal ≤ 0.4×, profiled under `--cpu-prof` when missed).
 *
 * The full-speed runs and the 250/s run also measure what a delivery costs (bench/resource-cost.ts):
 * CPU ms of ingest, the sender and Redis (/proc/<pid>/stat) and Redis commands (INFO
 * commandstats), over the run until the sender has finished its last job, and from them the cost
 * per million deliveries (CPU seconds by process; Redis used_memory growth per delivery × the
 * delivery log's retention, GB·hours).
 *
 * Goals (reported, not gates): (3) ≥ 0.6 × min(1, 2); 1 endpoint ≥ 0.5 × and 100 endpoints ≥ 0.7 ×
 * bare got; first attempt p99 ≤ 10 ms at BENCH_RATE_LOW; each app's peak RSS ≤ 150 MB in every run
 * and ingest's ≤ 90 MB once ready (with the apps' default node flags, scripts/node-flags.mjs); p99 ≤ 50 ms at 1,000 events/s; retries ≤ 1 s
 * late with 100k pending; ≤ 2 KB Redis per pending delivery (used_memory); by MEMORY USAGE per key
 * (bench/finished-memory.ts, with the byte breakdown), ≤ 1,400 B per pending delivery with its job
 * and ≤ 800 B per finished one with its attempts and indexes. When one is missed (or
 * BENCH_PROFILE=always), the 1-endpoint run is repeated under `--cpu-prof` and the top costs of
 * each process are named (BENCH_PROFILE=off skips it).
 *
 * Runs on a private redis-server (AOF everysec, as in production) when one is installed, else on
 * REDIS_URL. Prints a report and writes bench-results/bench.json. About 3–4 minutes on 2 cores,
 * plus retention at speed (bench/cluster.ts: one endpoint with `lastPerEndpoint: 100` at full speed
 * for BENCH_RETENTION_S, default 60 in the full run and 0 in quick mode, reporting the most finished
 * deliveries kept) and, when BENCH_REDIS_CLUSTER_NODES or TEST_REDIS_CLUSTER_NODES names a cluster,
 * the same on the cluster and the cluster's deliveries/s with Redis commands per delivery per master.
 * Settings (environment): BENCH_CONCURRENCY (50), BENCH_DURATION_S (10), BENCH_RATE (1000),
 * BENCH_RATE_LOW (250), BENCH_PENDING (100000), BENCH_PROFILE (auto | always | off; off in quick
 * mode), BENCH_QUICK=1 (about a minute and a half: bare BullMQ, bare got, the full-speed runs, the
 * request-settings ones included, and the BENCH_RATE_LOW run only; no memory, no scale point, no
 * BENCH_RATE run), BENCH_APP_MODE
 * (compiled: `npm run build` first and the apps run from dist/ as in production | source: tsx).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { PRESETS } from '@postern/shared';
import { createKeySchema, DELIVERY_QUEUE_NAME } from '@postern/store';
import { summariseCpuProfile, type ProfileSummary } from './cpu-profile.js';
import { printDeliveryMemory, type DeliveryMemory } from '../test/support/memory-breakdown.js';
import { benchNodeFlags, buildCompiledApps, composeRedisFlags, memoryUnderPrefix, pollUntil, REPO_ROOT, rssBytes, startBenchRedis, startForwardProxyProcess, startPosternProcesses, startReceiverProcess, type BenchRedis, type ForwardProxyProcess, type PosternProcesses, type ReceiverProcess } from './bench-support.js';
import { openLiveFeedWindow } from './live-feed-cost.js';
import { BATCH_CPU_RATIO_TARGET, batchIngestLine, EVENTS_PER_BATCH, measureBatchIngest, profileBatch } from './batch-ingest.js';
import { eventValidationLine, measureEventValidation } from './event-validation-cost.js';
import { CPU_RATIO_TARGET, measureRequestSettings, requestSettingsRows, type RequestSettingsCost } from './request-settings-cost.js';
import { histogramP99Ms, PICK_FIELDS_CODE, sandboxCallTimes, sandboxMemoryFor100, transformationCost, TRANSFORM_CPU_RATIO_TARGET, TRANSFORM_P99_TARGET_MS, type TransformationCost } from './transformation-cost.js';
import { clockTicksPerSecond, openCostWindow, redisServerPid, waitForNoActiveJobs, type DeliveryCost } from './resource-cost.js';
import { benchClusterNodes, clusterThroughput, retentionAtSpeed, type RetentionAtSpeed } from './cluster.js';
import { bareBullmq, bareGot, createOrgs, pendingMemoryViaApi, posternAtRate, posternThroughput, scalePoint, warmUp, type EndToEnd, type PendingMemory, type ScalePoint } from './scenarios.js';
import type { PolicyInput } from '@postern/client';

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 50);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const RATE = Number(process.env.BENCH_RATE ?? 1000);
const RATE_LOW = Number(process.env.BENCH_RATE_LOW ?? 250);
const PENDING = Number(process.env.BENCH_PENDING ?? 100_000);
const QUICK = process.env.BENCH_QUICK === '1';
/** How the apps run: `compiled` (as in production: `npm run build`, then node on dist/) or `source` (tsx). */
const APP_MODE = process.env.BENCH_APP_MODE === 'source' ? 'source' : 'compiled';
// Quick mode is for before/after comparisons in about a minute: no profile unless asked for.
const PROFILE = (process.env.BENCH_PROFILE ?? (QUICK ? 'off' : 'auto')) as 'auto' | 'always' | 'off';
/** Quick mode's unreported deliveries before the measured runs (the full run drains 5,000). */
const QUICK_WARM_UP_EVENTS = 3000;
const OUT_DIR = path.join(REPO_ROOT, 'bench-results');
/** The forward proxy's name among the cost windows' other processes. */
const PROXY_NAME = 'proxy';
/** Deliveries that warm each request-settings endpoint up (the bearer path, hpagent's tunnels) before it is measured. */
const REQUEST_SETTINGS_WARM_UP_EVENTS = 1000;

/** The 1-endpoint runs: the endpoint may take the sender's whole concurrency, as bare got does. */
const ROOMY_POLICY: PolicyInput = { preset: 'standard', concurrency: { perEndpoint: CONCURRENCY, perOrg: CONCURRENCY } };

/** Goals for each app's memory (reported, not gates). */
const PEAK_RSS_GOAL_MB = 150;
const IDLE_INGEST_RSS_GOAL_MB = 90;
const MiB = 1024 * 1024;

const log = (line: string) => process.stdout.write(`[bench] ${line}\n`);
const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
const r1 = (n: number) => Math.round(n * 10) / 10;
const r2 = (n: number) => Math.round(n * 100) / 100;

async function withPostern<T>(redis: BenchRedis, opts: { withSender?: boolean; nodeArgs?: (app: 'ingest' | 'sender') => string[] }, run: (p: PosternProcesses) => Promise<T>): Promise<T> {
  const prefix = `bench:${randomBytes(4).toString('hex')}`;
  const p = await startPosternProcesses({ redisUrl: redis.url, prefix, concurrency: CONCURRENCY, ...opts });
  try {
    return await run(p);
  } finally {
    await p.stop();
  }
}

function e2eRow(name: string, r: EndToEnd) {
  return { scenario: name, 'deliveries/s': Math.round(r.deliveriesPerSecond), 'events/s accepted': Math.round(r.eventsAcceptedPerSecond), deliveries: r.deliveries, 'p50 ms': r.latencyMs.p50, 'p99 ms': r.latencyMs.p99, 'max ms': r.latencyMs.max, 'ingest RSS MB': mb(r.peakRssBytes.ingest), 'sender RSS MB': mb(r.peakRssBytes.sender), missing: r.missing };
}

async function profileRun(redis: BenchRedis, receiver: ReceiverProcess): Promise<{ ingest: ProfileSummary; sender: ProfileSummary; run: EndToEnd }> {
  const dirs = { ingest: path.join(OUT_DIR, 'profiles', 'ingest'), sender: path.join(OUT_DIR, 'profiles', 'sender') };
  for (const dir of Object.values(dirs)) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
  }
  const run = await withPostern(redis, { nodeArgs: (app) => ['--cpu-prof', `--cpu-prof-dir=${dirs[app]}`] }, async (p) => {
    const orgs = await createOrgs(p.apiBase, { orgs: 1, endpointsPerOrg: 1, url: `${receiver.base}/ok`, policy: ROOMY_POLICY });
    return posternThroughput(p, receiver, orgs, { durationS: Math.min(DURATION_S, 8), producers: 16, maxBacklog: 4 * CONCURRENCY });
  });
  // tsx's loader hooks run on a thread of their own, which writes a profile too: take the busiest.
  const busiest = (dir: string) =>
    readdirSync(dir)
      .filter((f) => f.endsWith('.cpuprofile'))
      .map((f) => summariseCpuProfile(path.join(dir, f)))
      .sort((a, b) => b.busyMs - a.busyMs)[0]!;
  return { ingest: busiest(dirs.ingest), sender: busiest(dirs.sender), run };
}

/** Where one delivery's cost is measured: the processes and Redis of the run. */
interface CostContext {
  redis: BenchRedis;
  redisPid: number | undefined;
  receiver: ReceiverProcess;
  /** The forward proxy of the request-settings run: its CPU is shown beside the receiver's, not charged. */
  proxy: ForwardProxyProcess;
}

/**
 * Runs one end-to-end scenario inside a cost window: CPU of ingest, sender and Redis and Redis
 * commands, from just before the run to when the sender has finished its last job.
 */
async function withCost<T extends EndToEnd>(ctx: CostContext, p: PosternProcesses, run: () => Promise<T>): Promise<T & { cost: DeliveryCost & { redisUsedMemoryBytesPerDelivery: number } }> {
  const usedBefore = await ctx.redis.usedMemory();
  const window = await openCostWindow({
    redis: ctx.redis.client,
    pids: { ingest: p.ingest.child.pid, sender: p.sender?.child.pid, redis: ctx.redisPid },
    otherPids: { receiver: ctx.receiver.pid, [PROXY_NAME]: ctx.proxy.pid },
  });
  const result = await run();
  const activeKey = `${createKeySchema(p.prefix).queuePrefix(0)}:${DELIVERY_QUEUE_NAME}:active`;
  const probes = await waitForNoActiveJobs(ctx.redis.client, activeKey);
  const cost = await window.end(result.deliveries, { llen: probes });
  // What the run's finished deliveries (and anything else it left) hold in Redis, per delivery.
  const redisUsedMemoryBytesPerDelivery = Math.round(((await ctx.redis.usedMemory()) - usedBefore) / Math.max(1, result.deliveries));
  return { ...result, cost: { ...cost, redisUsedMemoryBytesPerDelivery } };
}

/** How long the runs' finished deliveries stay in the delivery log: the `standard` preset's retention, hours. */
const RETENTION_HOURS = (() => {
  const retention = PRESETS.standard.policy.retention;
  return 'days' in retention ? retention.days * 24 : 0;
})();

/**
 * What a million deliveries cost, for sizing a deployment: CPU seconds by process and in total
 * (CPU ms per delivery × 1,000), and Redis memory over time: the Redis `used_memory` a delivery
 * left behind × how long the delivery log keeps it ({@link RETENTION_HOURS}), in GB·hours (10⁹ B).
 * At a steady rate of R million deliveries an hour, Redis then holds about R × that many GB.
 */
function costPerMillion(c: DeliveryCost & { redisUsedMemoryBytesPerDelivery: number }) {
  const seconds = (ms: number | null) => (ms === null ? null : Math.round(ms * 1000));
  return {
    cpuSeconds: { ingest: seconds(c.cpuMsPerDelivery.ingest), sender: seconds(c.cpuMsPerDelivery.sender), redis: seconds(c.cpuMsPerDelivery.redis), total: seconds(c.cpuMsPerDelivery.total) },
    redisBytesPerDelivery: c.redisUsedMemoryBytesPerDelivery,
    retentionHours: RETENTION_HOURS,
    redisGbHours: Math.round((c.redisUsedMemoryBytesPerDelivery * RETENTION_HOURS * 1e6) / 1e9),
  };
}

function costRow(name: string, c: DeliveryCost) {
  const ms = (v: number | null) => (v === null ? 'n/a' : v);
  return { scenario: name, deliveries: c.deliveries, 'ingest CPU ms': ms(c.cpuMsPerDelivery.ingest), 'sender CPU ms': ms(c.cpuMsPerDelivery.sender), 'redis CPU ms': ms(c.cpuMsPerDelivery.redis), 'total CPU ms': ms(c.cpuMsPerDelivery.total), 'redis commands': c.redisCommandsPerDelivery, ...Object.fromEntries(Object.entries(c.otherCpuMsPerDelivery).map(([k, v]) => [`(${k} CPU ms)`, ms(v)])) };
}

/**
 * The request-settings runs (bench/request-settings-cost.ts), right after the plain 1-endpoint run
 * on the same processes: each endpoint warmed up, then measured as the plain run is.
 */
function requestSettingsRuns(ctx: CostContext, p: PosternProcesses, plain: EndToEnd & { cost: DeliveryCost }): Promise<RequestSettingsCost> {
  const { receiver } = ctx;
  return measureRequestSettings({
    plain,
    proxy: { url: ctx.proxy.url, name: PROXY_NAME },
    log,
    async measure(request) {
      const [org] = await createOrgs(p.apiBase, { orgs: 1, endpointsPerOrg: 1, url: `${receiver.base}/ok`, policy: ROOMY_POLICY, request });
      await warmUp(p, receiver, org!, { events: REQUEST_SETTINGS_WARM_UP_EVENTS, producers: 16 });
      const run = await withCost(ctx, p, () => posternThroughput(p, receiver, [org!], { durationS: DURATION_S, producers: 16, maxBacklog: 4 * CONCURRENCY }));
      return { ...run, withAuthorization: (await receiver.stats()).withAuthorization };
    },
  });
}

/**
 * The transformation run (bench/transformation-cost.ts), right after the request-settings runs on
 * the same processes: a 1-endpoint org whose endpoint has the 20-line field-picking transformation,
 * warmed up, then measured as the plain run is; the transformation's own p99 from the sender's
 * histogram over the measured window (scraped before and after); plus the sandbox memory of 100
 * endpoints' transformations in a pool like the sender's.
 */
async function transformationRun(ctx: CostContext, p: PosternProcesses, plain: EndToEnd & { cost: DeliveryCost }): Promise<TransformationCost> {
  const { receiver } = ctx;
  const [org] = await createOrgs(p.apiBase, { orgs: 1, endpointsPerOrg: 1, url: `${receiver.base}/ok`, policy: ROOMY_POLICY, request: { transformation: { code: PICK_FIELDS_CODE, enabled: true } } });
  await warmUp(p, receiver, org!, { events: REQUEST_SETTINGS_WARM_UP_EVENTS, producers: 16 });
  const scrape = () => fetch(`${p.senderBase}/metrics`).then((r) => r.text());
  const before = await scrape();
  const run = await withCost(ctx, p, () => posternThroughput(p, receiver, [org!], { durationS: DURATION_S, producers: 16, maxBacklog: 4 * CONCURRENCY }));
  const transformedBodies = (await receiver.stats()).transformedBodies;
  // The measured window's own calls: the histogram after it less before it.
  const histogram = histogramP99Ms(await scrape(), 'postern_transformation_duration_seconds', before);
  // A call over TRANSFORM_TIMEOUT_MS on a busy machine fails its attempt (nothing sent, retried later): reported, not fatal.
  if (transformedBodies < run.deliveries) log(`    transformation run: ${run.deliveries - transformedBodies} of ${run.deliveries} requests arrived untransformed`);
  const calls = await sandboxCallTimes();
  const memory = await sandboxMemoryFor100();
  const cost = transformationCost(plain, run, histogram, transformedBodies, calls, memory);
  log(`    20-line pick-fields transformation: ${Math.round(run.deliveriesPerSecond)} deliveries/s, ${run.cost.cpuMsPerDelivery.total} CPU ms per delivery (× plain ${cost.ratio.total}, target ≤ ${TRANSFORM_CPU_RATIO_TARGET}); its own p99 ≤ ${cost.pickFields.p99Ms} ms over ${histogram.count} calls (target ≤ ${TRANSFORM_P99_TARGET_MS})`);
  log(`    the same code called ${calls.calls} times in a pool like the sender's, exact times in its thread: p50 ${calls.p50Ms} ms, p99 ${calls.p99Ms} ms, max ${calls.maxMs} ms; ${calls.cpuMsPerCall} CPU ms per call`);
  log(`    sandbox memory, 100 endpoints with a transformation, ${memory.threads} threads: ${mb(memory.wasmBytes)} MB WebAssembly, ${mb(memory.quickjsBytes)} MB in QuickJS heaps (${memory.cached} compiled)`);
  return cost;
}

/** Runs bench/finished-memory.ts against the bench's Redis: bytes per pending and finished delivery, with their breakdown. */
function measureFinishedMemory(redisUrl: string): DeliveryMemory[] {
  const out = execFileSync(process.execPath, ['--conditions=development', '--import', 'tsx', 'bench/finished-memory.ts', '--json'], {
    cwd: REPO_ROOT,
    env: { ...process.env, REDIS_URL: redisUrl },
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = out.trim().split('\n').pop() ?? '[]';
  return JSON.parse(line) as DeliveryMemory[];
}

async function main(): Promise<void> {
  const startedAt = Date.now();
  // Other work on the machine skews every figure: the report says how busy it was.
  const loadAtStart = loadavg().map(r1);
  mkdirSync(OUT_DIR, { recursive: true });
  // Measured as production runs them: compiled JavaScript, no TypeScript loader.
  if (APP_MODE === 'compiled') buildCompiledApps(log);
  const redis = await startBenchRedis(log);
  const redisPid = await redisServerPid(redis.client);
  const receiver = await startReceiverProcess();
  const proxy = await startForwardProxyProcess();
  const ctx: CostContext = { redis, redisPid, receiver, proxy };
  const steps = QUICK ? 5 : 8;
  log(`${QUICK ? 'QUICK mode (BENCH_QUICK=1): no memory, no scale point, no ' + RATE + '/s run; ' : ''}redis ${redis.url} (${redis.own ? `private: ${composeRedisFlags().join(' ')}` : 'shared: commands and Redis CPU include other clients'}, pid ${redisPid ?? '?'}), receiver ${receiver.base}, apps ${APP_MODE}, concurrency ${CONCURRENCY}, ${DURATION_S} s per run; load average ${loadAtStart.join(' ')} on ${cpus().length} cores`);
  try {
    log(`1/${steps} bare BullMQ: addBulk + no-op worker`);
    const bullmq = await bareBullmq(redis.url, { jobs: 30_000, concurrency: CONCURRENCY });
    log(`    ${Math.round(bullmq.perSecond)} jobs/s, ${bullmq.redisCommandsPerJob} Redis commands per job (BullMQ's own: the floor under Postern's)`);

    log(`2/${steps} bare got: POSTs to the receiver`);
    const gotRun = await bareGot(receiver, { requests: 15_000, concurrency: CONCURRENCY });
    log(`    ${Math.round(gotRun.perSecond)} requests/s`);

    const postern = await withPostern(redis, { withSender: QUICK }, async (p) => {
      const keySum = async () => (await memoryUnderPrefix(redis.client, p.prefix)).bytes;
      const idle = { ingest: rssBytes(p.ingest.child.pid) };
      let memory: { pending: PendingMemory; drain: { deliveries: number; perSecond: number } } | null = null;
      if (!QUICK) {
        log(`3/${steps} Postern: Redis memory per pending delivery (ingest only, 5,000 queued deliveries)`);
        const [memOrg] = await createOrgs(p.apiBase, { orgs: 1, endpointsPerOrg: 1, url: `${receiver.base}/ok`, policy: ROOMY_POLICY });
        const pending = await pendingMemoryViaApi(redis, p, memOrg!, { events: 5000, producers: 16, keySum });
        log(`    ${Math.round(pending.perDeliveryExcludingPayload)} B per pending delivery, payload excluded`);
        await receiver.reset();
        await p.startSender();
        const drainStart = Date.now();
        await pollUntil(async () => (await receiver.stats()).count >= 5000, 120_000, 100);
        memory = { pending, drain: { deliveries: (await receiver.stats()).count, perSecond: (await receiver.stats()).count / ((Date.now() - drainStart) / 1000) } };
      }

      log(`${QUICK ? 3 : 4}/${steps} Postern end to end, 1 endpoint and 100 endpoints across 10 orgs (CPU and Redis commands per delivery measured in the same runs)`);
      const [one] = await createOrgs(p.apiBase, { orgs: 1, endpointsPerOrg: 1, url: `${receiver.base}/ok`, policy: ROOMY_POLICY });
      if (QUICK) {
        // The full run warms both apps up with the 5,000-delivery drain; without a warm-up the
        // first run measures V8's warm-up and tsx's first compiles, and its CPU per delivery comes out higher.
        const warmStart = Date.now();
        await warmUp(p, receiver, one!, { events: QUICK_WARM_UP_EVENTS, producers: 16 });
        log(`    warm-up: ${QUICK_WARM_UP_EVENTS} deliveries in ${r1((Date.now() - warmStart) / 1000)} s (not reported)`);
      }
      const loadAtOneEndpoint = loadavg().map(r1);
      const feedKey = createKeySchema(p.prefix).orgLiveFeed(one!.orgId);
      const feedWindow = await openLiveFeedWindow(redis.client, feedKey);
      const oneEndpoint = await withCost(ctx, p, () => posternThroughput(p, receiver, [one!], { durationS: DURATION_S, producers: 16, maxBacklog: 4 * CONCURRENCY }));
      log(`    1 endpoint: ${Math.round(oneEndpoint.deliveriesPerSecond)} deliveries/s, ${oneEndpoint.cost.cpuMsPerDelivery.total} CPU ms and ${oneEndpoint.cost.redisCommandsPerDelivery} Redis commands per delivery (load average ${loadAtOneEndpoint.join(' ')})`);
      const liveFeed = await feedWindow.end(oneEndpoint, [feedKey, one!.endpointIds[0]!, 'evt_01KB2Z3R8Q5T7V9X1Y3Z5A7C9E', '1000', '3600']);
      log(`    live feed: ${liveFeed.appendsPerDelivery} appends per delivery inside the finish script; Redis commands per delivery ${liveFeed.redisCommandsPerDelivery.withoutFeed} → ${liveFeed.redisCommandsPerDelivery.withFeed}; ${liveFeed.redisUsecPerDelivery.feed} µs of Redis CPU per delivery (of ${liveFeed.redisUsecPerDelivery.allRedis} µs); +${liveFeed.requestBytesPerFinish} B per finish call; feed holds ${liveFeed.feed.entries} entries in ${liveFeed.feed.bytes} B (${liveFeed.feed.bytesPerEntry} B each)`);
      const requestSettings = await requestSettingsRuns(ctx, p, oneEndpoint);
      const transformation = await transformationRun(ctx, p, oneEndpoint);
      const many = await createOrgs(p.apiBase, { orgs: 10, endpointsPerOrg: 10, url: `${receiver.base}/ok`, policy: 'standard' });
      const manyEndpoints = await withCost(ctx, p, () => posternThroughput(p, receiver, many, { durationS: DURATION_S, producers: 8, maxBacklog: 4 * CONCURRENCY }));
      log(`    100 endpoints: ${Math.round(manyEndpoints.deliveriesPerSecond)} deliveries/s, ${manyEndpoints.cost.cpuMsPerDelivery.total} CPU ms and ${manyEndpoints.cost.redisCommandsPerDelivery} Redis commands per delivery`);

      log(`${QUICK ? 4 : 5}/${steps} Postern at fixed rates, 1 endpoint`);
      let atRate: (EndToEnd & { offeredPerSecond: number }) | null = null;
      let below: (EndToEnd & { offeredPerSecond: number }) | null = null;
      if (!QUICK) {
        atRate = await posternAtRate(p, receiver, one!, { eventsPerSecond: RATE, durationS: DURATION_S });
        log(`    ${RATE}/s: p50 ${atRate.latencyMs.p50} ms, p99 ${atRate.latencyMs.p99} ms (accepted ${Math.round(atRate.offeredPerSecond)}/s, delivered ${Math.round(atRate.deliveriesPerSecond)}/s)`);
        if (oneEndpoint.deliveriesPerSecond < RATE) {
          const rate = Math.max(50, Math.floor((oneEndpoint.deliveriesPerSecond * 0.5) / 50) * 50);
          log(`    ${RATE}/s is past saturation: also at ${rate} events/s`);
          below = await posternAtRate(p, receiver, one!, { eventsPerSecond: rate, durationS: DURATION_S });
          log(`    p50 ${below.latencyMs.p50} ms, p99 ${below.latencyMs.p99} ms at ${rate}/s`);
        }
      }
      const atRateLow = await withCost(ctx, p, () => posternAtRate(p, receiver, one!, { eventsPerSecond: RATE_LOW, durationS: DURATION_S }));
      log(`    ${RATE_LOW}/s: first attempt p50 ${atRateLow.latencyMs.p50} ms, p99 ${atRateLow.latencyMs.p99} ms (accepted ${Math.round(atRateLow.offeredPerSecond)}/s)`);

      let scale: ScalePoint | null = null;
      if (!QUICK) {
        log(`6/${steps} scale point: ${PENDING.toLocaleString('en')} pending delayed deliveries, then retries due among them`);
        scale = await scalePoint(redis, p, receiver, { pending: PENDING, probes: 20, keySum });
        log(`    ${Math.round(scale.perDeliveryExcludingPayload)} B per delivery (payload excluded), retries late by p50 ${scale.retryLatenessMs.p50} ms, max ${scale.retryLatenessMs.max} ms`);
      }
      return { idle, memory, oneEndpoint, liveFeed, requestSettings, transformation, manyEndpoints, atRate, below, atRateLow, scale, loadAtOneEndpoint };
    });

    let finishedMemory: DeliveryMemory[] | null = null;
    if (!QUICK) {
      log(`7/${steps} Redis per pending and per finished delivery by MEMORY USAGE, with the breakdown by key and field (bench/finished-memory.ts)`);
      finishedMemory = measureFinishedMemory(redis.url);
      for (const f of finishedMemory) log(`    ${f.state}: ${f.perDeliveryExcludingPayload} B per delivery, payload excluded`);
    }

    log(`${QUICK ? 5 : 8}/${steps} batch ingest: ingest CPU per event of POST /v1/events/batch (${EVENTS_PER_BATCH} a request) against POST /v1/events, on an ingest of its own (bench/batch-ingest.ts)`);
    const batchIngest = await measureBatchIngest(redis, { events: QUICK ? 3000 : 5000, rounds: 3, producers: 16, batchProducers: 4 }, log);
    log(`    ${batchIngest.cpuMsPerEvent} CPU ms per event against ${batchIngest.singleRouteCpuMsPerEvent} = ${batchIngest.ratio}× (target ≤ ${BATCH_CPU_RATIO_TARGET})`);

    const slowerBare = Math.min(bullmq.perSecond, gotRun.perSecond);
    const ratio = { oneEndpoint: postern.oneEndpoint.deliveriesPerSecond / slowerBare, manyEndpoints: postern.manyEndpoints.deliveriesPerSecond / slowerBare };
    const ratioToBareGot = { oneEndpoint: r2(postern.oneEndpoint.deliveriesPerSecond / gotRun.perSecond), manyEndpoints: r2(postern.manyEndpoints.deliveriesPerSecond / gotRun.perSecond) };
    // Quick mode measures neither memory nor the scale point nor the 1,000/s run: their goals are left out.
    const goals: Record<string, { goal: string; value: number; met: boolean }> = {
      ratio: { goal: '(3) / min(1, 2) ≥ 0.6', value: r2(Math.min(ratio.oneEndpoint, ratio.manyEndpoints)), met: Math.min(ratio.oneEndpoint, ratio.manyEndpoints) >= 0.6 },
    };
    if (postern.atRate) goals.p99At1000 = { goal: `p99 ≤ 50 ms at ${RATE} events/s`, value: postern.atRate.latencyMs.p99, met: postern.atRate.latencyMs.p99 <= 50 && postern.atRate.missing === 0 };
    if (postern.scale) goals.retryLateness = { goal: `retries ≤ 1000 ms late with ${PENDING} pending`, value: postern.scale.retryLatenessMs.max, met: postern.scale.retryLatenessMs.samples > 0 && postern.scale.retryLatenessMs.max <= 1000 };
    if (postern.memory && postern.scale) {
      const memoryPerPending = Math.max(postern.memory.pending.perDeliveryExcludingPayload, postern.scale.perDeliveryExcludingPayload);
      goals.memory = { goal: '≤ 2048 B Redis used_memory per pending delivery (payload excluded)', value: Math.round(memoryPerPending), met: memoryPerPending <= 2048 };
    }
    // Issue 12: by MEMORY USAGE per key, payload excluded; the finished figure is the 200 run's.
    const pendingBytes = finishedMemory?.find((m) => m.state === 'pending')?.perDeliveryExcludingPayload;
    const finishedBytes = finishedMemory?.find((m) => m.state === 'finished (answered 200)')?.perDeliveryExcludingPayload;
    if (pendingBytes !== undefined) goals.memoryPending = { goal: '≤ 1400 B per pending delivery with its job (MEMORY USAGE)', value: pendingBytes, met: pendingBytes <= 1400 };
    if (finishedBytes !== undefined) goals.memoryFinished = { goal: '≤ 800 B per finished delivery with attempts and indexes (MEMORY USAGE)', value: finishedBytes, met: finishedBytes <= 800 };
    // Issue 26: each app's peak RSS through every measured run, with the apps' default node flags.
    const rssRuns: EndToEnd[] = [postern.oneEndpoint, postern.manyEndpoints, postern.atRateLow];
    for (const r of [postern.atRate, postern.below]) if (r) rssRuns.push(r);
    const peakRss = Math.max(...rssRuns.flatMap((r) => [r.peakRssBytes.ingest, r.peakRssBytes.sender]));
    goals.peakRss = { goal: `peak RSS ≤ ${PEAK_RSS_GOAL_MB} MB per app in every run (node flags: ${benchNodeFlags().join(' ') || "Node's defaults"})`, value: mb(peakRss), met: peakRss <= PEAK_RSS_GOAL_MB * MiB };
    goals.idleIngestRss = { goal: `idle ingest RSS ≤ ${IDLE_INGEST_RSS_GOAL_MB} MB once ready`, value: mb(postern.idle.ingest), met: postern.idle.ingest <= IDLE_INGEST_RSS_GOAL_MB * MiB };
    goals.oneEndpointToBareGot = { goal: '1 endpoint ≥ 0.5 × bare got', value: ratioToBareGot.oneEndpoint, met: ratioToBareGot.oneEndpoint >= 0.5 };
    goals.manyEndpointsToBareGot = { goal: '100 endpoints ≥ 0.7 × bare got', value: ratioToBareGot.manyEndpoints, met: ratioToBareGot.manyEndpoints >= 0.7 };
    goals.p99AtLowRate = { goal: `first attempt p99 ≤ 10 ms at ${RATE_LOW} events/s`, value: postern.atRateLow.latencyMs.p99, met: postern.atRateLow.latencyMs.p99 <= 10 && postern.atRateLow.missing === 0 };
    goals.batchIngest = { goal: `batch ingest CPU per event ≤ ${BATCH_CPU_RATIO_TARGET} × the single route's (same run)`, value: batchIngest.ratio, met: batchIngest.ratio <= BATCH_CPU_RATIO_TARGET };
    // A CPU profile explains a missed speed goal, not a memory one: the byte breakdown above does.
    // The batch goal has a profile of its own, of the batch route.
    const missed = Object.entries(goals).some(([name, g]) => !g.met && !['memoryPending', 'memoryFinished', 'batchIngest', 'peakRss', 'idleIngestRss'].includes(name));

    let profile: Awaited<ReturnType<typeof profileRun>> | null = null;
    if (PROFILE === 'always' || (PROFILE === 'auto' && missed)) {
      log('profiling the 1-endpoint run (--cpu-prof on ingest and sender)');
      profile = await profileRun(redis, receiver);
    }

    let batchProfile: ProfileSummary | null = null;
    if (PROFILE === 'always' || (PROFILE === 'auto' && !goals.batchIngest.met)) {
      log('profiling the batch route (--cpu-prof on an ingest of its own)');
      batchProfile = await profileBatch(redis, { events: 10_000, rounds: 1, producers: 16, batchProducers: 4 }, log);
    }

    const { cost: oneCost, ...oneEndpoint } = postern.oneEndpoint;
    const { cost: manyCost, ...manyEndpoints } = postern.manyEndpoints;
    const { cost: lowCost, ...atRateLow } = postern.atRateLow;
    // In process, a second or two: the catalog check ingest runs per event for orgs that validate.
    const eventValidation = measureEventValidation();
    const results = {
      when: new Date(startedAt).toISOString(),
      quick: QUICK,
      machine: { node: process.version, cpus: cpus().length, loadAverageAtStart: loadAtStart, loadAverageAtOneEndpointRun: postern.loadAtOneEndpoint, loadAverageAtEnd: loadavg().map(r1), redis: redis.own ? `private redis-server ${composeRedisFlags().join(' ')}` : redis.url, clockTicksPerSecond: clockTicksPerSecond() },
      settings: { concurrency: CONCURRENCY, durationS: DURATION_S, rate: RATE, rateLow: RATE_LOW, pending: PENDING },
      bareBullmq: { jobsPerSecond: Math.round(bullmq.perSecond), jobs: bullmq.count, redisCommandsPerJob: bullmq.redisCommandsPerJob },
      finishedMemory,
      bareGot: { requestsPerSecond: Math.round(gotRun.perSecond), requests: gotRun.count },
      postern: {
        oneEndpoint,
        manyEndpoints,
        atRate: postern.atRate,
        belowSaturation: postern.below,
        atRateLow,
        drainOf5000Queued: postern.memory && { perSecond: Math.round(postern.memory.drain.perSecond) },
        idleIngestRssBytes: postern.idle.ingest,
      },
      ratioToSlowerBare: { oneEndpoint: r2(ratio.oneEndpoint), manyEndpoints: r2(ratio.manyEndpoints), slowerBare: bullmq.perSecond < gotRun.perSecond ? 'bullmq' : 'got' },
      ratioToBareGot,
      // The 1-endpoint full-speed run; `costs` has the same for the other runs.
      cpuMsPerDelivery: oneCost.cpuMsPerDelivery,
      redisCommandsPerDelivery: oneCost.redisCommandsPerDelivery,
      redisCommandsBreakdown: oneCost.redisCommandsBreakdown,
      costs: { oneEndpoint: oneCost, manyEndpoints: manyCost, atRateLow: lowCost },
      costPerMillionDeliveries: { oneEndpoint: costPerMillion(oneCost), manyEndpoints: costPerMillion(manyCost), atRateLow: costPerMillion(lowCost) },
      nodeFlags: benchNodeFlags(),
      requestSettings: postern.requestSettings,
      liveFeed: postern.liveFeed,
      transformation: postern.transformation,
      redisPerPendingDelivery: postern.memory?.pending ?? null,
      scalePoint: postern.scale,
      goals,
      profile: profile && {
        run: e2eRow('1 endpoint, under --cpu-prof', profile.run),
        ingest: { busyMs: profile.ingest.busyMs, wallMs: profile.ingest.wallMs, components: profile.ingest.components, functions: profile.ingest.functions },
        sender: { busyMs: profile.sender.busyMs, wallMs: profile.sender.wallMs, components: profile.sender.components, functions: profile.sender.functions },
      },
      eventValidation,
      batchIngest,
      batchIngestProfile: batchProfile && { busyMs: batchProfile.busyMs, wallMs: batchProfile.wallMs, components: batchProfile.components, functions: batchProfile.functions },
      durationS: Math.round((Date.now() - startedAt) / 1000),
    };
    writeFileSync(path.join(OUT_DIR, 'bench.json'), `${JSON.stringify(results, null, 2)}\n`);

    console.log('\nThroughput at concurrency', CONCURRENCY);
    console.table([
      { scenario: '(1) bare BullMQ, no-op worker', 'per second': Math.round(bullmq.perSecond) },
      { scenario: '(2) bare got → receiver', 'per second': Math.round(gotRun.perSecond) },
      { scenario: '(3) Postern, 1 endpoint', 'per second': Math.round(postern.oneEndpoint.deliveriesPerSecond) },
      { scenario: '(3) Postern, 100 endpoints / 10 orgs', 'per second': Math.round(postern.manyEndpoints.deliveriesPerSecond) },
    ]);
    console.log('Postern end to end (latency = accepted → arrived at the receiver)');
    console.table([
      e2eRow('1 endpoint, full speed', postern.oneEndpoint),
      e2eRow('100 endpoints, full speed', postern.manyEndpoints),
      ...(postern.atRate ? [e2eRow(`1 endpoint at ${RATE}/s`, postern.atRate)] : []),
      ...(postern.below ? [e2eRow(`1 endpoint at ${Math.round(postern.below.offeredPerSecond)}/s`, postern.below)] : []),
      e2eRow(`1 endpoint at ${RATE_LOW}/s`, postern.atRateLow),
    ]);
    console.log(`Ratio (3) / min(1, 2): 1 endpoint ${results.ratioToSlowerBare.oneEndpoint}, 100 endpoints ${results.ratioToSlowerBare.manyEndpoints} (slower bare: ${results.ratioToSlowerBare.slowerBare})`);
    console.log(`Ratio (3) / bare got: 1 endpoint ${ratioToBareGot.oneEndpoint}, 100 endpoints ${ratioToBareGot.manyEndpoints}`);
    console.log(`Cost per delivery (CPU: /proc/<pid>/stat utime+stime at ${clockTicksPerSecond()} ticks/s; Redis: INFO commandstats calls, Lua scripts' own calls included; receiver and load generator shown, not charged)`);
    console.table([costRow('1 endpoint, full speed', oneCost), costRow('100 endpoints, full speed', manyCost), costRow(`1 endpoint at ${RATE_LOW}/s`, lowCost)]);
    console.log(`Cost per million deliveries (CPU seconds = CPU ms per delivery × 1,000; Redis: used_memory a delivery left × the delivery log's ${RETENTION_HOURS} h retention, GB·hours; at R million deliveries an hour Redis holds about R × that in GB)`);
    console.table(
      Object.entries(results.costPerMillionDeliveries).map(([run, c]) => ({
        run,
        'ingest CPU s': c.cpuSeconds.ingest ?? 'n/a',
        'sender CPU s': c.cpuSeconds.sender ?? 'n/a',
        'redis CPU s': c.cpuSeconds.redis ?? 'n/a',
        'total CPU s': c.cpuSeconds.total ?? 'n/a',
        'Redis B per delivery': c.redisBytesPerDelivery,
        'Redis GB·h': c.redisGbHours,
      })),
    );
    console.log(`Request settings, 1 endpoint at full speed, same bench run (CPU ms per delivery; target ≤ ${CPU_RATIO_TARGET}× plain, Postern's processes; the proxy's own CPU apart)`);
    console.table(requestSettingsRows(postern.requestSettings));
    const t = postern.transformation;
    console.log(`Transformation (20-line pick-fields), 1 endpoint at full speed, same bench run: ${t.pickFields.deliveriesPerSecond} deliveries/s, ${t.pickFields.cpuMsPerDelivery.total} CPU ms per delivery = ${t.ratio.total}× plain (target ≤ ${TRANSFORM_CPU_RATIO_TARGET}); its own p99 ≤ ${t.pickFields.p99Ms} ms end to end, exactly ${t.calls.p99Ms} ms over ${t.calls.calls} calls in a pool (target ≤ ${TRANSFORM_P99_TARGET_MS}); sandbox memory with 100 endpoints: ${mb(t.memory.wasmBytes)} MB WebAssembly over ${t.memory.threads} threads, ${mb(t.memory.quickjsBytes)} MB QuickJS heaps`);
    console.log('Top Redis commands per delivery');
    const manyByCommand = new Map(manyCost.redisCommandsBreakdown.map((c) => [c.command, c.perDelivery]));
    console.table(oneCost.redisCommandsBreakdown.map((c) => ({ command: c.command, '1 endpoint': c.perDelivery, '100 endpoints': manyByCommand.get(c.command) ?? '—' })));
    if (postern.memory && postern.scale) {
      console.log(`Redis per pending delivery, payload (${postern.memory.pending.envelopeBytes} B envelope) excluded: ${Math.round(postern.memory.pending.perDeliveryExcludingPayload)} B queued via the API; ${Math.round(postern.scale.perDeliveryExcludingPayload)} B at ${PENDING} delayed (sum of key sizes: ${Math.round(postern.scale.keyBytesPerDelivery - postern.scale.envelopeBytes)} B)`);
      console.log('Where one pending delivery\'s bytes are:', postern.scale.breakdownBytesPerDelivery);
      console.log(`Scale point: ${postern.scale.delayedJobs} delayed jobs written in ${r1(postern.scale.writeSeconds)} s; retries late by p50 ${postern.scale.retryLatenessMs.p50} ms, max ${postern.scale.retryLatenessMs.max} ms (${postern.scale.retryLatenessMs.samples} retries)`);
    }
    if (finishedMemory) {
      console.log('Redis per delivery by MEMORY USAGE, payload excluded, and where the bytes go (alone: node --conditions=development --import tsx bench/finished-memory.ts)');
      for (const m of finishedMemory) printDeliveryMemory(m);
    }
    console.log(eventValidationLine(eventValidation));
    console.log(batchIngestLine(batchIngest));
    console.log('Goals');
    console.table(Object.fromEntries(Object.entries(goals).map(([k, g]) => [k, { goal: g.goal, value: g.value, met: g.met ? 'yes' : 'MISSED' }])));
    if (batchProfile) {
      console.log(`Top costs, ingest on the batch route (busy ${batchProfile.busyMs} ms of ${batchProfile.wallMs} ms):`);
      console.table(batchProfile.components.slice(0, 5));
      console.table(batchProfile.functions.slice(0, 8));
    }
    if (profile) {
      for (const app of ['sender', 'ingest'] as const) {
        const s = profile[app];
        console.log(`Top costs, ${app} (busy ${s.busyMs} ms of ${s.wallMs} ms):`);
        console.table(s.components.slice(0, 5));
        console.table(s.functions.slice(0, 5));
      }
    }
    // Retention at speed (60 s in the full run; BENCH_RETENTION_S) and, when a cluster is named, the
    // same and the cluster's throughput with Redis commands per master (bench/cluster.ts).
    const clusterNodes = benchClusterNodes();
    const retentionS = Number(process.env.BENCH_RETENTION_S ?? (QUICK ? 0 : 60));
    const retention: RetentionAtSpeed[] = [];
    for (const target of retentionS > 0 ? [{ url: redis.url }, ...(clusterNodes ? [{ clusterNodes }] : [])] : []) {
      log(`retention at speed (${'url' in target ? 'standalone' : 'cluster'}): 1 endpoint, lastPerEndpoint 100, full speed for ${retentionS} s`);
      const r = await retentionAtSpeed(target, receiver, { durationS: retentionS, concurrency: CONCURRENCY });
      log(`    ${r.deliveries} deliveries (${r.deliveriesPerSecond}/s): at most ${r.maxFinishedKept} finished kept (sampled every 100 ms), ${r.finishedKeptAtEnd} at the end; records at the end ${JSON.stringify(r.recordsAtEnd)}; load average ${r.loadAverage.join(' ')}`);
      retention.push(r);
    }
    let cluster: Awaited<ReturnType<typeof clusterThroughput>> | null = null;
    if (clusterNodes) {
      log(`Redis Cluster ${clusterNodes}: 1 org, then 12 orgs, full speed for ${DURATION_S} s each`);
      cluster = await clusterThroughput(clusterNodes, receiver, { durationS: DURATION_S, concurrency: CONCURRENCY, log });
    } else {
      log('no cluster named (BENCH_REDIS_CLUSTER_NODES or TEST_REDIS_CLUSTER_NODES): cluster throughput skipped');
    }
    if (retention.length > 0 || cluster) {
      writeFileSync(path.join(OUT_DIR, 'bench.json'), `${JSON.stringify({ ...results, retentionAtSpeed: retention, cluster }, null, 2)}\n`);
    }
    log(`wrote ${path.relative(REPO_ROOT, path.join(OUT_DIR, 'bench.json'))} in ${results.durationS} s; load average at the end ${results.machine.loadAverageAtEnd.join(' ')}`);
  } finally {
    await proxy.stop();
    await receiver.stop();
    await redis.stop();
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`[bench] failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);

/**
 * `npm run bench`: one command, one run, side by side on the same Redis and the same receiver.
 *
 * 1. Bare BullMQ: `addBulk` + a no-op worker at the sender's concurrency.
 * 2. Bare got: POSTs of an envelope-sized body to the receiver at the same concurrency.
 * 3. Postern end to end (POST /v1/events → ingest → Redis → sender → receiver), ingest and sender as
 *    their own processes: 1 endpoint, and 100 endpoints across 10 orgs; then 1 endpoint at a fixed
 *    1,000 events/s for latency below saturation.
 * Plus Redis memory per pending delivery (payload excluded), and a scale point: 100,000 pending
 * delayed deliveries — Redis memory, and how late scheduled retries fire among them.
 *
 * Goals (reported, not gates): (3) ≥ 0.6 × min(1, 2); p99 ≤ 50 ms at 1,000 events/s; retries ≤ 1 s
 * late with 100k pending; ≤ 2 KB Redis per pending delivery. When one is missed (or
 * BENCH_PROFILE=always), the 1-endpoint run is repeated under `--cpu-prof` and the top costs of
 * each process are named (BENCH_PROFILE=off skips it).
 *
 * Runs on a private redis-server (AOF everysec, as in production) when one is installed, else on
 * REDIS_URL. Prints a report and writes bench-results/bench.json. About 3–4 minutes on 2 cores.
 * Settings (environment): BENCH_CONCURRENCY (50), BENCH_DURATION_S (10), BENCH_RATE (1000),
 * BENCH_PENDING (100000), BENCH_PROFILE (auto | always | off).
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { summariseCpuProfile, type ProfileSummary } from './cpu-profile.js';
import { composeRedisFlags, memoryUnderPrefix, pollUntil, REPO_ROOT, rssBytes, startBenchRedis, startPosternProcesses, startReceiverProcess, type BenchRedis, type PosternProcesses, type ReceiverProcess } from './bench-support.js';
import { bareBullmq, bareGot, createOrgs, pendingMemoryViaApi, posternAtRate, posternThroughput, scalePoint, type EndToEnd } from './scenarios.js';

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 50);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 10);
const RATE = Number(process.env.BENCH_RATE ?? 1000);
const PENDING = Number(process.env.BENCH_PENDING ?? 100_000);
const PROFILE = (process.env.BENCH_PROFILE ?? 'auto') as 'auto' | 'always' | 'off';
const OUT_DIR = path.join(REPO_ROOT, 'bench-results');

/** The 1-endpoint runs: the endpoint may take the sender's whole concurrency, as bare got does. */
const ROOMY_POLICY = { preset: 'standard', concurrency: { perEndpoint: CONCURRENCY, perOrg: CONCURRENCY } };

const log = (line: string) => process.stdout.write(`[bench] ${line}\n`);
const mb = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10;
const r1 = (n: number) => Math.round(n * 10) / 10;

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

async function main(): Promise<void> {
  const startedAt = Date.now();
  // Other work on the machine skews every figure: the report says how busy it was.
  const loadAtStart = loadavg().map(r1);
  mkdirSync(OUT_DIR, { recursive: true });
  const redis = await startBenchRedis(log);
  const receiver = await startReceiverProcess();
  log(`redis ${redis.url} (${redis.own ? `private: ${composeRedisFlags().join(' ')}` : 'shared'}), receiver ${receiver.base}, concurrency ${CONCURRENCY}, ${DURATION_S} s per run; load average ${loadAtStart.join(' ')} on ${cpus().length} cores`);
  try {
    log('1/6 bare BullMQ: addBulk + no-op worker');
    const bullmq = await bareBullmq(redis.url, { jobs: 30_000, concurrency: CONCURRENCY });
    log(`    ${Math.round(bullmq.perSecond)} jobs/s`);

    log('2/6 bare got: POSTs to the receiver');
    const gotRun = await bareGot(receiver, { requests: 15_000, concurrency: CONCURRENCY });
    log(`    ${Math.round(gotRun.perSecond)} requests/s`);

    const postern = await withPostern(redis, { withSender: false }, async (p) => {
      const keySum = async () => (await memoryUnderPrefix(redis.client, p.prefix)).bytes;
      const idle = { ingest: rssBytes(p.ingest.child.pid) };
      log('3/6 Postern: Redis memory per pending delivery (ingest only, 5,000 queued deliveries)');
      const [memOrg] = await createOrgs(p.apiBase, { orgs: 1, endpointsPerOrg: 1, url: `${receiver.base}/ok`, policy: ROOMY_POLICY });
      const pending = await pendingMemoryViaApi(redis, p, memOrg!, { events: 5000, producers: 16, keySum });
      log(`    ${Math.round(pending.perDeliveryExcludingPayload)} B per pending delivery, payload excluded`);
      await receiver.reset();
      await p.startSender();
      const drainStart = Date.now();
      await pollUntil(async () => (await receiver.stats()).count >= 5000, 120_000, 100);
      const drain = { deliveries: (await receiver.stats()).count, perSecond: (await receiver.stats()).count / ((Date.now() - drainStart) / 1000) };

      log('4/6 Postern end to end, 1 endpoint and 100 endpoints across 10 orgs');
      const [one] = await createOrgs(p.apiBase, { orgs: 1, endpointsPerOrg: 1, url: `${receiver.base}/ok`, policy: ROOMY_POLICY });
      const oneEndpoint = await posternThroughput(p, receiver, [one!], { durationS: DURATION_S, producers: 16, maxBacklog: 4 * CONCURRENCY });
      log(`    1 endpoint: ${Math.round(oneEndpoint.deliveriesPerSecond)} deliveries/s`);
      const many = await createOrgs(p.apiBase, { orgs: 10, endpointsPerOrg: 10, url: `${receiver.base}/ok`, policy: 'standard' });
      const manyEndpoints = await posternThroughput(p, receiver, many, { durationS: DURATION_S, producers: 8, maxBacklog: 4 * CONCURRENCY });
      log(`    100 endpoints: ${Math.round(manyEndpoints.deliveriesPerSecond)} deliveries/s`);

      log(`5/6 Postern at a fixed ${RATE} events/s, 1 endpoint`);
      const atRate = await posternAtRate(p, receiver, one!, { eventsPerSecond: RATE, durationS: DURATION_S });
      log(`    p50 ${atRate.latencyMs.p50} ms, p99 ${atRate.latencyMs.p99} ms (accepted ${Math.round(atRate.offeredPerSecond)}/s, delivered ${Math.round(atRate.deliveriesPerSecond)}/s)`);
      let below: (EndToEnd & { offeredPerSecond: number }) | null = null;
      if (oneEndpoint.deliveriesPerSecond < RATE) {
        const rate = Math.max(50, Math.floor((oneEndpoint.deliveriesPerSecond * 0.5) / 50) * 50);
        log(`    ${RATE}/s is past saturation: also at ${rate} events/s`);
        below = await posternAtRate(p, receiver, one!, { eventsPerSecond: rate, durationS: DURATION_S });
        log(`    p50 ${below.latencyMs.p50} ms, p99 ${below.latencyMs.p99} ms at ${rate}/s`);
      }

      log(`6/6 scale point: ${PENDING.toLocaleString('en')} pending delayed deliveries, then retries due among them`);
      const scale = await scalePoint(redis, p, receiver, { pending: PENDING, probes: 20, keySum });
      log(`    ${Math.round(scale.perDeliveryExcludingPayload)} B per delivery (payload excluded), retries late by p50 ${scale.retryLatenessMs.p50} ms, max ${scale.retryLatenessMs.max} ms`);
      return { idle, pending, drain, oneEndpoint, manyEndpoints, atRate, below, scale };
    });

    const slowerBare = Math.min(bullmq.perSecond, gotRun.perSecond);
    const ratio = { oneEndpoint: postern.oneEndpoint.deliveriesPerSecond / slowerBare, manyEndpoints: postern.manyEndpoints.deliveriesPerSecond / slowerBare };
    const memoryPerPending = Math.max(postern.pending.perDeliveryExcludingPayload, postern.scale.perDeliveryExcludingPayload);
    const goals = {
      ratio: { goal: '(3) / min(1, 2) ≥ 0.6', value: Math.round(Math.min(ratio.oneEndpoint, ratio.manyEndpoints) * 100) / 100, met: Math.min(ratio.oneEndpoint, ratio.manyEndpoints) >= 0.6 },
      p99At1000: { goal: `p99 ≤ 50 ms at ${RATE} events/s`, value: postern.atRate.latencyMs.p99, met: postern.atRate.latencyMs.p99 <= 50 && postern.atRate.missing === 0 },
      retryLateness: { goal: `retries ≤ 1000 ms late with ${PENDING} pending`, value: postern.scale.retryLatenessMs.max, met: postern.scale.retryLatenessMs.samples > 0 && postern.scale.retryLatenessMs.max <= 1000 },
      memory: { goal: '≤ 2048 B Redis per pending delivery (payload excluded)', value: Math.round(memoryPerPending), met: memoryPerPending <= 2048 },
    };
    const missed = Object.values(goals).some((g) => !g.met);

    let profile: Awaited<ReturnType<typeof profileRun>> | null = null;
    if (PROFILE === 'always' || (PROFILE === 'auto' && missed)) {
      log('profiling the 1-endpoint run (--cpu-prof on ingest and sender)');
      profile = await profileRun(redis, receiver);
    }

    const results = {
      when: new Date(startedAt).toISOString(),
      machine: { node: process.version, cpus: cpus().length, loadAverageAtStart: loadAtStart, loadAverageAtEnd: loadavg().map(r1), redis: redis.own ? `private redis-server ${composeRedisFlags().join(' ')}` : redis.url },
      settings: { concurrency: CONCURRENCY, durationS: DURATION_S, rate: RATE, pending: PENDING },
      bareBullmq: { jobsPerSecond: Math.round(bullmq.perSecond), jobs: bullmq.count },
      bareGot: { requestsPerSecond: Math.round(gotRun.perSecond), requests: gotRun.count },
      postern: {
        oneEndpoint: postern.oneEndpoint,
        manyEndpoints: postern.manyEndpoints,
        atRate: postern.atRate,
        belowSaturation: postern.below,
        drainOf5000Queued: { perSecond: Math.round(postern.drain.perSecond) },
        idleIngestRssBytes: postern.idle.ingest,
      },
      ratioToSlowerBare: { oneEndpoint: Math.round(ratio.oneEndpoint * 100) / 100, manyEndpoints: Math.round(ratio.manyEndpoints * 100) / 100, slowerBare: bullmq.perSecond < gotRun.perSecond ? 'bullmq' : 'got' },
      redisPerPendingDelivery: postern.pending,
      scalePoint: postern.scale,
      goals,
      profile: profile && {
        run: e2eRow('1 endpoint, under --cpu-prof', profile.run),
        ingest: { busyMs: profile.ingest.busyMs, wallMs: profile.ingest.wallMs, components: profile.ingest.components, functions: profile.ingest.functions },
        sender: { busyMs: profile.sender.busyMs, wallMs: profile.sender.wallMs, components: profile.sender.components, functions: profile.sender.functions },
      },
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
    console.table([e2eRow('1 endpoint, full speed', postern.oneEndpoint), e2eRow('100 endpoints, full speed', postern.manyEndpoints), e2eRow(`1 endpoint at ${RATE}/s`, postern.atRate), ...(postern.below ? [e2eRow(`1 endpoint at ${Math.round(postern.below.offeredPerSecond)}/s`, postern.below)] : [])]);
    console.log(`Ratio (3) / min(1, 2): 1 endpoint ${results.ratioToSlowerBare.oneEndpoint}, 100 endpoints ${results.ratioToSlowerBare.manyEndpoints} (slower bare: ${results.ratioToSlowerBare.slowerBare})`);
    console.log(`Redis per pending delivery, payload (${postern.pending.envelopeBytes} B envelope) excluded: ${Math.round(postern.pending.perDeliveryExcludingPayload)} B queued via the API; ${Math.round(postern.scale.perDeliveryExcludingPayload)} B at ${PENDING} delayed (sum of key sizes: ${Math.round(postern.scale.keyBytesPerDelivery - postern.scale.envelopeBytes)} B)`);
    console.log('Where one pending delivery\'s bytes are:', postern.scale.breakdownBytesPerDelivery);
    console.log(`Scale point: ${postern.scale.delayedJobs} delayed jobs written in ${r1(postern.scale.writeSeconds)} s; retries late by p50 ${postern.scale.retryLatenessMs.p50} ms, max ${postern.scale.retryLatenessMs.max} ms (${postern.scale.retryLatenessMs.samples} retries)`);
    console.log('Goals');
    console.table(Object.fromEntries(Object.entries(goals).map(([k, g]) => [k, { goal: g.goal, value: g.value, met: g.met ? 'yes' : 'MISSED' }])));
    if (profile) {
      for (const app of ['sender', 'ingest'] as const) {
        const s = profile[app];
        console.log(`Top costs, ${app} (busy ${s.busyMs} ms of ${s.wallMs} ms):`);
        console.table(s.components.slice(0, 5));
        console.table(s.functions.slice(0, 5));
      }
    }
    log(`wrote ${path.relative(REPO_ROOT, path.join(OUT_DIR, 'bench.json'))} in ${results.durationS} s`);
  } finally {
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

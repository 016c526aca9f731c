/**
 * Two scenarios of `npm run bench` (bench/run.ts calls them; alone: `node --conditions=development
 * --import tsx bench/cluster.ts`):
 *
 * - **Retention at speed**: one endpoint with `retention: {lastPerEndpoint: 100}` at full speed for
 *   `BENCH_RETENTION_S` (60) seconds; the endpoint's finished deliveries (its succeeded, failed and
 *   cancelled indexes) are counted every 100 ms. Reports the most ever kept, what is kept at the end,
 *   and the org's delivery, attempt and event records at the end (SCAN). On the benchmark's Redis
 *   and, when a cluster is named, on the cluster.
 * - **Redis Cluster throughput**, when `BENCH_REDIS_CLUSTER_NODES` (or `TEST_REDIS_CLUSTER_NODES`)
 *   names one: ingest and a sender as processes against the cluster (`REDIS_CLUSTER_NODES`,
 *   `QUEUE_PARTITIONS` = `BENCH_QUEUE_PARTITIONS`, default 2 × masters); one org with one endpoint
 *   (one org slot, one partition), then 12 orgs with one endpoint each (spread over the slots and
 *   partitions). Reports deliveries/s and, per master, Redis commands per delivery (`INFO
 *   commandstats` before and after, Lua-internal calls included; the bench's own probes are few and
 *   counted in).
 *
 * Figures on a shared machine are noisy: the load average is printed with each.
 */
import { cpus, loadavg } from 'node:os';
import { randomBytes } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { createKeySchema, createStore, parseClusterNodes } from '@postern/store';
import { pollUntil, startPosternProcesses, startReceiverProcess, type ReceiverProcess } from './bench-support.js';
import { commandCalls } from './resource-cost.js';
import { createOrgs, posternThroughput, warmUp, type BenchOrg } from './scenarios.js';
import type { PolicyInput } from '@postern/client';
import { countOrgRecords } from '../test/support/org-records.js';

const FINISHED = ['succeeded', 'failed', 'cancelled'] as const;
const r1 = (n: number) => Math.round(n * 10) / 10;

/** Where the scenarios run: a standalone Redis by URL, or a cluster by its seed nodes. */
export type BenchTarget = { url: string } | { clusterNodes: string };

/** What {@link retentionAtSpeed} measured. */
export interface RetentionAtSpeed {
  target: 'standalone' | 'cluster';
  seconds: number;
  deliveries: number;
  deliveriesPerSecond: number;
  keep: number;
  /** The most finished deliveries the endpoint had at any sample (every 100 ms). */
  maxFinishedKept: number;
  finishedKeptAtEnd: number;
  /** The org's records at the end. */
  recordsAtEnd: { deliveries: number; attempts: number; events: number };
  loadAverage: number[];
}

/** What {@link clusterThroughput} measured for one shape of load. */
export interface ClusterRun {
  scenario: string;
  deliveries: number;
  deliveriesPerSecond: number;
  /** Per master (`host:port`): Redis commands per delivery. */
  commandsPerDeliveryByNode: Record<string, number>;
  commandsPerDeliveryTotal: number;
  loadAverage: number[];
}

function connect(target: BenchTarget): Redis | Cluster {
  return 'url' in target ? new Redis(target.url) : new Cluster(parseClusterNodes(target.clusterNodes));
}

function posternEnv(target: BenchTarget, partitions: number): { redisUrl: string; env: Record<string, string> } {
  return 'url' in target ? { redisUrl: target.url, env: {} } : { redisUrl: 'redis://127.0.0.1:1', env: { REDIS_CLUSTER_NODES: target.clusterNodes, QUEUE_PARTITIONS: String(partitions) } };
}

async function masters(redis: Redis | Cluster): Promise<Redis[]> {
  return redis instanceof Cluster ? redis.nodes('master') : [redis];
}

/** The org's delivery, attempt and event records, counted with SCAN on every master. */
function orgRecords(redis: Redis | Cluster, prefix: string, orgId: string): Promise<{ deliveries: number; attempts: number; events: number }> {
  return countOrgRecords(redis, createKeySchema(prefix), orgId);
}

/** Removes every key under `prefix` (its org keys and its queue partitions), on every master: the benchmark may run on a shared Redis. */
async function deleteUnderPrefix(redis: Redis | Cluster, prefix: string): Promise<void> {
  for (const node of await masters(redis)) {
    for (const match of [`${prefix}:*`, `{${prefix}:q*`]) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', match, 'COUNT', 1000);
        cursor = next;
        // One key per call: keys of several slots never meet in one command.
        for (const key of keys) await node.unlink(key);
      } while (cursor !== '0');
    }
  }
}

/**
 * One endpoint with `{lastPerEndpoint: keep}` at full speed for `durationS`: the most finished
 * deliveries it ever had, and what is left at the end. Counts, not speeds, are the result.
 */
export async function retentionAtSpeed(target: BenchTarget, receiver: ReceiverProcess, opts: { durationS: number; concurrency: number; keep?: number }): Promise<RetentionAtSpeed> {
  const keep = opts.keep ?? 100;
  const prefix = `bench:${randomBytes(4).toString('hex')}`;
  const { redisUrl, env } = posternEnv(target, 1);
  const p = await startPosternProcesses({ redisUrl, prefix, concurrency: opts.concurrency, env });
  const redis = connect(target);
  try {
    const policy: PolicyInput = { preset: 'standard', retention: { lastPerEndpoint: keep }, concurrency: { perEndpoint: opts.concurrency, perOrg: opts.concurrency } };
    const [org] = await createOrgs(p.apiBase, { orgs: 1, endpointsPerOrg: 1, url: `${receiver.base}/ok`, policy });
    const { orgId, endpointIds } = org!;
    const keys = createKeySchema(prefix);
    const indexes = FINISHED.map((s) => keys.endpointDeliveriesByStatus(orgId, endpointIds[0]!, s));
    const finished = async () => {
      let n = 0;
      for (const key of indexes) n += await redis.zcard(key);
      return n;
    };
    let maxFinishedKept = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        maxFinishedKept = Math.max(maxFinishedKept, await finished());
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const run = await posternThroughput(p, receiver, [org!], { durationS: opts.durationS, producers: 16, maxBacklog: 4 * opts.concurrency });
    const store = createStore({ redis, prefix });
    await pollUntil(async () => (await store.unfinished.count(orgId)) === 0, 60_000, 100);
    // The last finishes' trims run right after them: give them up to 15 s.
    await pollUntil(async () => (await finished()) <= keep, 15_000, 100);
    sampling = false;
    await sampler;
    maxFinishedKept = Math.max(maxFinishedKept, await finished());
    return {
      target: 'url' in target ? 'standalone' : 'cluster',
      seconds: r1(run.seconds),
      deliveries: run.deliveries,
      deliveriesPerSecond: Math.round(run.deliveriesPerSecond),
      keep,
      maxFinishedKept,
      finishedKeptAtEnd: await finished(),
      recordsAtEnd: await orgRecords(redis, prefix, orgId),
      loadAverage: loadavg().map(r1),
    };
  } finally {
    await p.stop();
    await deleteUnderPrefix(redis, prefix).catch(() => undefined);
    redis.disconnect();
  }
}

/**
 * Postern on a Redis Cluster at full speed: one org (one slot) and then `manyOrgs` orgs, with
 * deliveries/s and Redis commands per delivery on each master.
 */
export async function clusterThroughput(clusterNodes: string, receiver: ReceiverProcess, opts: { durationS: number; concurrency: number; partitions?: number; manyOrgs?: number; log: (line: string) => void }): Promise<{ masters: string[]; partitions: number; runs: ClusterRun[] }> {
  const redis = new Cluster(parseClusterNodes(clusterNodes));
  await redis.ping();
  const nodes = await masters(redis);
  const names = nodes.map((n) => `${n.options.host}:${n.options.port}`);
  const partitions = opts.partitions ?? (Number(process.env.BENCH_QUEUE_PARTITIONS) || 2 * nodes.length);
  const prefix = `bench:${randomBytes(4).toString('hex')}`;
  const p = await startPosternProcesses({ redisUrl: 'redis://127.0.0.1:1', prefix, concurrency: opts.concurrency, env: { REDIS_CLUSTER_NODES: clusterNodes, QUEUE_PARTITIONS: String(partitions) } });
  const runs: ClusterRun[] = [];
  try {
    const policy: PolicyInput = { preset: 'standard', concurrency: { perEndpoint: opts.concurrency, perOrg: opts.concurrency } };
    const [one] = await createOrgs(p.apiBase, { orgs: 1, endpointsPerOrg: 1, url: `${receiver.base}/ok`, policy });
    await warmUp(p, receiver, one!, { events: 2000, producers: 16 });
    const many = await createOrgs(p.apiBase, { orgs: opts.manyOrgs ?? 12, endpointsPerOrg: 1, url: `${receiver.base}/ok`, policy });
    const shapes: [string, BenchOrg[]][] = [
      ['1 org, 1 endpoint (one org slot, one partition)', [one!]],
      [`${many.length} orgs, 1 endpoint each (${partitions} partitions)`, many],
    ];
    for (const [scenario, orgs] of shapes) {
      const before = await Promise.all(nodes.map((n) => commandCalls(n)));
      const run = await posternThroughput(p, receiver, orgs, { durationS: opts.durationS, producers: 16, maxBacklog: 4 * opts.concurrency });
      // Let the sender finish its last jobs' completion before reading the counters.
      const store = createStore({ redis, prefix });
      await pollUntil(async () => {
        for (const o of orgs) if ((await store.unfinished.count(o.orgId)) > 0) return false;
        return true;
      }, 30_000, 100);
      const after = await Promise.all(nodes.map((n) => commandCalls(n)));
      const byNode: Record<string, number> = {};
      let total = 0;
      nodes.forEach((_n, i) => {
        let calls = 0;
        for (const [cmd, n] of after[i]!) calls += n - (before[i]!.get(cmd) ?? 0);
        byNode[names[i]!] = r1(calls / Math.max(1, run.deliveries));
        total += calls;
      });
      const result = { scenario, deliveries: run.deliveries, deliveriesPerSecond: Math.round(run.deliveriesPerSecond), commandsPerDeliveryByNode: byNode, commandsPerDeliveryTotal: r1(total / Math.max(1, run.deliveries)), loadAverage: loadavg().map(r1) };
      opts.log(`    cluster, ${scenario}: ${result.deliveriesPerSecond} deliveries/s; Redis commands per delivery by master ${JSON.stringify(byNode)} (total ${result.commandsPerDeliveryTotal}); load average ${result.loadAverage.join(' ')}`);
      runs.push(result);
    }
  } finally {
    await p.stop();
    await deleteUnderPrefix(redis, prefix).catch(() => undefined);
    redis.disconnect();
  }
  return { masters: names, partitions, runs };
}

/** The cluster the benchmark may use: `BENCH_REDIS_CLUSTER_NODES`, else `TEST_REDIS_CLUSTER_NODES`, else null. */
export function benchClusterNodes(): string | null {
  return process.env.BENCH_REDIS_CLUSTER_NODES || process.env.TEST_REDIS_CLUSTER_NODES || null;
}

async function main(): Promise<void> {
  const log = (line: string) => process.stdout.write(`[bench:cluster] ${line}\n`);
  const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 50);
  const durationS = Number(process.env.BENCH_DURATION_S ?? 10);
  const retentionS = Number(process.env.BENCH_RETENTION_S ?? 60);
  const nodes = benchClusterNodes();
  log(`load average ${loadavg().map(r1).join(' ')} on ${cpus().length} cores; cluster ${nodes ?? 'none'}`);
  const receiver = await startReceiverProcess();
  try {
    const targets: BenchTarget[] = [{ url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' }, ...(nodes ? [{ clusterNodes: nodes }] : [])];
    for (const target of targets) {
      const r = await retentionAtSpeed(target, receiver, { durationS: retentionS, concurrency });
      log(`retention at speed (${r.target}): ${r.deliveries} deliveries in ${r.seconds} s (${r.deliveriesPerSecond}/s), lastPerEndpoint ${r.keep}: at most ${r.maxFinishedKept} finished kept, ${r.finishedKeptAtEnd} at the end; records at the end ${JSON.stringify(r.recordsAtEnd)}; load ${r.loadAverage.join(' ')}`);
    }
    if (nodes) await clusterThroughput(nodes, receiver, { durationS, concurrency, log });
  } finally {
    await receiver.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(`[bench:cluster] failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      process.exit(1);
    },
  );
}

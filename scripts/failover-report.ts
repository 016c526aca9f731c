/**
 * `npm run failover-report`: what a Redis Cluster failover costs Postern — a report, not a gate.
 *
 * Starts its own cluster (scripts/redis-cluster.sh with REDIS_CLUSTER_NAME, three masters with one
 * replica each, on the first free ports from FAILOVER_PORT, cluster-node-timeout
 * FAILOVER_NODE_TIMEOUT_MS), ingest and a sender as processes against it (QUEUE_PARTITIONS 6), and
 * a receiver in this process that counts every `webhook-id`. Producers post events at
 * FAILOVER_RATE per second for FAILOVER_DURATION_S to FAILOVER_ORGS orgs; at FAILOVER_KILL_AT_S the
 * master holding the first org's slot gets `kill -9`. The run then waits for every accepted event
 * to arrive (up to the reconciler's grace plus a minute) and reports:
 *
 * - accepted (202) events, and those refused (not 202, or no answer) — refused ones are the
 *   producer's to retry, never counted as lost;
 * - lost: accepted and never delivered (and whether Redis still has the event);
 * - delivered twice or more (the receiver's dedupe on `webhook-id` absorbs them);
 * - delayed: accepted → first arrival over FAILOVER_DELAYED_MS (2,000), with the worst;
 * - the outage: kill → the replica serving the slot (`cluster_state:ok`), the window in which ingest
 *   refused events, and the longest time no delivery arrived.
 *
 * The sender runs with shortened recovery timings so a run takes about two minutes (printed; set
 * FAILOVER_PRODUCTION_TIMINGS=1 for the defaults: 30 s job lock, 5 min reconcile grace).
 * FAILOVER_SERVER_ARGS adds redis-server flags (e.g. "--cluster-require-full-coverage no").
 * FAILOVER_ACCEPT_DURABILITY sets ingest's ACCEPT_DURABILITY (default local; `replica` makes every
 * 202 wait for the replica, so a kill -9 right after it loses none).
 * Writes bench-results/failover-<time>.json.
 */
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Cluster, Redis } from 'ioredis';
import { createKeySchema, parseClusterNodes } from '@postern/store';
import { jsonClient, percentile, REPO_ROOT, startPosternProcesses } from '../bench/bench-support.js';
import { createOrgs } from '../bench/scenarios.js';

const env = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const RATE = env('FAILOVER_RATE', 100);
const DURATION_S = env('FAILOVER_DURATION_S', 40);
const KILL_AT_S = env('FAILOVER_KILL_AT_S', 12);
const ORGS = env('FAILOVER_ORGS', 6);
const PORT = env('FAILOVER_PORT', 7700);
const NODE_TIMEOUT_MS = env('FAILOVER_NODE_TIMEOUT_MS', 2000);
const DELAYED_MS = env('FAILOVER_DELAYED_MS', 2000);
const PRODUCTION_TIMINGS = process.env.FAILOVER_PRODUCTION_TIMINGS === '1';
/** Ingest's `ACCEPT_DURABILITY` (local, replica or local-fsync): what a 202 waited for. */
const ACCEPT_DURABILITY = process.env.FAILOVER_ACCEPT_DURABILITY ?? 'local';
/** Sender recovery timings: shortened so one run takes minutes, not the defaults' quarter hour. */
const SENDER_TIMINGS: Record<string, string> = PRODUCTION_TIMINGS
  ? {}
  : { JOB_LOCK_DURATION_MS: '10000', STALLED_CHECK_INTERVAL_MS: '5000', RECONCILE_INTERVAL_MS: '10000', RECONCILE_GRACE_MS: '20000', PARK_SAFETY_DELAY_MS: '10000' };
const RECONCILE_GRACE_MS = Number(SENDER_TIMINGS.RECONCILE_GRACE_MS ?? 300_000) + Number(SENDER_TIMINGS.RECONCILE_INTERVAL_MS ?? 60_000);
const CLUSTER_NAME = `failover-${process.pid}`;
const MAX_IN_FLIGHT = 400;

const log = (line: string) => process.stdout.write(`[failover] ${line}\n`);
const r1 = (n: number) => Math.round(n * 10) / 10;

function clusterScript(args: string[], extraEnv: Record<string, string> = {}): string {
  return execFileSync(path.join(REPO_ROOT, 'scripts/redis-cluster.sh'), args, { cwd: REPO_ROOT, env: { ...process.env, REDIS_CLUSTER_NAME: CLUSTER_NAME, ...extraEnv }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
}

/** The receiver: 200 to everything, and when each `webhook-id` arrived. */
async function startCountingReceiver(): Promise<{ url: string; arrivals: Map<string, number[]>; all: number[]; close(): Promise<void> }> {
  const arrivals = new Map<string, number[]>();
  const all: number[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const now = Date.now();
      const id = String(req.headers['webhook-id'] ?? '');
      const seen = arrivals.get(id);
      if (seen) seen.push(now);
      else arrivals.set(id, [now]);
      all.push(now);
      res.end('ok');
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, arrivals, all, close: () => new Promise((r) => server.close(() => r()))};
}

/** host:port of the master serving `slot`, from CLUSTER SLOTS as `node` sees it. */
async function masterOfSlot(node: Redis, slot: number): Promise<string | null> {
  const slots = (await node.call('CLUSTER', 'SLOTS')) as [number, number, [string, number, ...unknown[]], ...unknown[]][];
  for (const [from, to, [host, port]] of slots) if (slot >= from && slot <= to) return `${host}:${port}`;
  return null;
}

async function main(): Promise<void> {
  const startedAt = Date.now();
  const loadAtStart = loadavg().map(r1);
  const serverArgs = process.env.FAILOVER_SERVER_ARGS ?? '';
  const out = clusterScript(['start', String(PORT)], { REDIS_CLUSTER_REPLICAS: '1', REDIS_CLUSTER_NODE_TIMEOUT_MS: String(NODE_TIMEOUT_MS), REDIS_CLUSTER_SERVER_ARGS: serverArgs });
  const nodes = /TEST_REDIS_CLUSTER_NODES=(\S+)/.exec(out)?.[1];
  if (!nodes) throw new Error(`redis-cluster.sh printed no nodes: ${out}`);
  log(`cluster ${nodes} (+1 replica each, cluster-node-timeout ${NODE_TIMEOUT_MS} ms${serverArgs ? `, ${serverArgs}` : ''}); load average ${loadAtStart.join(' ')} on ${cpus().length} cores`);
  const receiver = await startCountingReceiver();
  const prefix = `failover:${randomBytes(3).toString('hex')}`;
  const cluster = new Cluster(parseClusterNodes(nodes), { redisOptions: { maxRetriesPerRequest: null } });
  cluster.on('error', () => undefined);
  const direct: Redis[] = [];
  let p: Awaited<ReturnType<typeof startPosternProcesses>> | null = null;
  try {
    p = await startPosternProcesses({ redisUrl: 'redis://127.0.0.1:1', prefix, concurrency: 50, env: { REDIS_CLUSTER_NODES: nodes, QUEUE_PARTITIONS: '6', ...SENDER_TIMINGS, ACCEPT_DURABILITY: ACCEPT_DURABILITY } });
    log(`ACCEPT_DURABILITY=${ACCEPT_DURABILITY}; sender timings: ${PRODUCTION_TIMINGS ? 'production defaults' : JSON.stringify(SENDER_TIMINGS)}`);
    const orgs = await createOrgs(p.apiBase, { orgs: ORGS, endpointsPerOrg: 1, url: receiver.url, policy: 'standard' });
    const keys = createKeySchema(prefix);
    // The victim: the master holding the first org's records.
    const slot = Number(await cluster.call('CLUSTER', 'KEYSLOT', keys.delivery(orgs[0]!.orgId, 'x')));
    const seeds = parseClusterNodes(nodes);
    for (const s of seeds) direct.push(new Redis({ host: s.host, port: s.port, maxRetriesPerRequest: 1, lazyConnect: true }));
    // The killed master's connection fails from then on: expected, not worth a line each retry.
    for (const d of direct) d.on('error', () => undefined);
    await Promise.all(direct.map((d) => d.connect()));
    const victim = (await masterOfSlot(direct[0]!, slot))!;
    const victimConn = direct.find((d) => `${d.options.host}:${d.options.port}` === victim)!;
    const witness = direct.find((d) => d !== victimConn)!;
    const victimPid = Number(/process_id:(\d+)/.exec(await victimConn.info('server'))?.[1]);
    const orgsOnVictim: number[] = [];
    for (const [i, o] of orgs.entries()) {
      const s = Number(await cluster.call('CLUSTER', 'KEYSLOT', keys.delivery(o.orgId, 'x')));
      if ((await masterOfSlot(witness, s)) === victim) orgsOnVictim.push(i);
    }
    log(`${ORGS} orgs, ${orgsOnVictim.length} of them on ${victim} (pid ${victimPid}), which gets kill -9 at ${KILL_AT_S} s; ${RATE} events/s for ${DURATION_S} s`);

    // Open-loop producers: RATE events/s in 10 ms ticks, at most MAX_IN_FLIGHT requests waiting.
    const api = jsonClient(p.apiBase, 256);
    const accepted = new Map<string, { at: number; org: number }>();
    const refused: { at: number; answeredAt: number; why: string }[] = [];
    let inFlight = 0;
    let sent = 0;
    let skipped = 0;
    const loadStart = Date.now();
    const killAt = loadStart + KILL_AT_S * 1000;
    let killedAt = 0;
    let promotedAt = 0;
    let newMaster = '';
    const watcher = (async () => {
      while (Date.now() < killAt) await new Promise((r) => setTimeout(r, 20));
      process.kill(victimPid, 'SIGKILL');
      killedAt = Date.now();
      log(`killed ${victim} at ${r1((killedAt - loadStart) / 1000)} s`);
      for (;;) {
        const state = await witness.call('CLUSTER', 'INFO').then(String, () => '');
        const master = await masterOfSlot(witness, slot).catch(() => null);
        if (state.includes('cluster_state:ok') && master && master !== victim) {
          promotedAt = Date.now();
          newMaster = master;
          log(`replica ${master} serves the slot ${promotedAt - killedAt} ms after the kill`);
          return;
        }
        if (Date.now() - killedAt > 120_000) throw new Error('no replica promoted within 120 s');
        await new Promise((r) => setTimeout(r, 50));
      }
    })();
    await new Promise<void>((resolve) => {
      const perTick = RATE / 100;
      let owed = 0;
      const timer = setInterval(() => {
        if (Date.now() - loadStart >= DURATION_S * 1000) {
          clearInterval(timer);
          resolve();
          return;
        }
        owed += perTick;
        for (; owed >= 1; owed--) {
          if (inFlight >= MAX_IN_FLIGHT) {
            skipped++;
            continue;
          }
          const org = sent++ % orgs.length;
          inFlight++;
          const at = Date.now();
          api
            .post('/v1/events', { type: 'failover.test', data: { n: sent } }, orgs[org]!.apiKey)
            .then(
              (r) => {
                if (r.status === 202) accepted.set(r.body.id as string, { at: Date.now(), org });
                else refused.push({ at, answeredAt: Date.now(), why: `${r.status} ${r.body?.error?.code ?? ''}` });
              },
              (err: Error) => refused.push({ at, answeredAt: Date.now(), why: err.message }),
            )
            .finally(() => inFlight--);
        }
      }, 10);
    });
    await watcher;
    while (inFlight > 0) await new Promise((r) => setTimeout(r, 50));
    api.close();
    log(`load done: ${sent} sent, ${accepted.size} accepted, ${refused.length} refused, ${skipped} not sent (${MAX_IN_FLIGHT} requests already waiting)`);

    // Wait for every accepted event, up to the reconciler's grace and interval plus a minute.
    const waitUntil = Date.now() + RECONCILE_GRACE_MS + 60_000;
    const missing = () => [...accepted.keys()].filter((id) => !receiver.arrivals.has(id));
    while (missing().length > 0 && Date.now() < waitUntil) await new Promise((r) => setTimeout(r, 250));
    // A little more, for duplicates still on their way.
    await new Promise((r) => setTimeout(r, 3000));

    const lost = missing();
    const lostStillInRedis = [];
    for (const id of lost.slice(0, 200)) {
      const { org } = accepted.get(id)!;
      if ((await cluster.exists(keys.event(orgs[org]!.orgId, id)).catch(() => 0)) === 1) lostStillInRedis.push(id);
    }
    const duplicates = [...accepted.keys()].filter((id) => (receiver.arrivals.get(id)?.length ?? 0) > 1);
    const delays = [...accepted.entries()].filter(([id]) => receiver.arrivals.has(id)).map(([id, a]) => receiver.arrivals.get(id)![0]! - a.at);
    const delayed = delays.filter((d) => d > DELAYED_MS);
    const refusedAfterKill = refused.filter((r) => r.answeredAt >= killedAt).sort((a, b) => a.answeredAt - b.answeredAt);
    const refusalWindowMs = refusedAfterKill.length > 0 ? refusedAfterKill[refusedAfterKill.length - 1]!.answeredAt - refusedAfterKill[0]!.at : 0;
    // Delay before the kill is the pipeline's own on this machine: the baseline for the rest.
    const delayOf = (id: string) => receiver.arrivals.get(id)![0]! - accepted.get(id)!.at;
    const arrived = [...accepted.keys()].filter((id) => receiver.arrivals.has(id));
    const beforeKill = arrived.filter((id) => accepted.get(id)!.at < killedAt).map(delayOf);
    const afterKill = arrived.filter((id) => accepted.get(id)!.at >= killedAt).map(delayOf);
    // What the apps logged at error level, by message.
    const errors: Record<string, number> = {};
    for (const [app, lines] of [['ingest', p.ingest.stdout], ['sender', p.sender?.stdout ?? []]] as const) {
      for (const line of lines) {
        try {
          const entry = JSON.parse(line) as { level?: number; msg?: string; err?: unknown };
          if ((entry.level ?? 0) < 40) continue;
          const err = typeof entry.err === 'string' ? entry.err : ((entry.err as { message?: string } | undefined)?.message ?? '');
          const key = `${app} ${entry.level! >= 50 ? 'error' : 'warn'}: ${entry.msg ?? ''}${err ? ` (${err.slice(0, 80)})` : ''}`;
          errors[key] = (errors[key] ?? 0) + 1;
        } catch {
          // not a JSON log line
        }
      }
    }
    const arrivals = [...receiver.all].sort((a, b) => a - b).filter((t) => t >= loadStart && t <= loadStart + DURATION_S * 1000);
    let longestGap = 0;
    let gapFrom = 0;
    for (let i = 1; i < arrivals.length; i++) {
      if (arrivals[i]! - arrivals[i - 1]! > longestGap) {
        longestGap = arrivals[i]! - arrivals[i - 1]!;
        gapFrom = arrivals[i - 1]!;
      }
    }
    const whyRefused: Record<string, number> = {};
    for (const r of refused) whyRefused[r.why] = (whyRefused[r.why] ?? 0) + 1;
    const report = {
      at: new Date(startedAt).toISOString(),
      machine: { cores: cpus().length, loadAverageAtStart: loadAtStart, loadAverageAtEnd: loadavg().map(r1) },
      settings: { rate: RATE, durationS: DURATION_S, killAtS: KILL_AT_S, orgs: ORGS, orgsOnKilledMaster: orgsOnVictim.length, nodeTimeoutMs: NODE_TIMEOUT_MS, serverArgs, senderTimings: PRODUCTION_TIMINGS ? 'production defaults' : SENDER_TIMINGS },
      killed: victim,
      promoted: newMaster,
      eventsSent: sent,
      accepted: accepted.size,
      refused: refused.length,
      refusedWhy: whyRefused,
      lost: lost.length,
      lostStillInRedis: lostStillInRedis.length,
      deliveredTwiceOrMore: duplicates.length,
      extraRequests: duplicates.reduce((n, id) => n + receiver.arrivals.get(id)!.length - 1, 0),
      delayed: { thresholdMs: DELAYED_MS, count: delayed.length, maxMs: delays.length ? Math.max(...delays) : 0, p50Ms: percentile(delays, 50), p99Ms: percentile(delays, 99) },
      delayBeforeKillMs: { p50: percentile(beforeKill, 50), p99: percentile(beforeKill, 99), max: beforeKill.length ? Math.max(...beforeKill) : 0 },
      delayAcceptedAfterKillMs: { p50: percentile(afterKill, 50), p99: percentile(afterKill, 99), max: afterKill.length ? Math.max(...afterKill) : 0, overThreshold: afterKill.filter((d) => d > DELAYED_MS).length },
      appLogWarningsAndErrors: errors,
      outage: {
        killToPromotedMs: promotedAt - killedAt,
        ingestRefusalWindowMs: refusalWindowMs,
        refusedAfterKill: refusedAfterKill.length,
        longestDeliveryGapMs: longestGap,
        longestGapStartsAfterKillMs: gapFrom - killedAt,
      },
    };
    mkdirSync(path.join(REPO_ROOT, 'bench-results'), { recursive: true });
    const file = path.join(REPO_ROOT, 'bench-results', `failover-${new Date(startedAt).toISOString().replace(/[:.]/g, '-')}.json`);
    writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    console.log(JSON.stringify(report, null, 2));
    log(`wrote ${path.relative(REPO_ROOT, file)}`);
  } finally {
    await p?.stop().catch(() => undefined);
    cluster.disconnect();
    for (const d of direct) d.disconnect();
    await receiver.close();
    clusterScript(['stop']);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`[failover] failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    try {
      clusterScript(['stop']);
    } catch {
      // already stopped
    }
    process.exit(1);
  },
);

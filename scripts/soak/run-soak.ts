/**
 * One soak run against one Redis target: its own Redis, ingest and N senders as processes, a
 * receiver per endpoint, the producer, the seeded faults, the drain, then the delivery log read
 * back through the API and {@link checkSoak} over everything recorded.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectRedis, createDeliveryQueues, createKeySchema, parseClusterNodes, type RedisTarget } from '@postern/store';
import { apiExpect, soakApi, type SoakApi } from './api.js';
import { appsOwningPorts, startApp, startIngest, type SoakApp } from './apps.js';
import { checkSoak, type CheckResult } from './check.js';
import { planFaults, SENDER_FAULTS, type PlannedFault } from './faults.js';
import { watchOutcomeFeeds, type OutcomeRecordedAt } from './outcome-feed.js';
import { startProducer } from './producer.js';
import { startRedeliverer } from './redeliverer.js';
import { mulberry32 } from './prng.js';
import { startSoakReceiver, watchReceiverStalls, type SoakReceiver } from './receivers.js';
import type { AttemptLog, DeliveryLog, EndpointSpec, FaultKind, FaultRecord, PaceSample, ReceiverRecord, SoakRecords } from './records.js';
import { startClusterRedis, startStandaloneRedis, type SoakRedis } from './redis-target.js';
import { SLOW_SERIAL_ENDPOINT, soakTopology } from './topology.js';
import { waitFor } from './wait-for.js';

/** Options of {@link runSoak}. */
export interface SoakOptions {
  target: 'standalone' | 'cluster';
  /** Length of the production phase (faults included), s. */
  seconds: number;
  seed: number;
  /** Sender processes, at least 3. */
  senders: number;
  /** Steady events per second over every endpoint (bursts come on top). */
  ratePerSecond: number;
  /** The `burst-retry` endpoint's wait before attempt 2, ms (60 000 in the full soak). */
  longWaitMs: number;
  /** How long the drain may wait for every accepted event to be terminal, ms. */
  drainDeadlineMs: number;
  /** Extra sender environment (e.g. JOB_LOCK_DURATION_MS); default none: production timings. */
  senderEnv?: Record<string, string>;
  /** Redeliveries asked for per second during production (default a tenth of `ratePerSecond`, at least 1; 0: none). */
  redeliveriesPerSecond?: number;
  /** Per-sender concurrency (SENDER_CONCURRENCY, default 20). */
  senderConcurrency?: number;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

/** What one run produced: the records, the check, and counts for the summary. */
export interface SoakRun {
  options: SoakOptions;
  startedAtMs: number;
  endedAtMs: number;
  records: SoakRecords;
  result: CheckResult;
  faultsByKind: Partial<Record<FaultKind, number>>;
  /** Producer answers by status. */
  producerAnswers: Record<string, number>;
  /** The redeliverer's answers by status (409s are expected: the delivery was in flight, or its endpoint disabled). */
  redeliveryAnswers: Record<string, number>;
  /** Whether the drain finished before its deadline (else the not-terminal deliveries are violations). */
  drained: boolean;
  drainMs: number;
  /**
   * What held a drain that reached its deadline, read then: per endpoint key, its pending and
   * in-flight deliveries (up to 5 of each), and the receivers still holding requests open. Empty
   * when the drain finished.
   */
  drainLeftovers: string[];
  /** Adaptive endpoints' `pace` and `pausedUntil` at the end. */
  paces: Record<string, unknown>;
  /** Faults whose injection failed part way (`<kind>: <error>`); they still count in {@link faultsByKind}. */
  faultErrors: string[];
}

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** How long a SIGKILL waits for a sender to have a request in flight at the slow endpoint before it hits the planned one. */
const KILL_TARGET_WAIT_MS = 5000;

/** The delivery statuses the drain waits out. */
const UNFINISHED = ['pending', 'in_flight'] as const;

/** How often the adaptive endpoints' pace is read during the run. */
const PACE_SAMPLE_INTERVAL_MS = 200;

const ISO = (s: string | null | undefined) => (s ? Date.parse(s) : NaN);

/** Reads one delivery with its attempts from `GET /v1/deliveries/:id` (null: not found or no answer). */
async function readDelivery(api: SoakApi, key: string, id: string, endpointKey: string): Promise<DeliveryLog | null> {
  for (let tries = 0; tries < 3; tries++) {
    const r = await api('GET', `/v1/deliveries/${id}`, key);
    if (r.status === 404) return null;
    if (r.status !== 200) continue;
    const attempts: AttemptLog[] = (r.body.attempts as any[]).map((a) => {
      const startedAtMs = ISO(a.startedAt);
      return { number: a.number, startedAtMs, finishedAtMs: startedAtMs + (a.durationMs ?? 0), responseStatus: a.responseStatus ?? null, error: a.error ?? null };
    });
    return { id, endpointKey, status: r.body.status, lastError: r.body.lastError ?? null, cancelReason: r.body.cancelReason ?? null, attempts, redeliveredFromId: r.body.redeliveredFromId ?? null };
  }
  return null;
}

/** Runs `fn` over `items`, `lanes` at a time. */
async function eachLimited<T>(items: readonly T[], lanes: number, fn: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: lanes }, async () => {
    while (next < items.length) await fn(items[next++] as T);
  }));
}

/** Runs one soak (see {@link SoakOptions}); everything it started is stopped before it returns. */
export async function runSoak(options: SoakOptions): Promise<SoakRun> {
  if (options.senders < 3) throw new Error('SOAK_SENDERS must be at least 3');
  const log = options.log ?? (() => undefined);
  const random = mulberry32(options.seed);
  const startedAtMs = Date.now();
  const prefix = `soak:${randomBytes(4).toString('hex')}`;
  const adminToken = `soak-admin-${randomBytes(12).toString('hex')}`;
  const receiverRecords: ReceiverRecord[] = [];
  const receivers: SoakReceiver[] = [];
  const senders: SoakApp[] = [];
  let ingest: SoakApp | null = null;
  let redis: SoakRedis | null = null;
  let feedConn: ReturnType<typeof connectRedis> | null = null;
  try {
    redis = options.target === 'standalone' ? await startStandaloneRedis() : await startClusterRedis(`soak-${process.pid}-${randomBytes(2).toString('hex')}`);
    log(`redis ${options.target}: ${JSON.stringify(redis.env)}`);
    const appEnv = { ...redis.env, REDIS_PREFIX: prefix, ALLOWED_ADDRESSES: '127.0.0.1,::1', ADMIN_TOKEN: adminToken };
    const plans = soakTopology({ seed: options.seed, longWaitMs: options.longWaitMs });
    for (const plan of plans) receivers.push(await startSoakReceiver(plan.spec.key, plan.behaviour, receiverRecords));
    const receiverStalls: [number, number][] = [];
    const stopWatchingStalls = watchReceiverStalls(receiverStalls);

    // The apps' own logs, kept beside the report (`.data/soak-logs-<target>/`, emptied first).
    const logDir = path.join(REPO_ROOT, '.data', `soak-logs-${options.target}`);
    rmSync(logDir, { recursive: true, force: true });
    const ingestApp = await startIngest(appEnv, logDir);
    ingest = ingestApp;
    const api = soakApi(ingestApp.baseUrl);
    const orgKeys = new Map<string, string>();
    const orgIds: string[] = [];
    for (const orgKey of new Set(plans.map((p) => p.spec.orgKey))) {
      const org = await apiExpect(api, 201, 'POST', '/v1/orgs', adminToken, { name: `soak-${orgKey}` });
      orgKeys.set(orgKey, org.apiKey);
      orgIds.push(org.id);
    }
    const keyOf = (orgKey: string) => orgKeys.get(orgKey)!;
    const endpoints: EndpointSpec[] = [];
    for (const [i, plan] of plans.entries()) {
      const ep = await apiExpect(api, 201, 'POST', '/v1/endpoints', keyOf(plan.spec.orgKey), { url: receivers[i]!.url, eventTypes: [`soak.${plan.spec.key}`], policy: plan.policy });
      endpoints.push({ ...plan.spec, id: ep.id });
    }

    // The reconciler looks every 5 s at deliveries 20 s old (production: every minute, at 5 min):
    // a delivery written by an ingest whose queueing then failed (its producer got a 503) is queued
    // within the drain, so the drain waits for it rather than for the production grace.
    const senderEnv = { ...appEnv, SENDER_HOST: '127.0.0.1', SENDER_PORT: '0', SENDER_CONCURRENCY: String(options.senderConcurrency ?? 20), RECONCILE_INTERVAL_MS: '5000', RECONCILE_GRACE_MS: '20000', ...options.senderEnv };
    for (let i = 0; i < options.senders; i++) senders.push(startApp('sender', `sender-${i + 1}`, senderEnv, logDir));
    const target: RedisTarget = redis.env.REDIS_URL ? { url: redis.env.REDIS_URL } : { clusterNodes: parseClusterNodes(redis.env.REDIS_CLUSTER_NODES!) };
    const watchConn = connectRedis(target, 'worker');
    watchConn.on('error', () => undefined);
    const keySchema = createKeySchema(prefix, { queuePartitions: Number(redis.env.QUEUE_PARTITIONS) });
    const queues = createDeliveryQueues(watchConn, keySchema);
    try {
      await waitFor(`${options.senders} senders on every queue partition`, async () => {
        const dead = senders.find((s) => !s.running);
        if (dead) throw new Error(`${dead.name} exited\n${dead.output()}`);
        const counts = await Promise.all(queues.partitions.map((q) => q.getWorkersCount()));
        return counts.every((c) => c >= options.senders);
      }, 90_000, 250);
    } finally {
      await queues.close().catch(() => undefined);
      watchConn.disconnect();
    }
    log(`ingest ${ingestApp.baseUrl}, ${options.senders} senders, ${endpoints.length} endpoints, prefix ${prefix}`);

    // Production with faults.
    const productionMs = options.seconds * 1000;
    const plan: PlannedFault[] = planFaults(random, [...SENDER_FAULTS, ...redis.faultKinds], productionMs, options.senders);
    log(`faults planned: ${plan.map((f) => `${Math.round(f.atMs / 1000)}s ${f.kind}`).join(', ')}`);
    // When each outcome was recorded (Redis's clock), from the orgs' live feeds: pauses start there.
    feedConn = connectRedis(target, 'worker');
    feedConn.on('error', () => undefined);
    const outcomeRecordedAt: OutcomeRecordedAt = {};
    const feeds = watchOutcomeFeeds(feedConn, orgIds.map((id) => keySchema.orgLiveFeed(id)), outcomeRecordedAt);
    const producer = startProducer(api, plans, keyOf, options.ratePerSecond, random);
    // Its own stream of the seed: the producer's and the faults' picks stay those of the seed.
    const redeliverer = startRedeliverer(api, plans, producer.accepted, keyOf, options.redeliveriesPerSecond ?? Math.max(1, options.ratePerSecond / 10), mulberry32(options.seed ^ 0x5eed));
    // The adaptive endpoints' pace, five times a second, until the drain ends.
    const paceSamples: PaceSample[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        for (const ep of endpoints.filter((e) => e.pacing === 'adaptive')) {
          const r = await api('GET', `/v1/endpoints/${ep.id}`, keyOf(ep.orgKey));
          if (r.status === 200 && r.body.pace) paceSamples.push({ endpointKey: ep.key, atMs: Date.now(), perSecond: r.body.pace.perSecond, concurrency: r.body.pace.concurrency });
        }
        await new Promise((resolve) => setTimeout(resolve, PACE_SAMPLE_INTERVAL_MS));
      }
    })();
    const productionStart = Date.now();
    const faults: FaultRecord[] = [];
    const faultErrors: string[] = [];
    const soakRedis = redis;
    const slowReceiver = receivers[plans.findIndex((p) => p.spec.key === SLOW_SERIAL_ENDPOINT)]!;
    const faultLoop = (async () => {
      for (const f of plan) {
        const wait = productionStart + f.atMs - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        try {
          if (f.kind === 'sender-sigkill' || f.kind === 'sender-sigterm') {
            let sender = senders[f.senderIndex]!;
            if (f.kind === 'sender-sigkill') {
              // The sender with a request in flight at the one-at-a-time slow endpoint, when one has
              // it within a few seconds: the kill then cuts an attempt off and holds that endpoint's slot.
              const holder = await waitFor('a sender with a request in flight at the slow endpoint', () => appsOwningPorts(senders, slowReceiver.openRemotePorts())[0], KILL_TARGET_WAIT_MS, 50).catch(() => null);
              if (holder) sender = holder;
            }
            const atMs = Date.now();
            await sender.stop(f.kind === 'sender-sigkill' ? 'SIGKILL' : 'SIGTERM');
            const record: FaultRecord = { kind: f.kind, target: sender.name, atMs, restoredAtMs: null };
            faults.push(record);
            await new Promise((r) => setTimeout(r, f.downMs));
            sender.start();
            record.restoredAtMs = Date.now();
          } else {
            const record: FaultRecord = { kind: f.kind, target: '', atMs: Date.now(), restoredAtMs: null };
            faults.push(record);
            const outcome = await soakRedis.inject(f.kind, random, f.downMs);
            record.target = outcome.target;
            record.restoredAtMs = outcome.restoredAtMs;
          }
          log(`fault ${f.kind} at ${Math.round((faults[faults.length - 1]!.atMs - productionStart) / 1000)} s on ${faults[faults.length - 1]!.target}`);
        } catch (err) {
          faultErrors.push(`${f.kind}: ${(err as Error).message}`);
          log(`fault ${f.kind} failed: ${(err as Error).message}`);
        }
      }
    })();
    await waitFor('the production phase to end', () => Date.now() >= productionStart + productionMs, productionMs + 1000, 200);
    await Promise.all([producer.stop(), redeliverer.stop()]);
    const producedUntilMs = Date.now();
    await faultLoop;
    for (const s of senders) if (!s.running) s.start();
    log(`production done: ${producer.accepted.length} events accepted (${JSON.stringify(producer.answers)}), ${redeliverer.redeliveries.length} redeliveries made (${JSON.stringify(redeliverer.answers)}); draining`);

    // Drain: every endpoint without pending or in-flight deliveries, and every receiver answered.
    const drainStart = Date.now();
    let drained = true;
    /** Up to `limit` of an endpoint's deliveries in `status` (`pending` or `in_flight`), or the list's HTTP status when it failed. */
    const unfinishedOf = async (ep: EndpointSpec, status: string, limit: number) => {
      const r = await api('GET', `/v1/endpoints/${ep.id}/deliveries?status=${status}&limit=${limit}`, keyOf(ep.orgKey));
      return r.status === 200 ? (r.body.data as { id: string; attemptCount: number; nextAttemptAt: string | null; createdAt: string }[]) : r.status;
    };
    await waitFor('every accepted delivery to be terminal', async () => {
      for (const ep of endpoints) {
        for (const status of UNFINISHED) {
          const left = await unfinishedOf(ep, status, 1);
          if (typeof left === 'number' || left.length > 0) return false;
        }
      }
      return receivers.every((rc) => rc.open() === 0);
    }, options.drainDeadlineMs, 1000).catch((err: Error) => {
      drained = false;
      log(`drain: ${err.message}`);
    });
    const drainLeftovers: string[] = [];
    if (!drained) {
      for (const ep of endpoints) {
        for (const status of UNFINISHED) {
          const left = await unfinishedOf(ep, status, 5);
          if (typeof left === 'number') drainLeftovers.push(`${ep.key}: ${status} list answered ${left}`);
          else for (const d of left) drainLeftovers.push(`${ep.key}: ${d.id} ${status}, ${d.attemptCount} attempt(s), created ${d.createdAt}, next ${d.nextAttemptAt ?? '—'}${producer.accepted.some((ev) => ev.deliveryIds.includes(d.id)) ? '' : ' (its event got no 202)'}`);
        }
      }
      for (const [i, rc] of receivers.entries()) if (rc.open() > 0) drainLeftovers.push(`${plans[i]!.spec.key}: receiver holds ${rc.open()} request(s) open`);
      for (const line of drainLeftovers) log(`drain left: ${line}`);
    }
    const drainMs = Date.now() - drainStart;
    sampling = false;
    await sampler;
    await feeds.stop();
    log(`drain ${drained ? 'finished' : 'gave up'} after ${Math.round(drainMs / 1000)} s; reading the delivery log`);

    const endpointByKey = new Map(endpoints.map((e) => [e.key, e]));
    const deliveries = new Map<string, DeliveryLog>();
    const wanted = [...producer.accepted.flatMap((ev) => ev.deliveryIds.map((id) => ({ id, endpointKey: ev.endpointKey }))), ...redeliverer.redeliveries.map((r) => ({ id: r.deliveryId, endpointKey: r.endpointKey }))];
    await eachLimited(wanted, 8, async ({ id, endpointKey }) => {
      const d = await readDelivery(api, keyOf(endpointByKey.get(endpointKey)!.orgKey), id, endpointKey);
      if (d) deliveries.set(id, d);
    });
    // Deliveries the receivers saw that the producer never heard a 202 for (its answer was lost).
    const known = new Set(deliveries.keys());
    const extra = [...new Set(receiverRecords.map((r) => `${r.endpointKey} ${r.deliveryId}`))].filter((s) => !known.has(s.split(' ')[1]!));
    const redeliveries = [...redeliverer.redeliveries];
    await eachLimited(extra, 8, async (s) => {
      const [endpointKey, id] = s.split(' ') as [string, string];
      const d = await readDelivery(api, keyOf(endpointByKey.get(endpointKey)!.orgKey), id, endpointKey);
      if (!d) return;
      deliveries.set(id, d);
      // A redelivery whose request never got an answer, yet was made: asked for no earlier than the first try.
      const from = d.redeliveredFromId;
      if (from) redeliveries.push({ deliveryId: id, redeliveredFromId: from, eventId: receiverRecords.find((r) => r.deliveryId === id)!.webhookId, endpointKey, requestedAtMs: redeliverer.unanswered.get(from) ?? 0 });
    });
    const paces: Record<string, unknown> = {};
    for (const ep of endpoints.filter((e) => e.pacing === 'adaptive' || e.breaker)) {
      const r = await api('GET', `/v1/endpoints/${ep.id}`, keyOf(ep.orgKey));
      paces[ep.key] = { status: r.body?.status, pace: r.body?.pace, pausedUntil: r.body?.pausedUntil, disabledReason: r.body?.disabledReason };
    }
    stopWatchingStalls();
    const records: SoakRecords = { endpoints, accepted: producer.accepted, redeliveries, deliveries, receiver: receiverRecords, faults, paceSamples, producedUntilMs, receiverStalls, outcomeRecordedAt };
    const result = checkSoak(records);
    const faultsByKind: Partial<Record<FaultKind, number>> = {};
    for (const f of faults) faultsByKind[f.kind] = (faultsByKind[f.kind] ?? 0) + 1;
    if (faultErrors.length > 0) log(`faults that failed to run: ${faultErrors.join('; ')}`);
    return { options, startedAtMs, endedAtMs: Date.now(), records, result, faultsByKind, producerAnswers: producer.answers, redeliveryAnswers: redeliverer.answers, drained, drainMs, drainLeftovers, paces, faultErrors };
  } finally {
    await Promise.all(senders.map((s) => s.stop('SIGKILL')));
    await ingest?.stop('SIGKILL');
    feedConn?.disconnect();
    await Promise.all(receivers.map((r) => r.close()));
    await redis?.close();
  }
}

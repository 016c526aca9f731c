import { DelayedError, Job, UnrecoverableError, Worker } from 'bullmq';
import { DELIVERY_QUEUE_NAME, DELIVERY_WORKER_REMOVE, parseDeliveryJob, StatsFlusher, type AttemptIds, type DeliveryJobData, type ParsedDeliveryJob, type DeliveryQueues, type EndpointRecord, type RedisClient, type Store } from '@postern/store';
import { createIdFactory, createSigningKeyCache } from '@postern/shared';
import type { Logger } from 'pino';
import type { Tracer } from '@postern/telemetry';
import { runAttempt, type DeliverDeps } from './deliver.js';
import { createSandboxPool, type SandboxPool } from '@postern/sandbox';
import { createOauthTokens, type OauthTokens } from './oauth-tokens.js';
import type { DeliveryTransport } from './http-transport.js';
import type { LookupAll } from './destination-check.js';
import { createReconciler, requeueWithoutJob, type Reconciler } from './reconciler.js';
import { createJanitor, type Janitor } from './janitor.js';
import { announceTrip } from './operational-events.js';
import type { DeliveryObserver } from './sender-metrics.js';
import { startHeartbeat, type SenderHeartbeat } from './heartbeat.js';
import { moveJobToDelayed } from './delay-job.js';

/**
 * A delivery whose turn under its endpoint's rate limit (or pause) comes within this many ms waits
 * for it in the process, holding its worker slot; a later turn waits in the delayed set and comes
 * back this much early (half of it), so it is at the claim on time. At 20/s that is a few
 * deliveries per endpoint (one interval apart in line), never a backlog.
 */
const PACE_WAIT_IN_PROCESS_MS = 200;

/**
 * A parked delivery with many others before it in its endpoint's line waits up to this many safety
 * delays before it looks again by itself (one more per 4 deliveries before it): releases call the
 * line's first ones, so only a lost wake-up with nothing else in flight relies on this.
 */
const PARK_MAX_LAPS = 10;

/**
 * A delivery woken by its line but without a job is given one only once it is this old, ms: ingest
 * writes a new delivery (which may join a line at once) a moment before it queues its job.
 */
export const WAKE_REQUEUE_MIN_AGE_MS = 30_000;

/** Dependencies of {@link createSender}, wired by `main.ts` (or a test). */
export interface SenderDeps {
  /** Worker connection (`maxRetriesPerRequest: null`), standalone or cluster; BullMQ duplicates it for blocking calls. */
  redis: RedisClient;
  store: Store;
  /** The deliveries queues, every partition (same key schema): for waking parked deliveries and re-creating lost jobs. */
  queues: DeliveryQueues;
  transport: DeliveryTransport;
  clock: { now(): number };
  random: () => number;
  logger: Logger;
  classifyAddress: (address: string) => string | null;
  lookupAll?: LookupAll;
  /** The sender's metrics (`createSenderMetrics`), told of every attempt and finished delivery; none when absent. */
  metrics?: DeliveryObserver;
  /** OpenTelemetry tracer (`OTEL_*` set: see `startTracing`): one span per attempt; absent = tracing off. */
  tracer?: Tracer;
  /** OAuth 2.0 tokens (`createOauthTokens`); default one over `store.oauthTokens` with `config.allowList`. */
  oauthTokens?: OauthTokens;
  /** Sandboxes for endpoints' transformations; default the sender's own (`config.transformTimeoutMs`, `config.transformThreads`), closed with it. */
  sandbox?: SandboxPool;
  /**
   * Writes the overview's counters and renews live feed expiries; default the sender's own over
   * `redis` (every `config.statsFlushIntervalMs`), written a last time by `close`. One given here is
   * the caller's to close.
   */
  stats?: StatsFlusher;
  config: {
    /** How often finished attempts are written to the overview's counters, ms (default `STATS_FLUSH_INTERVAL_MS`, 1000). */
    statsFlushIntervalMs?: number;
    /** One transformation call's wall-clock cap, ms (`TRANSFORM_TIMEOUT_MS`, default 50). */
    transformTimeoutMs?: number;
    /** Threads running transformations (`TRANSFORM_THREADS`, default 2), started with the first one. */
    transformThreads?: number;
    /** Addresses allowed although not public (`ALLOWED_ADDRESSES`): for the token requests of OAuth 2.0 endpoints. Default none. */
    allowList?: readonly string[];
    /** The global egress proxy (`EGRESS_PROXY_URL`), null or absent = none; endpoints' own `proxy` overrides it. */
    egressProxyUrl?: string | null;
    /** Hosts that bypass {@link egressProxyUrl} (`EGRESS_PROXY_BYPASS`, NO_PROXY style). */
    egressProxyBypass?: readonly string[];
    /**
     * Attempts run at once by this process (`SENDER_CONCURRENCY`), split evenly over the queue
     * partitions (each partition's worker runs `ceil(concurrency / partitions)`), so a process never
     * runs much more than this whatever `QUEUE_PARTITIONS` is.
     */
    concurrency: number;
    /** How often the reconciler looks for deliveries whose job vanished, ms; 0 = never. */
    reconcileIntervalMs: number;
    /** How old an unfinished delivery must be before the reconciler checks it, ms. */
    reconcileGraceMs: number;
    /** How often the janitor removes deliveries past retention, ms; 0 = never. */
    janitorIntervalMs?: number;
    /** A delivery its line calls but whose job is gone gets one only once it is this old, ms (default {@link WAKE_REQUEUE_MIN_AGE_MS}). */
    wakeRequeueMinAgeMs?: number;
    /** A delivery refused a concurrency slot waits between this and twice this long for a wake-up it missed, ms (default 60 000): one is lost only when a sender dies, or Redis goes away, while releasing. */
    parkSafetyDelayMs?: number;
    /** How long a job's lock lasts without renewal, ms (BullMQ `lockDuration`, default 30 000): a killed sender's attempts run again after about this long. */
    lockDurationMs?: number;
    /** How often this worker looks for jobs whose lock expired, ms (BullMQ `stalledInterval`, default 30 000). */
    stalledIntervalMs?: number;
    /** How often this process beats into Redis, ms (`HEARTBEAT_INTERVAL_MS`, default 1000); 0 = no heartbeat, no takeovers (a killed sender's attempts wait for their locks). */
    heartbeatIntervalMs?: number;
    /** A sender whose heartbeat is older than this is taken over by a live one, ms (`TAKEOVER_AFTER_MS`, default 5000). */
    takeoverAfterMs?: number;
    /** An org's pre-attempt check must answer within this, ms (`PRE_ATTEMPT_CHECK_TIMEOUT_MS`, default 3000). */
    checkTimeoutMs?: number;
    userAgent: string;
  };
}

/** A running sender: one BullMQ worker per queue partition, plus reconciler and janitor. */
export interface Sender {
  /** Partition 0's worker (the only one with `QUEUE_PARTITIONS=1`). */
  readonly worker: Worker<DeliveryJobData>;
  /** Every partition's worker, index = partition number. */
  readonly workers: readonly Worker<DeliveryJobData>[];
  /** True while every partition's worker runs (`/readyz`). */
  isRunning(): boolean;
  readonly reconciler: Reconciler;
  readonly janitor: Janitor;
  /** This process's heartbeat (null when `heartbeatIntervalMs` is 0): its sender id, and a beat on demand. */
  readonly heartbeat: SenderHeartbeat | null;
  /**
   * Stops taking work and lets in-flight attempts finish, then closes the worker and writes the
   * attempts counted since the last flush (before the caller closes the Redis connection). With
   * `graceMs`, waits at most that long: attempts still running then are abandoned, their slots
   * given back, and their jobs run again (same attempt number) once their locks expire. Resolves
   * `{finished: false}` in that case.
   */
  close(opts?: { graceMs?: number }): Promise<{ finished: boolean }>;
}

/**
 * Builds and starts the delivery workers, one per queue partition: every sender works every
 * partition. Each job run is one attempt of one delivery
 * (`runAttempt`). The job itself carries no retry rules: a failed attempt whose plan has a next
 * attempt moves the job to `delayed` at exactly that time; a delivery refused a concurrency slot is
 * parked, delayed, until a release wakes it; anything else completes the job. An error that is not
 * Postern's decision (Redis trouble) delays the job briefly and the same attempt runs again; a move
 * to `delayed` that Redis refuses is tried again, and never fails the job (`delay-job.ts`).
 */
export function createSender(deps: SenderDeps): Sender {
  const ids = createIdFactory();
  // Parked deliveries are of the releasing delivery's org, so their jobs are in that org's partition.
  // One whose job is gone (a move that failed for good, Redis trouble) would hold its line until
  // the reconciler's grace ran out: it gets its job back now.
  const wake = async (orgId: string, deliveryIds: readonly string[]) => {
    if (deliveryIds.length === 0) return;
    const { notPromoted } = await deps.queues.wake(orgId, deliveryIds);
    if (notPromoted.length === 0) return;
    const now = deps.clock.now();
    await requeueWithoutJob({ store: deps.store, queues: deps.queues, logger: deps.logger }, orgId, notPromoted, now, { createdBeforeMs: now - (deps.config.wakeRequeueMinAgeMs ?? WAKE_REQUEUE_MIN_AGE_MS), by: 'a release calling its line' });
  };
  // Slots this process holds, by delivery id, so a shutdown that cannot wait can give them back.
  const held = new Map<string, { ids: AttemptIds; concurrency: EndpointRecord['policy']['concurrency'] }>();
  // Started once the workers exist (their ids go into every beat); slots are taken only after that.
  let heartbeat: SenderHeartbeat | null = null;
  const ownTokens = deps.oauthTokens
    ? null
    : createOauthTokens({
        tokens: deps.store.oauthTokens,
        classifyAddress: deps.classifyAddress,
        allowList: deps.config.allowList ?? [],
        lookupAll: deps.lookupAll,
        clock: deps.clock,
        onFetched: ({ result }) => deps.metrics?.tokenFetched?.({ result }),
      });
  const ownSandbox = deps.sandbox ? null : createSandboxPool({ timeoutMs: deps.config.transformTimeoutMs, threads: deps.config.transformThreads });
  const ownStats = deps.stats
    ? null
    : new StatsFlusher({ redis: deps.redis, keys: deps.store.keys, liveFeed: deps.store.liveFeed.settings, intervalMs: deps.config.statsFlushIntervalMs, logger: deps.logger });
  const stats = deps.stats ?? ownStats!;
  const deliverDeps: DeliverDeps = {
    sandbox: deps.sandbox ?? ownSandbox ?? undefined,
    oauthTokens: deps.oauthTokens ?? ownTokens ?? undefined,
    egress: { proxyUrl: deps.config.egressProxyUrl ?? null, bypass: deps.config.egressProxyBypass ?? [] },
    store: deps.store,
    transport: deps.transport,
    clock: deps.clock,
    random: deps.random,
    logger: deps.logger,
    classifyAddress: deps.classifyAddress,
    lookupAll: deps.lookupAll,
    userAgent: deps.config.userAgent,
    checkTimeoutMs: deps.config.checkTimeoutMs,
    signingKeys: createSigningKeyCache(),
    ids,
    wake,
    stats,
    metrics: deps.metrics,
    tracer: deps.tracer,
    announceTrip: (notification) => announceTrip({ store: deps.store, queues: deps.queues, ids, clock: deps.clock }, notification),
    slots: {
      taken: (attemptIds, concurrency) => {
        held.set(attemptIds.deliveryId, { ids: attemptIds, concurrency });
        heartbeat?.slotTaken(attemptIds);
      },
      returned: (deliveryId) => {
        held.delete(deliveryId);
        heartbeat?.slotReturned(deliveryId);
      },
    },
  };
  const parkSafetyDelayMs = deps.config.parkSafetyDelayMs ?? 60_000;

  /**
   * The ids the attempt's keys are built from. A legacy `{v: 1}` job (queued by a Postern before
   * the org-tagged key layout) names no org, so its delivery cannot be found: it is dropped, and
   * a delivery migrated to the new layout is queued again by the reconciler (README, "Migrating").
   */
  const attemptIdsOf = (data: ParsedDeliveryJob): AttemptIds | null => {
    if (data.v === 2) return data;
    deps.logger.warn({ deliveryId: data.deliveryId }, 'legacy delivery job without an org dropped');
    return null;
  };

  const processor = async (job: Job<DeliveryJobData>, token?: string): Promise<string> => {
    const parsed = parseDeliveryJob(job.id, job.data);
    if (!parsed) {
      deps.logger.error({ jobId: job.id }, 'malformed delivery job dropped');
      throw new UnrecoverableError('malformed job payload');
    }
    let attemptIds: AttemptIds | null = null;
    let run: Awaited<ReturnType<typeof runAttempt>>;
    try {
      attemptIds = attemptIdsOf(parsed);
      if (!attemptIds) return 'missing';
      const traceparent = parsed.v === 2 ? parsed.traceparent : undefined;
      run = await runAttempt(deliverDeps, attemptIds, traceparent);
      // Its turn under the rate limit is moments away: waiting here hits the slot on time, where a
      // round through the delayed set would come late and leave the rate below its limit.
      for (let waits = 0; run.kind === 'parked' && run.limit === 'pace' && run.retryAt - deps.clock.now() <= PACE_WAIT_IN_PROCESS_MS && waits < 5; waits++) {
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, run.kind === 'parked' && run.limit === 'pace' ? run.retryAt - deps.clock.now() : 0)));
        run = await runAttempt(deliverDeps, attemptIds, traceparent);
      }
    } catch (err) {
      // Postern's own trouble (Redis): the same attempt runs again shortly, spending nothing of the
      // delivery's. Should the move fail too, the job's lock runs out and BullMQ's stalled check
      // runs it again.
      deps.logger.warn({ deliveryId: parsed.deliveryId, err: (err as Error).message }, 'attempt interrupted by an error; it will run again');
      await moveJobToDelayed(job, deps.clock.now() + Math.round(1000 * (1 + deps.random())), token, deps);
      throw new DelayedError();
    }
    if (run.kind === 'done') return run.status;
    if (run.kind === 'retry') {
      await moveJobToDelayed(job, run.nextAttemptAt, token, deps);
      throw new DelayedError();
    }
    // Over the rate limit, or the endpoint paused: the job waits, delayed, until its time; no attempt
    // spent. A long pause (a Retry-After of up to an hour) is looked at again at least every safety
    // delay, so a pause that ended early (pacing switched off, the policy changed) holds nothing back.
    if (run.limit === 'pace') {
      const now = deps.clock.now();
      await moveJobToDelayed(job, Math.min(Math.max(run.retryAt - PACE_WAIT_IN_PROCESS_MS / 2, now), now + parkSafetyDelayMs), token, deps);
      throw new DelayedError();
    }
    // Waiting for a slot spends no attempt: the job is parked as delayed and woken on release.
    // The safety delay (for a wake-up that got lost) is spread out, so a large backlog parked at
    // once does not come back at once.
    // Far back in an endpoint's line, a delivery is called by a release long before it could need
    // the safety net (releases call the first of the line again and again): it looks again later,
    // so a long line does not keep flowing back through the queue ahead of other endpoints' work.
    heartbeat?.parked({ orgId: attemptIds.orgId, endpointId: attemptIds.endpointId });
    const laps = run.limit === 'endpoint' ? Math.min(PARK_MAX_LAPS, 1 + Math.floor(run.ahead / 4)) : 1;
    if (!(await moveJobToDelayed(job, deps.clock.now() + Math.round(parkSafetyDelayMs * laps * (1 + deps.random())), token, deps))) throw new DelayedError();
    // A release that came between the refusal and the move found no delayed job to promote.
    // Unsure (Redis trouble)? Wake up anyway: one needless look costs less than a lost wake-up.
    const parked = await (run.limit === 'ordering_key' ? deps.store.leases.waitsForItsKey(attemptIds, run.keyLine) : deps.store.leases.isParked(attemptIds)).catch(() => false);
    if (!parked) await job.promote().catch(() => undefined);
    throw new DelayedError();
  };

  const keys = deps.store.keys;
  const perPartition = Math.max(1, Math.ceil(deps.config.concurrency / keys.queuePartitions));
  const workers = Array.from({ length: keys.queuePartitions }, (_, n) => {
    const worker = new Worker<DeliveryJobData>(DELIVERY_QUEUE_NAME, processor, {
      connection: deps.redis,
      prefix: keys.queuePrefix(n),
      concurrency: perPartition,
      maxStalledCount: 10,
      // Finished jobs go at once; set here, not per job, so each job's stored options stay short.
      ...DELIVERY_WORKER_REMOVE,
      lockDuration: deps.config.lockDurationMs ?? 30_000,
      stalledInterval: deps.config.stalledIntervalMs ?? 30_000,
    });
    worker.on('failed', (job, err) => {
      if (err instanceof DelayedError || err instanceof UnrecoverableError) return;
      deps.logger.warn({ jobId: job?.id, err: err.message }, 'delivery job errored; it will run again');
    });
    worker.on('error', (err) => deps.logger.error({ err: err.message, partition: n }, 'worker error'));
    return worker;
  });

  // A sender that dies has its attempts in flight taken over by a live one within seconds (README,
  // "Crashes and restarts"), not when their locks expire.
  const heartbeatIntervalMs = deps.config.heartbeatIntervalMs ?? 1000;
  if (heartbeatIntervalMs > 0) {
    heartbeat = startHeartbeat({
      registry: deps.store.senders,
      store: deps.store,
      workers,
      wake,
      clock: deps.clock,
      logger: deps.logger,
      config: { intervalMs: heartbeatIntervalMs, lapseMs: deps.config.takeoverAfterMs ?? 5000 },
    });
  }

  /** Gives back every slot this process still holds (attempts abandoned at shutdown); returns how many. */
  const releaseHeld = async () => {
    const slots = [...held.values()];
    held.clear();
    await Promise.all(
      slots.map(async ({ ids: slot, concurrency }) => {
        const { woken } = await deps.store.leases.release({ ...slot, ...concurrency, nowMs: deps.clock.now() });
        await wake(slot.orgId, woken);
      }),
    );
    return slots.length;
  };

  const reconciler = createReconciler({
    store: deps.store,
    queues: deps.queues,
    clock: deps.clock,
    logger: deps.logger,
    graceMs: deps.config.reconcileGraceMs,
  });
  const timer =
    deps.config.reconcileIntervalMs > 0
      ? setInterval(() => {
          reconciler.runOnce().catch((err: Error) => deps.logger.warn({ err: err.message }, 'reconciler run failed'));
        }, deps.config.reconcileIntervalMs)
      : null;
  timer?.unref();
  const janitor = createJanitor({ store: deps.store, clock: deps.clock, logger: deps.logger });
  const janitorIntervalMs = deps.config.janitorIntervalMs ?? 0;
  const janitorTimer =
    janitorIntervalMs > 0
      ? setInterval(() => {
          janitor.runOnce().catch((err: Error) => deps.logger.warn({ err: err.message }, 'janitor run failed'));
        }, janitorIntervalMs)
      : null;
  janitorTimer?.unref();

  return {
    worker: workers[0]!,
    workers,
    isRunning: () => workers.every((w) => w.isRunning()),
    reconciler,
    janitor,
    heartbeat,
    async close(opts = {}) {
      ownTokens?.close();
      void ownSandbox?.close();
      if (timer) clearInterval(timer);
      if (janitorTimer) clearInterval(janitorTimer);
      const closed = Promise.all(workers.map((w) => w.close())).then(() => true);
      // Beating goes on until the attempts are over: a sender that finished them is forgotten; one
      // that abandoned some stops beating, and a live sender takes them over once its beat lapses.
      if (opts.graceMs === undefined) {
        const done = await closed;
        await heartbeat?.stop({ forget: true });
        await ownStats?.close();
        return { finished: done };
      }
      let graceTimer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<false>((resolve) => {
        graceTimer = setTimeout(() => resolve(false), opts.graceMs);
      });
      const finished = await Promise.race([closed, graceOver]);
      clearTimeout(graceTimer);
      await heartbeat?.stop({ forget: finished });
      if (!finished) {
        const released = await releaseHeld();
        deps.logger.error({ graceMs: opts.graceMs, released }, 'in-flight attempts did not finish in time; their slots are released and their jobs will run again');
      }
      await ownStats?.close();
      return { finished };
    },
  };
}

import { DelayedError, UnrecoverableError, Worker, type Job, type Queue } from 'bullmq';
import { DELIVERY_QUEUE_NAME, deliveryJobDataSchema, type DeliveryJobData, type Store } from '@postern/store';
import type { Redis } from 'ioredis';
import { createIdFactory } from '@postern/shared';
import type { Logger } from 'pino';
import { deliver, type DeliverDeps } from './deliver.js';
import type { DeliveryTransport } from './http-transport.js';
import type { LookupAll } from './destination-check.js';
import { createReconciler, type Reconciler } from './reconciler.js';
import { createJanitor, type Janitor } from './janitor.js';
import { announceTrip } from './operational-events.js';
import { createConcurrencyGate } from './concurrency-gate.js';
import type { DeliveryObserver } from './sender-metrics.js';

/** A failed attempt whose next attempt is due after `delayMs`; read by the backoff strategy. */
export class RetryScheduledError extends Error {
  override readonly name = 'RetryScheduledError';
  constructor(readonly delayMs: number, readonly code: string) {
    super(`attempt failed (${code}); next attempt in ${delayMs} ms`);
  }
}

/** Dependencies of {@link createSender}, wired by `main.ts` (or a test). */
export interface SenderDeps {
  /** Worker connection (`maxRetriesPerRequest: null`); BullMQ duplicates it for blocking calls. */
  redis: Redis;
  store: Store;
  /** The deliveries queue (same prefix), used by the reconciler to re-create lost jobs. */
  queue: Queue<DeliveryJobData>;
  transport: DeliveryTransport;
  clock: { now(): number };
  random: () => number;
  logger: Logger;
  classifyAddress: (address: string) => string | null;
  lookupAll?: LookupAll;
  /** The sender's metrics (`createSenderMetrics`), told of every attempt and finished delivery; none when absent. */
  metrics?: DeliveryObserver;
  config: {
    /** Attempts run at once by this process (`SENDER_CONCURRENCY`). */
    concurrency: number;
    /** How often the reconciler looks for deliveries whose job vanished, ms; 0 = never. */
    reconcileIntervalMs: number;
    /** How old an unfinished delivery must be before the reconciler checks it, ms. */
    reconcileGraceMs: number;
    /** How often the janitor removes deliveries past retention, ms; 0 = never. */
    janitorIntervalMs?: number;
    /** A delivery refused a concurrency slot waits between this and twice this long for a wake-up it missed, ms (default 60 000): one is lost only when a sender dies, or Redis goes away, while releasing. */
    parkSafetyDelayMs?: number;
    /** How long a job's lock lasts without renewal, ms (BullMQ `lockDuration`, default 30 000): a killed sender's attempts run again after about this long. */
    lockDurationMs?: number;
    /** How often this worker looks for jobs whose lock expired, ms (BullMQ `stalledInterval`, default 30 000). */
    stalledIntervalMs?: number;
    userAgent: string;
  };
}

/** A running sender: BullMQ worker plus reconciler. */
export interface Sender {
  readonly worker: Worker<DeliveryJobData>;
  readonly reconciler: Reconciler;
  readonly janitor: Janitor;
  /**
   * Stops taking work and lets in-flight attempts finish, then closes the worker. With `graceMs`,
   * waits at most that long: attempts still running then are abandoned, their slots given back,
   * and their jobs run again (same attempt number) once their locks expire. Resolves
   * `{finished: false}` in that case.
   */
  close(opts?: { graceMs?: number }): Promise<{ finished: boolean }>;
}

/**
 * Builds and starts the delivery worker. Each job is one attempt of one delivery; a failed attempt
 * becomes a BullMQ delayed retry whose wait the policy decides, the last one an
 * `UnrecoverableError`. Errors that are not Postern's decisions (Redis trouble) are retried by
 * BullMQ after a short backoff and the same attempt runs again.
 */
export function createSender(deps: SenderDeps): Sender {
  const ids = createIdFactory();
  const deliverDeps: DeliverDeps = {
    store: deps.store,
    transport: deps.transport,
    clock: deps.clock,
    random: deps.random,
    logger: deps.logger,
    classifyAddress: deps.classifyAddress,
    lookupAll: deps.lookupAll,
    userAgent: deps.config.userAgent,
    ids,
    metrics: deps.metrics,
    announceTrip: (notification) => announceTrip({ store: deps.store, queue: deps.queue, ids, clock: deps.clock }, notification),
  };

  const gate = createConcurrencyGate({ store: deps.store, queue: deps.queue, clock: deps.clock, logger: deps.logger });
  const parkSafetyDelayMs = deps.config.parkSafetyDelayMs ?? 60_000;

  const processor = async (job: Job<DeliveryJobData>, token?: string): Promise<string> => {
    const parsed = deliveryJobDataSchema.safeParse(job.data);
    if (!parsed.success) {
      deps.logger.error({ jobId: job.id }, 'malformed delivery job dropped');
      throw new UnrecoverableError('malformed job payload');
    }
    const entered = await gate.enter(parsed.data.deliveryId);
    if (entered.kind === 'refused') {
      // Waiting for a slot spends no attempt: the job is parked as delayed and woken on release.
      // The safety delay (for a wake-up that got lost) is spread out, so a large
      // backlog parked at once does not come back at once.
      await job.moveToDelayed(deps.clock.now() + Math.round(parkSafetyDelayMs * (1 + deps.random())), token);
      // A release that came between the refusal and the move found no delayed job to promote.
      // Unsure (Redis trouble)? Wake up anyway: one needless look costs less than a lost wake-up.
      if (await entered.wokenMeanwhile().catch(() => true)) await job.promote().catch(() => undefined);
      throw new DelayedError();
    }
    try {
      const preloaded = entered.kind === 'slot' ? { delivery: entered.delivery, endpoint: entered.endpoint } : undefined;
      const outcome = await deliver(deliverDeps, parsed.data.deliveryId, preloaded);
      if (outcome.kind === 'retry') throw new RetryScheduledError(outcome.delayMs, outcome.error);
      if (outcome.kind === 'failed') throw new UnrecoverableError(outcome.error);
      return outcome.status;
    } finally {
      if (entered.kind === 'slot') await entered.slot.release();
    }
  };

  const worker = new Worker<DeliveryJobData>(DELIVERY_QUEUE_NAME, processor, {
    connection: deps.redis,
    prefix: deps.store.keys.queuePrefix,
    concurrency: deps.config.concurrency,
    maxStalledCount: 10,
    lockDuration: deps.config.lockDurationMs ?? 30_000,
    stalledInterval: deps.config.stalledIntervalMs ?? 30_000,
    settings: {
      backoffStrategy: (attemptsMade: number, _type?: string, err?: Error) => {
        if (err instanceof RetryScheduledError) return err.delayMs;
        // Postern's own trouble (e.g. Redis): retry the same attempt soon, growing to 1 min.
        return Math.min(500 * 2 ** Math.max(0, attemptsMade - 1), 60_000);
      },
    },
  });
  worker.on('failed', (job, err) => {
    if (err instanceof RetryScheduledError || err instanceof UnrecoverableError || err instanceof DelayedError) return;
    deps.logger.warn({ jobId: job?.id, err: err.message }, 'delivery job errored; it will run again');
  });
  worker.on('error', (err) => deps.logger.error({ err: err.message }, 'worker error'));

  const reconciler = createReconciler({
    store: deps.store,
    queue: deps.queue,
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
    worker,
    reconciler,
    janitor,
    async close(opts = {}) {
      if (timer) clearInterval(timer);
      if (janitorTimer) clearInterval(janitorTimer);
      const closed = worker.close().then(() => true);
      if (opts.graceMs === undefined) return { finished: await closed };
      let graceTimer: NodeJS.Timeout | undefined;
      const graceOver = new Promise<false>((resolve) => {
        graceTimer = setTimeout(() => resolve(false), opts.graceMs);
      });
      const finished = await Promise.race([closed, graceOver]);
      clearTimeout(graceTimer);
      if (!finished) {
        const released = await gate.releaseHeld();
        deps.logger.error({ graceMs: opts.graceMs, released }, 'in-flight attempts did not finish in time; their slots are released and their jobs will run again');
      }
      return { finished };
    },
  };
}

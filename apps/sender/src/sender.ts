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
import { createConcurrencyGate } from './concurrency-gate.js';

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
  config: {
    /** Attempts run at once by this process (`SENDER_CONCURRENCY`). */
    concurrency: number;
    /** How often the reconciler looks for deliveries whose job vanished, ms; 0 = never. */
    reconcileIntervalMs: number;
    /** How old an unfinished delivery must be before the reconciler checks it, ms. */
    reconcileGraceMs: number;
    /** How often the janitor removes deliveries past retention, ms; 0 = never. */
    janitorIntervalMs?: number;
    /** A delivery refused a concurrency slot waits at most this long for its wake-up, ms. */
    parkSafetyDelayMs?: number;
    userAgent: string;
  };
}

/** A running sender: BullMQ worker plus reconciler. */
export interface Sender {
  readonly worker: Worker<DeliveryJobData>;
  readonly reconciler: Reconciler;
  readonly janitor: Janitor;
  /** Stops taking work, lets in-flight attempts finish, closes the worker. */
  close(): Promise<void>;
}

/**
 * Builds and starts the delivery worker. Each job is one attempt of one delivery; a failed attempt
 * becomes a BullMQ delayed retry whose wait the policy decides, the last one an
 * `UnrecoverableError`. Errors that are not Postern's decisions (Redis trouble) are retried by
 * BullMQ after a short backoff and the same attempt runs again.
 */
export function createSender(deps: SenderDeps): Sender {
  const deliverDeps: DeliverDeps = {
    store: deps.store,
    transport: deps.transport,
    clock: deps.clock,
    random: deps.random,
    logger: deps.logger,
    classifyAddress: deps.classifyAddress,
    lookupAll: deps.lookupAll,
    userAgent: deps.config.userAgent,
    ids: createIdFactory(),
  };

  const gate = createConcurrencyGate({ store: deps.store, queue: deps.queue, clock: deps.clock, logger: deps.logger });
  const parkSafetyDelayMs = deps.config.parkSafetyDelayMs ?? 10_000;

  const processor = async (job: Job<DeliveryJobData>, token?: string): Promise<string> => {
    const parsed = deliveryJobDataSchema.safeParse(job.data);
    if (!parsed.success) {
      deps.logger.error({ jobId: job.id }, 'malformed delivery job dropped');
      throw new UnrecoverableError('malformed job payload');
    }
    const entered = await gate.enter(parsed.data.deliveryId);
    if (entered.kind === 'refused') {
      // Waiting for a slot spends no attempt: the job is parked as delayed and woken on release.
      await job.moveToDelayed(deps.clock.now() + parkSafetyDelayMs, token);
      // A slot freed between the refusal and the move would have found nothing to wake.
      if (await entered.roomNow()) await job.promote().catch(() => undefined);
      throw new DelayedError();
    }
    try {
      const outcome = await deliver(deliverDeps, parsed.data.deliveryId);
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
    async close() {
      if (timer) clearInterval(timer);
      if (janitorTimer) clearInterval(janitorTimer);
      await worker.close();
    },
  };
}

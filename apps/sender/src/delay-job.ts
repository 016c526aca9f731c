import type { Job } from 'bullmq';
import type { Logger } from 'pino';

/** How long a move of a job to `delayed` is retried through Redis trouble, ms: a restart, a failover, a killed connection. */
export const DELAY_JOB_RETRY_FOR_MS = 10_000;
/** The first pause between tries, ms; each next one doubles, up to a second. */
const FIRST_PAUSE_MS = 50;

/** BullMQ's answers when the job is no longer this worker's to move: taken over, finished, or gone. */
const NOT_OURS = /^(Missing lock for job|Lock mismatch for job|Missing key for job|Job \S+ is not in the active state)/;

/**
 * Moves a delivery's job to `delayed` until `atMs` (BullMQ `moveToDelayed` with the worker's lock
 * `token`); resolves `true` once moved. A move refused with a transient error (Redis restarting,
 * failing over, a killed connection) is tried again, for up to {@link DELAY_JOB_RETRY_FOR_MS}.
 * Resolves `false`, leaving the job as it is, when the job is no longer this worker's (its lock
 * was taken over) or the tries ran out: the caller then ends the run with BullMQ's `DelayedError`,
 * the job's lock lapses and BullMQ's stalled check runs it again.
 *
 * Never rejects: a processor that threw the move's error would have BullMQ fail the job, and a
 * failed delivery job is removed at once (`DELIVERY_WORKER_REMOVE`), leaving its delivery with no
 * job until the reconciler finds it minutes later (and, parked, holding its endpoint's line).
 */
export async function moveJobToDelayed(
  job: Pick<Job, 'id' | 'moveToDelayed'>,
  atMs: number,
  token: string | undefined,
  deps: { clock: { now(): number }; logger: Logger; sleep?: (ms: number) => Promise<void> },
): Promise<boolean> {
  const sleep = deps.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const giveUpAt = deps.clock.now() + DELAY_JOB_RETRY_FOR_MS;
  for (let pauseMs = FIRST_PAUSE_MS; ; pauseMs = Math.min(1000, pauseMs * 2)) {
    try {
      await job.moveToDelayed(atMs, token);
      return true;
    } catch (err) {
      const message = (err as Error).message;
      if (NOT_OURS.test(message) || deps.clock.now() + pauseMs > giveUpAt) {
        deps.logger.warn({ jobId: job.id, err: message }, 'delivery job not moved to delayed; it runs again when its lock lapses');
        return false;
      }
      await sleep(pauseMs);
    }
  }
}

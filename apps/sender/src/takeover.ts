import type { Worker } from 'bullmq';
import type { SenderRegistry, Store } from '@postern/store';
import type { Logger } from 'pino';

/** How long one sender's right to take over a dead one lasts, ms: should it die midway, another tries again after this. */
export const TAKEOVER_GUARD_MS = 60_000;

/** Dependencies of {@link takeOverSender}. */
export interface TakeoverDeps {
  registry: SenderRegistry;
  store: Store;
  /** This sender's workers, index = queue partition: each runs its partition's stalled check. */
  workers: readonly Worker[];
  /** Wakes parked deliveries (promotes their delayed jobs), as after a release. */
  wake: (orgId: string, deliveryIds: readonly string[]) => Promise<void>;
  clock: { now(): number };
  logger: Logger;
}

/** What a takeover did: jobs made to run again, parked deliveries woken. */
export interface TakeoverResult {
  jobs: number;
  woken: number;
}

/**
 * Takes over the work of a sender whose heartbeat lapsed (README, "Crashes and restarts"), once:
 * the first sender to claim it does it, the others skip it (null).
 *
 * 1. Jobs: in each queue partition, the active jobs locked by the dead sender's worker lose their
 *    lock and are marked stalled, and this sender's worker of that partition runs BullMQ's stalled
 *    check now, which moves them to wait: they run again at once, each the same attempt number
 *    (claim-attempt.lua takes an `in_flight` delivery's attempt up again, keeping its own slot).
 * 2. Lines: the endpoints it held slots of lately are called again, as a release calls them, and
 *    the parked deliveries that have room are woken. A sender killed after giving a slot back but
 *    before waking whom it named leaves them waiting for the park safety delay otherwise.
 *
 * Then the dead sender's record is deleted. Rejects on Redis trouble (the guard then expires and
 * the takeover is tried again).
 */
export async function takeOverSender(deps: TakeoverDeps, deadSenderId: string): Promise<TakeoverResult | null> {
  if (!(await deps.registry.claimTakeover(deadSenderId, TAKEOVER_GUARD_MS))) return null;
  const record = await deps.registry.read(deadSenderId);
  const result: TakeoverResult = { jobs: 0, woken: 0 };
  if (record) {
    for (const [n, workerId] of record.workerIds.entries()) {
      const worker = deps.workers[n];
      if (!workerId || !worker) continue;
      const marked = await deps.registry.reclaimJobs(n, workerId);
      if (marked.length === 0) continue;
      result.jobs += marked.length;
      worker.startStalledCheckTimer().catch((err: Error) => deps.logger.warn({ err: err.message, partition: n }, 'stalled check not started'));
    }
    for (const ref of record.endpoints) {
      const endpoint = await deps.store.endpoints.get(ref.orgId, ref.endpointId);
      if (!endpoint) continue;
      const woken = await deps.store.leases.callLine({ ...ref, ...endpoint.policy.concurrency, nowMs: deps.clock.now() });
      result.woken += woken.length;
      await deps.wake(ref.orgId, woken);
    }
  }
  await deps.registry.forget(deadSenderId);
  return result;
}

import type { DeliveryJobData, Store } from '@postern/store';
import type { Queue } from 'bullmq';
import type { Logger } from 'pino';

/** A held slot; `release` gives it back and wakes parked deliveries. */
export interface Slot {
  release(): Promise<void>;
}

/** Result of {@link ConcurrencyGate.enter}: a slot, or `refused` (the delivery was parked). */
export type GateResult =
  | { kind: 'slot'; slot: Slot }
  /** Parked. Once its job is delayed, call `roomNow`: true means a slot freed meanwhile (its wake-up may have been missed). */
  | { kind: 'refused'; limit: 'endpoint' | 'org'; roomNow(): Promise<boolean> }
  | { kind: 'ungated' };

/** Per-endpoint and per-org concurrency limits around each attempt, across all senders. */
export interface ConcurrencyGate {
  /**
   * Takes a slot for the delivery's next attempt under its endpoint policy's `concurrency`
   * (seed 001: 4 per endpoint, 20 per org). `ungated` when there is nothing to send (delivery or
   * endpoint gone, delivery finished): the attempt logic settles those itself.
   */
  enter(deliveryId: string): Promise<GateResult>;
  /**
   * Gives back every slot this process still holds (attempts abandoned at shutdown): their
   * deliveries' jobs run again once their locks expire, and take a slot then. Returns how many.
   */
  releaseHeld(): Promise<number>;
}

/**
 * Builds the gate. A refused delivery is parked in Redis; each release wakes the oldest parked
 * delivery of the endpoint and of the org by promoting its delayed job, so waiting never polls.
 * The caller delays a refused job by a safety delay that covers a lost wake-up.
 */
export function createConcurrencyGate(deps: { store: Store; queue: Queue<DeliveryJobData>; clock: { now(): number }; logger: Logger }): ConcurrencyGate {
  // Wakes the oldest parked delivery of one scope whose job is still waiting; stale ids are skipped.
  const wakeOne = async (scope: { endpointId: string } | { orgId: string }) => {
    for (let tries = 0; tries < 20; tries++) {
      const id = await deps.store.leases.popParked(scope);
      if (id === null) return;
      try {
        const job = await deps.queue.getJob(id);
        if (job && (await job.isDelayed())) {
          await job.promote();
          return;
        }
      } catch (err) {
        // The job moved on by itself between the check and the promote: try the next one.
        deps.logger.debug({ deliveryId: id, err: (err as Error).message }, 'parked delivery not woken');
      }
    }
  };
  type LeaseKey = { deliveryId: string; endpointId: string; orgId: string };
  const release = async (key: LeaseKey) => {
    held.delete(key.deliveryId);
    if (!(await deps.store.leases.release(key))) return;
    await wakeOne({ endpointId: key.endpointId });
    await wakeOne({ orgId: key.orgId });
  };
  // Slots this process holds, by delivery id, so a shutdown that cannot wait can give them back.
  const held = new Map<string, LeaseKey>();
  return {
    async enter(deliveryId) {
      const delivery = await deps.store.deliveries.get(deliveryId);
      if (!delivery) return { kind: 'ungated' };
      // A sender killed between finishing an attempt and giving back its slot leaves the slot
      // held until its lease expires; the job's re-run finds the delivery finished and frees it.
      const ownLease = { deliveryId, endpointId: delivery.endpointId, orgId: delivery.orgId };
      if (delivery.status === 'succeeded' || delivery.status === 'failed' || delivery.status === 'cancelled') {
        await release(ownLease);
        return { kind: 'ungated' };
      }
      const endpoint = await deps.store.endpoints.get(delivery.endpointId);
      if (!endpoint || endpoint.status !== 'active') {
        await release(ownLease);
        return { kind: 'ungated' };
      }
      const { perEndpoint, perOrg } = endpoint.policy.concurrency;
      const key = { deliveryId, endpointId: endpoint.id, orgId: endpoint.orgId };
      const result = await deps.store.leases.acquire({
        ...key,
        perEndpoint,
        perOrg,
        nowMs: deps.clock.now(),
        // A crashed holder's slot comes back once its longest possible attempt is surely over.
        leaseMs: endpoint.policy.timeout.ms + 30_000,
        park: true,
      });
      const roomNow = () => deps.store.leases.hasRoom({ ...key, perEndpoint, perOrg, nowMs: deps.clock.now() });
      if (result === 'endpoint_full') return { kind: 'refused', limit: 'endpoint', roomNow };
      if (result === 'org_full') return { kind: 'refused', limit: 'org', roomNow };
      held.set(deliveryId, key);
      return { kind: 'slot', slot: { release: () => release(key) } };
    },
    async releaseHeld() {
      const keys = [...held.values()];
      await Promise.all(keys.map(release));
      return keys.length;
    },
  };
}

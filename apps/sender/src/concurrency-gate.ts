import type { DeliveryJobData, DeliveryRecord, EndpointRecord, LeaseKey, Store } from '@postern/store';
import { Job, type Queue } from 'bullmq';
import type { Logger } from 'pino';

/** A held slot; `release` gives it back and wakes the parked deliveries that may use it. */
export interface Slot {
  release(): Promise<void>;
}

/** Result of {@link ConcurrencyGate.enter}: a slot, or `refused` (the delivery was parked). */
export type GateResult =
  /** A slot, with the delivery and endpoint as read to take it (the attempt need not read them again). */
  | { kind: 'slot'; slot: Slot; delivery: DeliveryRecord; endpoint: EndpointRecord }
  /**
   * Parked. Once its job is delayed, call `wokenMeanwhile`: true means a release took it off its
   * parked set while it was being delayed (finding no delayed job to promote), so it must wake itself.
   */
  | { kind: 'refused'; limit: 'endpoint' | 'org' | 'event_claim'; wokenMeanwhile(): Promise<boolean> }
  | { kind: 'ungated' };

/** Per-endpoint and per-org concurrency limits around each attempt, across all senders. */
export interface ConcurrencyGate {
  /**
   * Takes a slot for the delivery's next attempt under its endpoint policy's `concurrency`
   * (seed 001: 4 per endpoint, 20 per org), and the claim on its event at that endpoint (seed 002:
   * a redelivery waits while a retry of the same event is in flight, and the other way round).
   * `ungated` when there is nothing to send (delivery or endpoint gone, delivery finished): the
   * attempt logic settles those itself.
   */
  enter(deliveryId: string): Promise<GateResult>;
  /**
   * Gives back every slot this process still holds (attempts abandoned at shutdown): their
   * deliveries' jobs run again once their locks expire, and take a slot then. Returns how many.
   */
  releaseHeld(): Promise<number>;
}

type HeldSlot = LeaseKey & { perEndpoint: number; perOrg: number };

/**
 * Builds the gate. A refused delivery is parked in Redis (oldest first); a release takes the
 * deliveries that may use the freed room off their parked sets and promotes their delayed jobs, so
 * waiting never polls. The caller delays a refused job by a safety delay that covers a wake-up
 * lost with a crashed sender.
 */
export function createConcurrencyGate(deps: { store: Store; queue: Queue<DeliveryJobData>; clock: { now(): number }; logger: Logger }): ConcurrencyGate {
  // Promote needs only the job id: no read of the job first. A job that is not delayed (moved on
  // by itself, or not yet delayed: it then wakes itself) is left alone.
  const wake = (deliveryId: string) =>
    new Job(deps.queue, 'deliver', { v: 1, deliveryId }, {}, deliveryId).promote().catch((err: Error) => {
      deps.logger.debug({ deliveryId, err: err.message }, 'parked delivery not woken');
    });
  const release = async (slot: HeldSlot) => {
    held.delete(slot.deliveryId);
    const { woken } = await deps.store.leases.release({ ...slot, nowMs: deps.clock.now() });
    await Promise.all(woken.map(wake));
  };
  // Slots this process holds, by delivery id, so a shutdown that cannot wait can give them back.
  const held = new Map<string, HeldSlot>();
  return {
    async enter(deliveryId) {
      const delivery = await deps.store.deliveries.get(deliveryId);
      if (!delivery) return { kind: 'ungated' };
      const endpoint = await deps.store.endpoints.get(delivery.endpointId);
      const key: LeaseKey = { deliveryId, eventId: delivery.eventId, endpointId: delivery.endpointId, orgId: delivery.orgId };
      const { perEndpoint, perOrg } = endpoint?.policy.concurrency ?? { perEndpoint: 0, perOrg: 0 };
      const finished = delivery.status === 'succeeded' || delivery.status === 'failed' || delivery.status === 'cancelled';
      if (finished || !endpoint || endpoint.status !== 'active') {
        // A sender killed between finishing an attempt and giving back its slot leaves the slot
        // held until its lease expires; the job's re-run finds the delivery settled and frees it.
        await release({ ...key, perEndpoint, perOrg });
        return { kind: 'ungated' };
      }
      const result = await deps.store.leases.acquire({
        ...key,
        perEndpoint,
        perOrg,
        nowMs: deps.clock.now(),
        // A crashed holder's slot comes back once its longest possible attempt is surely over.
        leaseMs: endpoint.policy.timeout.ms + 30_000,
        parkOrder: delivery.createdAt,
        park: true,
      });
      if (result !== 'acquired') {
        const limit = result === 'endpoint_full' ? 'endpoint' : result === 'org_full' ? 'org' : 'event_claim';
        return { kind: 'refused', limit, wokenMeanwhile: async () => !(await deps.store.leases.isParked(key)) };
      }
      const slot = { ...key, perEndpoint, perOrg };
      held.set(deliveryId, slot);
      return { kind: 'slot', slot: { release: () => release(slot) }, delivery, endpoint };
    },
    async releaseHeld() {
      const slots = [...held.values()];
      await Promise.all(slots.map(release));
      return slots.length;
    },
  };
}

/**
 * The soak's redeliverer: during production, redeliveries of the events sent to the endpoints
 * whose plan says `redelivered` — mostly of events accepted in the last few seconds (their
 * deliveries are then often waiting for a retry, so a redelivery and its original are due side by
 * side), the rest of any earlier event, some of them of an earlier redelivery. Each request carries
 * an `Idempotency-Key` and is sent again while it gets no answer (a fault), so every redelivery
 * Postern made is recorded with when it was asked for.
 */
import type { SoakApi } from './api.js';
import { pick, type Random } from './prng.js';
import type { AcceptedEvent, RedeliveryRecord } from './records.js';
import type { EndpointPlan } from './topology.js';

/** Events accepted this recently are preferred: their deliveries are likely still pending. */
export const RECENT_EVENT_MS = 3000;
const TICK_MS = 200;
/** A request with no answer (or a 503) is sent again this often, for this long at most (faults last seconds). */
const RETRY_EVERY_MS = 500;
const GIVE_UP_AFTER_MS = 20_000;

/** A running redeliverer. */
export interface SoakRedeliverer {
  redeliveries: RedeliveryRecord[];
  /** Answers by status (0 = none even after the retries), for the summary. */
  answers: Record<string, number>;
  /**
   * Deliveries a redelivery was asked of that never got an answer: when it was first asked, by
   * the delivery it was made from. A redelivery of one the log shows was made then or later.
   */
  unanswered: Map<string, number>;
  /** Stops asking; resolves once every request in flight is answered or given up (20 s after it was first sent). */
  stop(): Promise<void>;
}

/**
 * Starts redelivering about `perSecond` deliveries a second of `accepted` (the producer's list,
 * read as it grows) at the endpoints of `plans` marked `redelivered`, with `apiKeyOf(orgKey)`.
 */
export function startRedeliverer(api: SoakApi, plans: readonly EndpointPlan[], accepted: readonly AcceptedEvent[], apiKeyOf: (orgKey: string) => string, perSecond: number, random: Random): SoakRedeliverer {
  const orgOf = new Map(plans.filter((p) => p.redelivered).map((p) => [p.spec.key, p.spec.orgKey]));
  const redeliveries: RedeliveryRecord[] = [];
  const answers: Record<string, number> = {};
  const unanswered = new Map<string, number>();
  // The redeliveries made of each event, so a later one can be made of a redelivery.
  const ofEvent = new Map<string, string[]>();
  const inFlight = new Set<Promise<void>>();
  let n = 0;

  const redeliver = async (ev: AcceptedEvent, fromId: string) => {
    const key = `soak-redeliver-${n++}`;
    const requestedAtMs = Date.now();
    while (Date.now() - requestedAtMs < GIVE_UP_AFTER_MS) {
      const r = await api('POST', `/v1/deliveries/${fromId}/redeliver`, apiKeyOf(orgOf.get(ev.endpointKey)!), undefined, { 'idempotency-key': key });
      if (r.status !== 0 && r.status !== 503) {
        answers[r.status] = (answers[r.status] ?? 0) + 1;
        if (r.status === 202) {
          const id = r.body.delivery.id as string;
          redeliveries.push({ deliveryId: id, redeliveredFromId: fromId, eventId: ev.eventId, endpointKey: ev.endpointKey, requestedAtMs });
          ofEvent.set(ev.eventId, [...(ofEvent.get(ev.eventId) ?? []), id]);
        }
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_EVERY_MS));
    }
    answers[0] = (answers[0] ?? 0) + 1;
    if (!unanswered.has(fromId)) unanswered.set(fromId, requestedAtMs);
  };

  let credit = 0;
  const timer = setInterval(() => {
    credit += (perSecond * TICK_MS) / 1000;
    const now = Date.now();
    while (credit >= 1) {
      credit -= 1;
      const candidates = accepted.filter((ev) => orgOf.has(ev.endpointKey) && ev.deliveryIds.length > 0);
      if (candidates.length === 0) break;
      const recent = candidates.filter((ev) => now - ev.acceptedAtMs <= RECENT_EVENT_MS);
      const ev = pick(random, recent.length > 0 && random() < 0.7 ? recent : candidates);
      const earlier = ofEvent.get(ev.eventId) ?? [];
      const fromId = earlier.length > 0 && random() < 0.3 ? pick(random, earlier) : ev.deliveryIds[0]!;
      const p = redeliver(ev, fromId);
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    }
  }, TICK_MS);

  return {
    redeliveries,
    answers,
    unanswered,
    async stop() {
      clearInterval(timer);
      await Promise.all([...inFlight]);
    },
  };
}

/**
 * The soak's producer: a bounded, seeded stream of events (`ratePerSecond` spread over the
 * endpoints by weight, plus each endpoint's periodic bursts), recording every 202.
 */
import type { SoakApi } from './api.js';
import { pick, type Random } from './prng.js';
import type { AcceptedEvent } from './records.js';
import type { EndpointPlan } from './topology.js';

/** Requests the producer keeps open at most: during an outage it holds back instead of piling up. */
export const PRODUCER_MAX_IN_FLIGHT = 64;
const TICK_MS = 100;

/** A running producer. */
export interface SoakProducer {
  accepted: AcceptedEvent[];
  /** Answers by status (0 = none), for the summary. */
  answers: Record<string, number>;
  /** Stops posting; resolves once every request in flight is answered. */
  stop(): Promise<void>;
}

/** Starts posting to `plans` (their `soak.<key>` event type) with `apiKeyOf(orgKey)`. */
export function startProducer(api: SoakApi, plans: readonly EndpointPlan[], apiKeyOf: (orgKey: string) => string, ratePerSecond: number, random: Random): SoakProducer {
  const accepted: AcceptedEvent[] = [];
  const answers: Record<string, number> = {};
  const inFlight = new Set<Promise<void>>();
  let n = 0;
  let stopped = false;
  const steady = plans.filter((p) => p.weight > 0);
  const weights = steady.map((p) => p.weight);

  const post = (plan: EndpointPlan, burst = false) => {
    if (inFlight.size >= PRODUCER_MAX_IN_FLIGHT) return;
    const i = n++;
    const body: Record<string, unknown> = { type: `soak.${plan.spec.key}`, data: { n: i, endpoint: plan.spec.key, ...(burst ? { burst: true } : {}) } };
    if (plan.orderingKeys.length > 0) body.orderingKey = pick(random, plan.orderingKeys);
    const postedAtMs = Date.now();
    const p = api('POST', '/v1/events', apiKeyOf(plan.spec.orgKey), body).then((r) => {
      answers[r.status] = (answers[r.status] ?? 0) + 1;
      if (r.status === 202) {
        accepted.push({ eventId: r.body.id, endpointKey: plan.spec.key, deliveryIds: (r.body.deliveries as { id: string }[]).map((d) => d.id), acceptedAtMs: Date.now(), postedAtMs });
      }
    });
    inFlight.add(p);
    void p.finally(() => inFlight.delete(p));
  };

  const startedAt = Date.now();
  const burstPhase = new Map(plans.map((p) => [p, Math.floor(random() * (p.burst?.everyMs ?? 1))]));
  const nextBurst = new Map(plans.filter((p) => p.burst).map((p) => [p, startedAt + (p.burst!.everyMs / 2) + burstPhase.get(p)!]));
  let credit = 0;
  const timer = setInterval(() => {
    if (stopped) return;
    credit += (ratePerSecond * TICK_MS) / 1000;
    while (credit >= 1) {
      credit -= 1;
      post(pick(random, steady, weights));
    }
    const now = Date.now();
    for (const [plan, at] of nextBurst) {
      if (now < at) continue;
      for (let k = 0; k < plan.burst!.count; k++) post(plan, true);
      nextBurst.set(plan, at + plan.burst!.everyMs);
    }
  }, TICK_MS);

  return {
    accepted,
    answers,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await Promise.all([...inFlight]);
    },
  };
}

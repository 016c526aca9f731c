import { startReceiver, type ReceivedRequest, type TestReceiver } from './receiver.js';

/** A receiver that counts requests in flight per path (one path = one endpoint) and in all. */
export interface CountingReceiver {
  receiver: TestReceiver;
  /** Most requests in flight at once, per path. */
  peak: Map<string, number>;
  /** Most requests in flight at once over every path (one org, when every endpoint is one org's). */
  orgPeak(): number;
  /** Requests received and not yet answered. */
  inFlight(): ReceivedRequest[];
  /** Requests answered so far. */
  answered(): number;
  /** How many requests each delivery id (`webhook-delivery-id`) got. */
  perDelivery(): Map<string, number>;
  /** Changes how long each request is held before its 200. */
  setHoldMs(hold: number | (() => number)): void;
}

/** Starts a receiver that holds each request `holdMs` (a number, or a function drawn per request), then answers 200. */
export async function countingReceiver(holdMs: number | (() => number)): Promise<CountingReceiver> {
  const inFlight = new Map<string, number>();
  const peak = new Map<string, number>();
  const open = new Set<ReceivedRequest>();
  let orgInFlight = 0;
  let orgPeak = 0;
  let answered = 0;
  let hold = holdMs;
  const receiver = await startReceiver(async (req) => {
    open.add(req);
    const n = (inFlight.get(req.path) ?? 0) + 1;
    inFlight.set(req.path, n);
    peak.set(req.path, Math.max(peak.get(req.path) ?? 0, n));
    orgInFlight += 1;
    orgPeak = Math.max(orgPeak, orgInFlight);
    await new Promise((r) => setTimeout(r, typeof hold === 'number' ? hold : hold()));
    inFlight.set(req.path, (inFlight.get(req.path) ?? 1) - 1);
    orgInFlight -= 1;
    open.delete(req);
    answered += 1;
    return 200;
  });
  return {
    receiver,
    peak,
    orgPeak: () => orgPeak,
    inFlight: () => [...open],
    answered: () => answered,
    perDelivery() {
      const counts = new Map<string, number>();
      for (const r of receiver.requests) {
        const id = String(r.headers['webhook-delivery-id']);
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
      return counts;
    },
    setHoldMs(h) {
      hold = h;
    },
  };
}

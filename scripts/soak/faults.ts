/**
 * The soak's fault schedule: seeded, every kind the target supports at least once, then more at
 * random while the production phase lasts, one at a time.
 */
import { intBetween, type Random } from './prng.js';
import type { FaultKind } from './records.js';

/** One planned fault, `atMs` after production started. */
export interface PlannedFault {
  atMs: number;
  kind: FaultKind;
  /** How long the stopped process stays down, ms. */
  downMs: number;
  /** Which sender (index) a sender fault hits. */
  senderIndex: number;
}

/** Sender faults every target has. */
export const SENDER_FAULTS: readonly FaultKind[] = ['sender-sigkill', 'sender-sigterm'];

/**
 * Plans faults over a production phase of `productionMs`: the first after 10 % of it (at least
 * 5 s), the last at least 10 s before its end, `minGapMs` apart (default: the phase split evenly
 * among the kinds, at most 30 s). Every kind in `kinds` comes once (in a seeded order) before any repeats.
 */
export function planFaults(random: Random, kinds: readonly FaultKind[], productionMs: number, senders: number, minGapMs?: number): PlannedFault[] {
  const first = Math.max(5000, productionMs * 0.1);
  const last = productionMs - 10_000;
  const gap = minGapMs ?? Math.min(30_000, Math.max(4000, (last - first) / Math.max(1, kinds.length - 1)));
  const order = [...kinds];
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const out: PlannedFault[] = [];
  for (let at = first, i = 0; at <= last || i < kinds.length; at += gap * (i < kinds.length ? 1 : 0.7 + random() * 0.6), i++) {
    const kind = i < order.length ? order[i]! : order[Math.floor(random() * order.length)]!;
    out.push({ atMs: Math.round(Math.min(at, Math.max(first, last))), kind, downMs: intBetween(random, 1000, 3000), senderIndex: intBetween(random, 0, senders - 1) });
  }
  return out;
}

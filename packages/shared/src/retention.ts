import type { Policy } from './policy.js';

/** A policy's `retention`: finished deliveries kept `days` after they finished, or the newest `lastPerEndpoint` of an endpoint. */
export type Retention = Policy['retention'];

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * When a delivery that finished at `nowMs` (epoch ms) expires under `retention`: epoch ms,
 * `nowMs + days`, the native expiry (`PEXPIREAT`) the finish script gives it and its attempts; or
 * `''` under `{lastPerEndpoint}`, which keeps it until a count trim removes it. The clock is the
 * caller's, so a sender with an injected clock sets expiries from that clock (a clock a day behind
 * makes a `{days: 1}` delivery expire now). docs/architecture.md, "Retention".
 */
export function finishedExpiresAt(retention: Retention, nowMs: number): number | '' {
  return 'days' in retention ? nowMs + retention.days * DAY_MS : '';
}

import type { KeySchema } from './keys.js';

/** Width of the overview's finest bucket, ms: counters are kept per minute. */
export const STATS_MINUTE_MS = 60_000;

/** Span of one counters hash (`keys.statsHour`), ms: one clock hour. */
export const STATS_HOUR_MS = 3_600_000;

/** A finished attempt as the overview counts it. */
export interface CountedAttempt {
  orgId: string;
  endpointId: string;
  /** The delivery's status after the attempt (`FinishInput.nextStatus`). */
  nextStatus: 'succeeded' | 'pending' | 'failed' | 'cancelled';
  /** The attempt's error code; null = it succeeded. */
  error: string | null;
  /** When the attempt ended, epoch ms: picks the hour's hash and the minute's field. */
  nowMs: number;
}

/** One `HINCRBY key field 1` of the overview's counters. */
export interface StatsIncrement {
  key: string;
  field: string;
}

/** Start of the clock hour holding `nowMs`, epoch ms: the `hourStartMs` of `keys.statsHour`. */
export function statsHourStartMs(nowMs: number): number {
  return nowMs - (nowMs % STATS_HOUR_MS);
}

/**
 * Where a finished attempt counts (`StatsRepository.read` reads it back): in the hash of its
 * endpoint and of its org for the clock hour of `nowMs`, under `<minute>:ok` or `<minute>:fail`
 * (minute 0..59 of that hour), a failure also under `<minute>:e:<error code>`. An attempt the org's
 * check or the endpoint's transformation cancelled (`nextStatus` `cancelled`) sent nothing and
 * counts nowhere. Endpoint's increments first, then the org's.
 */
export function attemptStatsIncrements(keys: Pick<KeySchema, 'statsHour'>, attempt: CountedAttempt): StatsIncrement[] {
  if (attempt.nextStatus === 'cancelled') return [];
  const hourStartMs = statsHourStartMs(attempt.nowMs);
  const minute = Math.floor((attempt.nowMs - hourStartMs) / STATS_MINUTE_MS);
  const fields = attempt.error === null || attempt.error === '' ? [`${minute}:ok`] : [`${minute}:fail`, `${minute}:e:${attempt.error}`];
  const scopes = [keys.statsHour(attempt.orgId, 'endpoint', attempt.endpointId, hourStartMs), keys.statsHour(attempt.orgId, 'org', attempt.orgId, hourStartMs)];
  return scopes.flatMap((key) => fields.map((field) => ({ key, field })));
}

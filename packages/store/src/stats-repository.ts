import type { RedisClient } from './redis-connection.js';
import type { KeySchema } from './keys.js';
import { assertExec } from './org-repository.js';
import { STATS_HOUR_MS, STATS_MINUTE_MS, statsHourStartMs } from './stats-buckets.js';

/** The window of {@link StatsRepository.read}: the last 60 minutes by minute, or the last 24 hours by hour. */
export type StatsWindow = 'hour' | 'day';

/** Attempts that finished in one bucket. */
export interface StatsBucket {
  /** Start of the bucket, epoch ms. */
  startMs: number;
  succeeded: number;
  failed: number;
}

/** Attempt counters of one endpoint or org over a window. */
export interface StatsSeries {
  window: StatsWindow;
  /** Width of a bucket: 60 000 (hour) or 3 600 000 (day). */
  bucketMs: number;
  /** Oldest first: 60 minutes ending with the current one, or 24 hours ending with the current one. */
  buckets: StatsBucket[];
  /** Failed attempts per error code over the whole window, most frequent first. */
  errors: { code: string; count: number }[];
}

/**
 * The overview's counters: every finished attempt, success or failure with its error code, per
 * minute in one hash per endpoint and per org per clock hour (`keys.statsHour`, expiring a day and
 * two hours after its last write; `attemptStatsIncrements` says which field an attempt counts
 * under). The sender that finished the attempts writes them, summed, about once a second
 * (`StatsFlusher`), so what is read here trails by up to a second; a sender killed outright
 * (SIGKILL) loses at most its last second of counts (the delivery log itself is unaffected).
 * Reading never scans the delivery log: 2 hashes for the hour window, 24 for the day.
 */
export class StatsRepository {
  constructor(private readonly redis: RedisClient, private readonly keys: KeySchema) {}

  /** The counters of one endpoint or org (of org `orgId`) for `window`, as of `nowMs`. */
  async read(orgId: string, scope: 'endpoint' | 'org', id: string, window: StatsWindow, nowMs: number): Promise<StatsSeries> {
    const hourStart = statsHourStartMs(nowMs);
    const hours = window === 'hour' ? [hourStart - STATS_HOUR_MS, hourStart] : Array.from({ length: 24 }, (_, i) => hourStart - (23 - i) * STATS_HOUR_MS);
    const pipeline = this.redis.pipeline();
    for (const h of hours) pipeline.hgetall(this.keys.statsHour(orgId, scope, id, h));
    const hashes = assertExec(await pipeline.exec()).map(([, v]) => v as Record<string, string>);

    const bucketMs = window === 'hour' ? STATS_MINUTE_MS : STATS_HOUR_MS;
    const minuteStart = nowMs - (nowMs % STATS_MINUTE_MS);
    const first = window === 'hour' ? minuteStart - 59 * STATS_MINUTE_MS : hours[0]!;
    const buckets: StatsBucket[] = Array.from({ length: window === 'hour' ? 60 : 24 }, (_, i) => ({ startMs: first + i * bucketMs, succeeded: 0, failed: 0 }));
    const errors = new Map<string, number>();
    hashes.forEach((hash, h) => {
      for (const [field, raw] of Object.entries(hash)) {
        const m = /^(\d+):(ok|fail|e:(.+))$/.exec(field);
        if (!m) continue;
        const at = hours[h]! + Number(m[1]) * STATS_MINUTE_MS;
        if (at < first || at > nowMs) continue;
        const count = Number(raw);
        if (m[3] !== undefined) {
          errors.set(m[3], (errors.get(m[3]) ?? 0) + count);
          continue;
        }
        const bucket = buckets[Math.floor((at - first) / bucketMs)];
        if (!bucket) continue;
        if (m[2] === 'ok') bucket.succeeded += count;
        else bucket.failed += count;
      }
    });
    return {
      window,
      bucketMs,
      buckets,
      errors: [...errors].map(([code, count]) => ({ code, count })).sort((a, b) => b.count - a.count || a.code.localeCompare(b.code)),
    };
  }
}

/** How far back {@link RecentFailures} counts, ms: 15 minutes. */
export const RECENT_FAILURES_WINDOW_MS = 15 * 60 * 1000;
/** Width of one of its buckets, ms: a minute. */
const BUCKET_MS = 60 * 1000;
/** Most endpoints it keeps counts for; past this the one that failed least recently goes. */
const MAX_TRACKED = 10_000;

interface Tracked {
  orgId: string;
  endpointId: string;
  /** bucket start (ms) → failed attempts in it */
  buckets: Map<number, number>;
  lastAtMs: number;
}

/** One endpoint of {@link RecentFailures.top}. */
export interface EndpointFailures {
  orgId: string;
  endpointId: string;
  failedAttempts: number;
}

/**
 * Failed attempts per endpoint over the last {@link RECENT_FAILURES_WINDOW_MS} in this process, in
 * one-minute buckets, for the metric that names the endpoints failing most
 * (`postern_endpoint_recent_failed_attempts`): the only metric with endpoint ids as labels, so it
 * reports the top few only and its series stay bounded. Memory is bounded too (at most 10 000
 * endpoints, the stalest dropped first). Time comes in as `nowMs`.
 */
export class RecentFailures {
  private readonly endpoints = new Map<string, Tracked>();

  /** Counts one failed attempt of an endpoint at `nowMs`. */
  record(orgId: string, endpointId: string, nowMs: number): void {
    const key = `${orgId}/${endpointId}`;
    let tracked = this.endpoints.get(key);
    if (tracked) this.endpoints.delete(key);
    else {
      if (this.endpoints.size >= MAX_TRACKED) {
        const stalest = this.endpoints.keys().next();
        if (!stalest.done) this.endpoints.delete(stalest.value);
      }
      tracked = { orgId, endpointId, buckets: new Map(), lastAtMs: nowMs };
    }
    // Re-inserted last: the map's first entry is always the one that failed least recently.
    this.endpoints.set(key, tracked);
    const bucket = nowMs - (nowMs % BUCKET_MS);
    tracked.buckets.set(bucket, (tracked.buckets.get(bucket) ?? 0) + 1);
    tracked.lastAtMs = nowMs;
  }

  /**
   * The `limit` endpoints with the most failed attempts in the window ending at `nowMs`, most
   * first (ties: endpoint id), and forgets what fell out of the window.
   */
  top(limit: number, nowMs: number): EndpointFailures[] {
    const oldestBucket = nowMs - RECENT_FAILURES_WINDOW_MS;
    const counts: EndpointFailures[] = [];
    for (const [key, tracked] of this.endpoints) {
      let failedAttempts = 0;
      for (const [start, n] of tracked.buckets) {
        if (start + BUCKET_MS <= oldestBucket) tracked.buckets.delete(start);
        else failedAttempts += n;
      }
      if (failedAttempts === 0) this.endpoints.delete(key);
      else counts.push({ orgId: tracked.orgId, endpointId: tracked.endpointId, failedAttempts });
    }
    counts.sort((a, b) => b.failedAttempts - a.failedAttempts || a.endpointId.localeCompare(b.endpointId));
    return counts.slice(0, limit);
  }
}

import { STATS_TTL_S, type KeySchema } from './keys.js';
import type { LiveFeedSettings } from './live-feed-repository.js';
import type { RedisClient } from './redis-connection.js';
import { attemptStatsIncrements, type CountedAttempt } from './stats-buckets.js';

/** How often a sender writes its counted attempts, ms: the overview trails by up to this much. */
export const STATS_FLUSH_INTERVAL_MS = 1_000;

/**
 * How many distinct counters (key and field) a flusher keeps while Redis does not take them; past
 * this the oldest are dropped. An endpoint adds 2 a minute (4 while it fails, plus 2 per further
 * error code), so this is minutes of an outage across thousands of busy endpoints.
 */
export const STATS_MAX_PENDING_FIELDS = 50_000;

/** The timer a flusher writes on; injected so tests drive flushes themselves. */
export interface FlushTimers {
  setInterval(tick: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

/** Node's timers, unref'd: a flusher never keeps a process alive (closing it writes what is left). */
const NODE_TIMERS: FlushTimers = {
  setInterval: (tick, ms) => setInterval(tick, ms).unref(),
  clearInterval: (handle) => clearInterval(handle as NodeJS.Timeout),
};

/** Options of {@link StatsFlusher}. */
export interface StatsFlusherOptions {
  /** The sender's worker connection (standalone or cluster). */
  redis: RedisClient;
  keys: KeySchema;
  /** The live feed's bounds (`store.liveFeed.settings`): its time to live, s; `maxEntries` 0 = no feed, nothing to renew. */
  liveFeed: LiveFeedSettings;
  /** Between two writes, ms; default {@link STATS_FLUSH_INTERVAL_MS}; 0 = no timer (only `flush` and `close` write). */
  intervalMs?: number;
  /** Counters kept unwritten at most; default {@link STATS_MAX_PENDING_FIELDS}. */
  maxPendingFields?: number;
  /** Default Node's, unref'd. */
  timers?: FlushTimers;
  /** Told once when a write fails and once when counts are dropped (again after a write succeeds). */
  logger?: { warn(fields: object, message: string): void };
}

interface PendingCount {
  orgId: string;
  key: string;
  field: string;
  count: number;
}

interface PendingExpiry {
  orgId: string;
  key: string;
  ttlS: number;
}

/**
 * The sender's writes that need not be atomic with an attempt's finish: the overview's counters
 * (`StatsRepository`) and the renewal of each org's live feed expiry. Attempts are counted in
 * memory as they finish (`attemptStatsIncrements` decides where) and written about once a second,
 * summed: one `HINCRBY` per counter and one `EXPIRE` ({@link STATS_TTL_S}) per hash written, plus one
 * `EXPIRE` (the feed's time to live) per org whose feed got entries since the last write — instead
 * of 3 commands inside every finish.
 *
 * Every key of one org shares its hash tag, so each write is one pipeline per org (never mixing
 * slots on Redis Cluster). A write Redis refuses or cannot take keeps what failed for the next
 * one, capped at `maxPendingFields` (oldest dropped first); writes never overlap. `close` writes
 * what is left: a sender stopped with SIGTERM loses nothing, one killed outright loses at most its
 * last second of counts (the delivery log is never affected).
 */
export class StatsFlusher {
  private readonly redis: RedisClient;
  private readonly keys: KeySchema;
  private readonly liveFeed: LiveFeedSettings;
  private readonly maxPendingFields: number;
  private readonly timers: FlushTimers;
  private readonly logger: StatsFlusherOptions['logger'];
  /** Counters not written yet, by key and field, oldest first. */
  private counts = new Map<string, PendingCount>();
  /** Keys to give their expiry at the next write, by key. */
  private expiries = new Map<string, PendingExpiry>();
  private chain: Promise<void> = Promise.resolve();
  private writing = false;
  private handle: unknown = null;
  private failing = false;
  private dropping = false;

  constructor(opts: StatsFlusherOptions) {
    this.redis = opts.redis;
    this.keys = opts.keys;
    this.liveFeed = opts.liveFeed;
    this.maxPendingFields = opts.maxPendingFields ?? STATS_MAX_PENDING_FIELDS;
    this.timers = opts.timers ?? NODE_TIMERS;
    this.logger = opts.logger;
    const intervalMs = opts.intervalMs ?? STATS_FLUSH_INTERVAL_MS;
    // A tick while a write is still out (Redis slow or away) leaves its counts to the next one.
    if (intervalMs > 0) {
      this.handle = this.timers.setInterval(() => {
        if (!this.writing) void this.flush();
      }, intervalMs);
    }
  }

  /** Counts one finished attempt (one whose finish recorded it: not a stale one). */
  countAttempt(attempt: CountedAttempt): void {
    for (const { key, field } of attemptStatsIncrements(this.keys, attempt)) this.add({ orgId: attempt.orgId, key, field, count: 1 });
  }

  /** Notes that a finish may have appended to the org's live feed: its expiry is renewed at the next write. */
  feedAppended(orgId: string): void {
    if (this.liveFeed.maxEntries <= 0) return;
    const key = this.keys.orgLiveFeed(orgId);
    this.expiries.set(key, { orgId, key, ttlS: this.liveFeed.ttlS });
  }

  /** Counters counted and not written yet. */
  get pendingFields(): number {
    return this.counts.size;
  }

  /** Writes everything counted so far (after any write still out). Never rejects: what fails is kept. */
  flush(): Promise<void> {
    // `write` catches what Redis answers; anything else is not worth stopping every later flush for.
    this.chain = this.chain.then(() => this.write()).catch(() => undefined);
    return this.chain;
  }

  /** Stops the timer and writes what is left; call it before the Redis connection closes. */
  async close(): Promise<void> {
    if (this.handle !== null) this.timers.clearInterval(this.handle);
    this.handle = null;
    await this.flush();
  }

  private add(count: PendingCount): void {
    const id = `${count.key}\n${count.field}`;
    const pending = this.counts.get(id);
    if (pending) {
      pending.count += count.count;
      return;
    }
    if (this.counts.size >= this.maxPendingFields) {
      const oldest = this.counts.keys().next().value;
      if (oldest !== undefined) this.counts.delete(oldest);
      if (!this.dropping) {
        this.dropping = true;
        this.logger?.warn({ maxPendingFields: this.maxPendingFields }, 'attempt counters dropped: too many kept while Redis did not take them (the overview will miss some attempts)');
      }
    }
    this.counts.set(id, { ...count });
    // A hash is only ever written with its expiry in the same pipeline.
    if (!this.expiries.has(count.key)) this.expiries.set(count.key, { orgId: count.orgId, key: count.key, ttlS: STATS_TTL_S });
  }

  private async write(): Promise<void> {
    if (this.counts.size === 0 && this.expiries.size === 0) return;
    this.writing = true;
    const failed: { counts: PendingCount[]; expiries: PendingExpiry[] } = { counts: [], expiries: [] };
    let error: unknown = null;
    try {
      const byOrg = new Map<string, { counts: PendingCount[]; expiries: PendingExpiry[] }>();
      const batchOf = (orgId: string) => byOrg.get(orgId) ?? byOrg.set(orgId, { counts: [], expiries: [] }).get(orgId)!;
      for (const c of this.counts.values()) batchOf(c.orgId).counts.push(c);
      for (const e of this.expiries.values()) batchOf(e.orgId).expiries.push(e);
      this.counts = new Map();
      this.expiries = new Map();
      await Promise.all(
        [...byOrg.values()].map(async (batch) => {
          let replies: [Error | null, unknown][] | null = null;
          try {
            const pipeline = this.redis.pipeline();
            // Counters first: a hash this pipeline creates gets its expiry from the same pipeline.
            for (const c of batch.counts) pipeline.hincrby(c.key, c.field, c.count);
            for (const e of batch.expiries) pipeline.expire(e.key, e.ttlS);
            replies = await pipeline.exec();
          } catch (err) {
            error ??= err;
          }
          // No replies (the connection went away, or the pipeline failed as a whole): all of it again.
          const refused = (i: number): boolean => {
            const err = replies ? (replies[i]?.[0] ?? null) : (error ?? new Error('pipeline was not answered'));
            error ??= err;
            return err !== null;
          };
          for (const [i, c] of batch.counts.entries()) if (refused(i)) failed.counts.push(c);
          for (const [i, e] of batch.expiries.entries()) if (refused(batch.counts.length + i)) failed.expiries.push(e);
        }),
      );
    } finally {
      this.writing = false;
    }
    if (failed.counts.length === 0 && failed.expiries.length === 0) {
      this.failing = false;
      this.dropping = false;
      return;
    }
    this.keep(failed);
    if (!this.failing) {
      this.failing = true;
      this.logger?.warn({ err: error instanceof Error ? error.message : String(error), pendingFields: this.counts.size }, 'attempt counters could not be written; kept for the next flush');
    }
  }

  /** Puts back what a write could not do, ahead of what was counted meanwhile (older goes first when the cap drops some). */
  private keep(failed: { counts: PendingCount[]; expiries: PendingExpiry[] }): void {
    const meanwhile = [...this.counts.values()];
    this.counts = new Map();
    for (const c of [...failed.counts, ...meanwhile]) this.add(c);
    for (const e of failed.expiries) if (!this.expiries.has(e.key)) this.expiries.set(e.key, e);
  }
}

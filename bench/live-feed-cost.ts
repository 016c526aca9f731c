/**
 * What the live feed costs per delivery (GET /v1/deliveries/stream's source): the finish and settle
 * scripts append one entry (XADD MAXLEN ~) in the same call, so it adds no round trip; the finish
 * leaves the feed's expiry to the sender, which renews it about once a second per org (one EXPIRE
 * per flush, not per delivery: left out here). Measured inside the plain 1-endpoint run of
 * `npm run bench`, before and after from the same window: Redis commands per delivery with the feed
 * and without its XADD, the Redis CPU the XADD took (INFO commandstats `usec`), the bytes the
 * finish call carries for it, and what the capped feed holds (MEMORY USAGE of the org's feed key:
 * bounded, not per delivery). No run of its own: it adds a few INFO calls to the bench.
 */
import type { Redis } from 'ioredis';
import type { DeliveryCost } from './resource-cost.js';

/** `calls` and `usec` of every command in `INFO commandstats`, by name. */
export async function commandUsec(redis: Redis): Promise<Map<string, { calls: number; usec: number }>> {
  const stats = new Map<string, { calls: number; usec: number }>();
  for (const m of (await redis.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) stats.set(m[1]!, { calls: Number(m[2]), usec: Number(m[3]) });
  return stats;
}

/** The live feed's share of one run. */
export interface LiveFeedCost {
  deliveries: number;
  /** Feed appends per delivery (one per attempt finished: 1 here, every attempt succeeds). */
  appendsPerDelivery: number;
  /** Redis commands per delivery, as the cost window counts them, with the feed and without its XADD. */
  redisCommandsPerDelivery: { withFeed: number; withoutFeed: number };
  /** Redis CPU per delivery, µs: the feed's XADD, and the whole of Redis's in the run. */
  redisUsecPerDelivery: { feed: number; allRedis: number | null };
  /** Bytes the finish call sends for the feed (its key, endpoint and event ids, cap and expiry). */
  requestBytesPerFinish: number;
  /** The org's feed after the run: entries kept (≈ the cap) and MEMORY USAGE, in total and per entry. */
  feed: { entries: number; bytes: number; bytesPerEntry: number };
}

const r2 = (n: number) => Math.round(n * 100) / 100;

/** How many entries were ever added to a stream (`XINFO STREAM` `entries-added`, Redis ≥ 7); 0 when it does not exist. */
async function entriesAdded(redis: Redis, key: string): Promise<number> {
  const info = (await redis.call('XINFO', 'STREAM', key).catch(() => null)) as unknown[] | null;
  if (!info) return 0;
  const at = info.indexOf('entries-added');
  return at < 0 ? 0 : Number(info[at + 1]);
}

/**
 * Opens the feed's measurement before a run; `end` after the cost window closed. `feedKey` is the
 * run's org feed (`keys.orgLiveFeed`), `sample` one finish call's extra KEYS and ARGV values.
 */
export async function openLiveFeedWindow(redis: Redis, feedKey: string): Promise<{ end(run: { deliveries: number; cost: DeliveryCost }, sample: string[]): Promise<LiveFeedCost> }> {
  const before = await commandUsec(redis);
  const addedBefore = await entriesAdded(redis, feedKey);
  return {
    async end(run, sample) {
      const after = await commandUsec(redis);
      const appends = (await entriesAdded(redis, feedKey)) - addedBefore;
      const delta = (name: string) => ({ calls: (after.get(name)?.calls ?? 0) - (before.get(name)?.calls ?? 0), usec: (after.get(name)?.usec ?? 0) - (before.get(name)?.usec ?? 0) });
      // BullMQ appends to its own events stream too: the feed is charged its own count of XADDs (its
      // stream's entries-added) at the window's mean cost per call.
      const mean = (d: { calls: number; usec: number }) => (d.calls > 0 ? d.usec / d.calls : 0);
      const feedUsec = appends * mean(delta('xadd'));
      const per = (n: number) => n / Math.max(1, run.deliveries);
      const entries = await redis.xlen(feedKey);
      const bytes = Number((await redis.call('MEMORY', 'USAGE', feedKey, 'SAMPLES', '0')) ?? 0);
      // Redis protocol: `$<len>\r\n<value>\r\n` per value.
      const requestBytes = sample.reduce((sum, v) => sum + `$${Buffer.byteLength(v)}\r\n${v}\r\n`.length, 0);
      const all = run.cost.cpuMsPerDelivery.redis;
      return {
        deliveries: run.deliveries,
        appendsPerDelivery: r2(per(appends)),
        redisCommandsPerDelivery: { withFeed: run.cost.redisCommandsPerDelivery, withoutFeed: r2(run.cost.redisCommandsPerDelivery - per(appends)) },
        redisUsecPerDelivery: { feed: r2(per(feedUsec)), allRedis: all === null ? null : r2(all * 1000) },
        requestBytesPerFinish: requestBytes,
        feed: { entries, bytes, bytesPerEntry: entries > 0 ? Math.round(bytes / entries) : 0 },
      };
    },
  };
}

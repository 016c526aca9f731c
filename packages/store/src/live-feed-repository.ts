import type { LiveDeliveryChange } from '@postern/shared';
import type { KeySchema } from './keys.js';
import type { RedisClient } from './redis-connection.js';

/** How each org's live feed is bounded: about `maxEntries` changes (0 = no feed), kept `ttlS` after the last one. */
export interface LiveFeedSettings {
  maxEntries: number;
  ttlS: number;
}

/** One entry of an org's live feed: its stream id (`<ms>-<seq>`, the SSE `id:`) and the change. */
export interface LiveFeedEntry {
  id: string;
  change: LiveDeliveryChange;
}

const numberOrNull = (v: string | undefined): number | null => (v === undefined || v === '' ? null : Number(v));

/**
 * Reads one stream entry's flat field list as the finish and settle scripts write it
 * (`includes/live-feed.lua`: `d` delivery, `p` endpoint, `v` event, `t` event type, `s` status,
 * `n` attempt, `r` response status, `x` error or reason, `ms` duration, `a` next attempt at, `at`).
 */
export function parseLiveFeedEntry(id: string, flat: readonly string[]): LiveFeedEntry {
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) f[flat[i]!] = flat[i + 1]!;
  return {
    id,
    change: {
      deliveryId: f.d ?? '',
      endpointId: f.p ?? '',
      eventId: f.v ?? '',
      eventType: f.t ?? '',
      status: f.s ?? '',
      attempt: numberOrNull(f.n),
      responseStatus: numberOrNull(f.r),
      error: f.x ?? null,
      durationMs: numberOrNull(f.ms),
      nextAttemptAt: numberOrNull(f.a),
      at: Number(f.at ?? 0),
    },
  };
}

type RawEntries = [string, string[]][];

/**
 * The org's live feed (`keys.orgLiveFeed`): written by the finish and settle scripts, so it costs
 * no round trip of its own (the finish leaves renewing its expiry to the sender's `StatsFlusher`);
 * read here by ingest's live stream. Each read touches one key, so it works the same on Redis
 * Cluster.
 */
export class LiveFeedRepository {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySchema,
    /** How each org's feed is bounded, as the scripts that write it are told. */
    readonly settings: LiveFeedSettings,
  ) {}

  /** The newest entry's id, or `0-0` when the feed is empty or gone: where a fresh reader starts. */
  async latestId(orgId: string): Promise<string> {
    const r = (await this.redis.xrevrange(this.keys.orgLiveFeed(orgId), '+', '-', 'COUNT', 1)) as RawEntries;
    return r[0]?.[0] ?? '0-0';
  }

  /** The oldest entry still kept, or null when none: the start of the window a resume can reach. */
  async oldestId(orgId: string): Promise<string | null> {
    const r = (await this.redis.xrange(this.keys.orgLiveFeed(orgId), '-', '+', 'COUNT', 1)) as RawEntries;
    return r[0]?.[0] ?? null;
  }

  /** Up to `count` entries after `afterId` (exclusive), oldest first. */
  async after(orgId: string, afterId: string, count: number): Promise<LiveFeedEntry[]> {
    const r = (await this.redis.xrange(this.keys.orgLiveFeed(orgId), `(${afterId}`, '+', 'COUNT', count)) as RawEntries;
    return r.map(([id, flat]) => parseLiveFeedEntry(id, flat));
  }

  /**
   * Waits up to `blockMs` on `connection` (a connection of its own: XREAD BLOCK holds it) for
   * entries after `afterId`, and returns up to `count` of them (none on timeout).
   */
  async waitAfter(connection: RedisClient, orgId: string, afterId: string, blockMs: number, count: number): Promise<LiveFeedEntry[]> {
    const r = (await connection.xread('COUNT', count, 'BLOCK', blockMs, 'STREAMS', this.keys.orgLiveFeed(orgId), afterId)) as [string, RawEntries][] | null;
    return (r?.[0]?.[1] ?? []).map(([id, flat]) => parseLiveFeedEntry(id, flat));
  }
}

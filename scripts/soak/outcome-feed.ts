/**
 * When Postern recorded each attempt's outcome, on Redis's clock. The finish script appends one
 * entry to the org's live feed in the same script that stores the outcome and the endpoint's pace
 * (`finish-attempt.lua`), and a stream entry's id is the time Redis wrote it: so an entry's id is
 * the moment a `Retry-After` pause became visible to every sender's claim. The checker dates
 * pauses from it (`check-pacing.ts`); a sender that read a 429 but whose finish reached Redis
 * seconds later (a busy machine) paused nobody until then.
 */
import type { RedisClient } from '@postern/store';

/** `<delivery id>.<attempt>` → when its outcome was first recorded (epoch ms, Redis's clock). */
export type OutcomeRecordedAt = Record<string, number>;

/** How often the feeds are read, ms: well inside the time a capped feed keeps its entries. */
const READ_INTERVAL_MS = 100;
/** Entries read per feed and call. */
const READ_COUNT = 2000;

/** A running reader of the orgs' live feeds; {@link FeedWatcher.stop} reads once more and ends. */
export interface FeedWatcher {
  stop(): Promise<void>;
}

/**
 * Reads the live feeds `feedKeys` (one per org, `keys.orgLiveFeed`) from their start until
 * stopped, filling `into` with the first time each attempt's outcome was recorded. Redis faults
 * are waited out: the reader keeps each feed's last id and goes on from it.
 */
export function watchOutcomeFeeds(redis: RedisClient, feedKeys: readonly string[], into: OutcomeRecordedAt): FeedWatcher {
  const lastIds = new Map(feedKeys.map((k) => [k, '0-0']));
  let running = true;
  const readAll = async () => {
    for (const key of feedKeys) {
      for (;;) {
        const entries = (await redis.xrange(key, `(${lastIds.get(key)}`, '+', 'COUNT', READ_COUNT)) as [string, string[]][];
        for (const [id, flat] of entries) {
          const f: Record<string, string> = {};
          for (let i = 0; i + 1 < flat.length; i += 2) f[flat[i]!] = flat[i + 1]!;
          const at = Number(id.split('-')[0]);
          const attempt = f.d && f.n ? `${f.d}.${f.n}` : null;
          if (attempt && !(attempt in into)) into[attempt] = at;
          lastIds.set(key, id);
        }
        if (entries.length < READ_COUNT) break;
      }
    }
  };
  const loop = (async () => {
    while (running) {
      await readAll().catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, READ_INTERVAL_MS));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      await readAll().catch(() => undefined);
    },
  };
}

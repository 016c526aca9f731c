import type { LiveFeedEntry, LiveFeedRepository, RedisClient } from '@postern/store';
import type { Logger } from 'pino';

/** One live stream's end of the hub: gets every entry of its org's feed, in order, once it joined. */
export interface LiveSubscriber {
  /** Entries read from the org's feed since the last call, oldest first. */
  deliver(entries: readonly LiveFeedEntry[]): void;
  /** The hub is closing (the process is stopping): end the stream. */
  end(reason: 'shutting_down'): void;
}

/** What {@link LiveHub.subscribe} returns. */
export interface LiveSubscription {
  /**
   * Resolves once the org's reader knows where it starts: every entry after the id it resolves
   * with reaches `deliver`. A stream that replays (`Last-Event-ID`) or starts from the newest entry
   * reads those after this resolved, so nothing falls between the two.
   */
  ready: Promise<string>;
  unsubscribe(): void;
}

/** Options of {@link LiveHub}. */
export interface LiveHubOptions {
  feed: LiveFeedRepository;
  /** The Redis the first read of a reader goes to (ingest's own connection). */
  redis: RedisClient;
  /**
   * Makes a connection for one org's blocking reads (XREAD BLOCK holds it): one per org with a live
   * stream open in this process, whatever the number of streams; closed when the last one ends.
   */
  connect: () => RedisClient;
  logger: Logger;
  /** How long one XREAD blocks, ms; default 5 000. */
  blockMs?: number;
  /** Wait after a failed read before the next, ms; default 500. */
  retryMs?: number;
}

interface OrgReader {
  subscribers: Set<LiveSubscriber>;
  stop(): void;
  ready: Promise<string>;
}

const READ_COUNT = 500;

/**
 * Fans each org's live feed out to the streams open on this process: one reader loop per org (a
 * blocking XREAD on a connection of its own, so one connection per org with viewers, never one per
 * stream), which hands every entry it reads to each of the org's subscribers. Each read touches one
 * key, in the org's hash slot, so it runs the same on Redis Cluster.
 */
export class LiveHub {
  private readonly readers = new Map<string, OrgReader>();
  private closed = false;

  constructor(private readonly options: LiveHubOptions) {}

  /** How many orgs have a reader now (one blocking connection each). */
  get readerCount(): number {
    return this.readers.size;
  }

  /** Joins the org's reader (starting one when it has none). */
  subscribe(orgId: string, subscriber: LiveSubscriber): LiveSubscription {
    if (this.closed) throw new Error('live hub is closed');
    let reader = this.readers.get(orgId);
    if (!reader) {
      reader = this.startReader(orgId);
      this.readers.set(orgId, reader);
    }
    reader.subscribers.add(subscriber);
    const joined = reader;
    return {
      ready: joined.ready,
      unsubscribe: () => {
        joined.subscribers.delete(subscriber);
        if (joined.subscribers.size === 0 && this.readers.get(orgId) === joined) {
          this.readers.delete(orgId);
          joined.stop();
        }
      },
    };
  }

  /** Ends every stream (`end('shutting_down')`) and stops every reader. */
  async close(): Promise<void> {
    this.closed = true;
    for (const reader of this.readers.values()) {
      for (const s of reader.subscribers) s.end('shutting_down');
      reader.stop();
    }
    this.readers.clear();
  }

  private startReader(orgId: string): OrgReader {
    const { feed, logger } = this.options;
    const blockMs = this.options.blockMs ?? 5_000;
    const retryMs = this.options.retryMs ?? 500;
    const subscribers = new Set<LiveSubscriber>();
    let stopped = false;
    const held: { connection: RedisClient | null; wake: (() => void) | null } = { connection: null, wake: null };
    const pause = (ms: number) =>
      new Promise<void>((resolve) => {
        const t = setTimeout(resolve, ms);
        held.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
    const ready = feed.latestId(orgId);
    const loop = async () => {
      let cursor = await ready;
      if (stopped) return;
      const connection = this.options.connect();
      held.connection = connection;
      connection.on('error', () => undefined);
      while (!stopped) {
        let entries: LiveFeedEntry[];
        try {
          entries = await feed.waitAfter(connection, orgId, cursor, blockMs, READ_COUNT);
        } catch (err) {
          if (stopped) break;
          logger.warn({ err: (err as Error).message, orgId }, 'live feed read failed; retrying');
          await pause(retryMs);
          continue;
        }
        if (entries.length === 0 || stopped) continue;
        cursor = entries[entries.length - 1]!.id;
        for (const s of subscribers) s.deliver(entries);
      }
    };
    const running = loop().catch((err: unknown) => {
      logger.warn({ err: (err as Error).message, orgId }, 'live feed reader stopped');
      for (const s of subscribers) s.end('shutting_down');
    });
    void running;
    return {
      subscribers,
      ready,
      stop: () => {
        stopped = true;
        held.wake?.();
        // Interrupts the blocking read at once: its promise rejects and the loop ends.
        held.connection?.disconnect();
      },
    };
  }
}

import { randomUUID } from 'node:crypto';
import type { RedisClient } from './redis-connection.js';
import type { KeySchema } from './keys.js';

/**
 * The instance marker: written once, at the first start of any Postern app against an empty
 * Redis (or one without a marker), and never changed afterwards. Its `id` is random, so a marker
 * written again after the data was lost is told apart from the original.
 */
export interface InstanceMarker {
  id: string;
  /** When it was written, ms since the epoch. */
  createdAt: number;
}

/** How often each app checks the instance marker besides every `/readyz`, ms. */
export const DATA_CHECK_INTERVAL_MS = 10_000;

/** What the data check found: `unknown` when Redis could not be asked (the `redis` check says why). */
export type DataCheck = 'ok' | 'lost' | 'unknown';

/** Passed to `onLost` when the data check first fails. */
export interface DataLoss {
  /** The marker this process saw before. */
  expected: InstanceMarker;
  /** What Redis holds now: null when the marker is gone (FLUSHALL, a restart without persistence), another marker when a restarted app wrote a new one. */
  found: InstanceMarker | null;
}

/** Options of {@link DataLossMonitor}. */
export interface DataLossMonitorOptions {
  redis: RedisClient;
  keys: KeySchema;
  /** A new marker, written when Redis holds none; default a random UUID and the current time. */
  newMarker?: () => InstanceMarker;
  /** Called once, when the marker this process saw is found gone or replaced. */
  onLost: (loss: DataLoss) => void;
}

/**
 * Notices that Redis lost Postern's data while this process ran (docs/architecture.md, "Data
 * loss"). On its first successful check the process writes the instance marker if none exists
 * (`SET NX`) and remembers the marker's id; every later check reads the marker, and a missing or
 * different one means the data this process worked with is gone. The verdict is sticky: it stays
 * `lost` until the process restarts, which is how an operator says the loss has been dealt with.
 *
 * A Redis emptied while no Postern process runs looks like a first start: nothing that
 * remembers the old marker is left to compare.
 */
export class DataLossMonitor {
  private seen: InstanceMarker | null = null;
  private lostState = false;

  constructor(private readonly options: DataLossMonitorOptions) {}

  /** Whether a loss was seen (sticky). */
  get lost(): boolean {
    return this.lostState;
  }

  /**
   * Reads (first time: writes if absent) the marker and compares it with the one seen before.
   * Never throws; `unknown` at once while the connection is not ready, and after `timeoutMs`
   * (default 1 s) when Redis does not answer (a connection that broke a moment ago may still
   * say `ready`, and a worker connection then holds the command until Redis is back).
   */
  async check(timeoutMs = 1000): Promise<DataCheck> {
    if (this.lostState) return 'lost';
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<DataCheck>((resolve) => {
      timer = setTimeout(() => resolve('unknown'), timeoutMs);
    });
    try {
      return await Promise.race([this.compare(), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  private async compare(): Promise<DataCheck> {
    const { redis, keys } = this.options;
    // A worker connection queues commands while disconnected: asking now would wait out the outage.
    if (redis.status !== 'ready') return 'unknown';
    try {
      if (this.seen === null) {
        const fresh = this.options.newMarker?.() ?? { id: randomUUID(), createdAt: Date.now() };
        await redis.set(keys.instanceMarker(), JSON.stringify(fresh), 'NX');
        this.seen = parseMarker(await redis.get(keys.instanceMarker()));
        return this.seen ? 'ok' : 'unknown';
      }
      const found = parseMarker(await redis.get(keys.instanceMarker()));
      if (found && found.id === this.seen.id) return 'ok';
      this.lostState = true;
      this.options.onLost({ expected: this.seen, found });
      return 'lost';
    } catch {
      return 'unknown';
    }
  }
}

function parseMarker(raw: string | null): InstanceMarker | null {
  if (raw === null) return null;
  try {
    const value = JSON.parse(raw) as Partial<InstanceMarker>;
    return typeof value.id === 'string' && typeof value.createdAt === 'number' ? { id: value.id, createdAt: value.createdAt } : null;
  } catch {
    return null;
  }
}

/** What an app logs, at error level, when Redis lost its data: the event and what to do. */
export const DATA_LOSS_MESSAGE =
  "Redis lost Postern's data: the instance marker is gone or was replaced (FLUSHALL, or a Redis restart without persistence). " +
  'Events, deliveries and endpoints written before may be gone, and pending deliveries will not be sent. ' +
  'Restore Redis from its backup (AOF or RDB) if you have one; check that it runs with appendonly yes; ' +
  'then restart every Postern process (a restart is how this alarm is acknowledged).';

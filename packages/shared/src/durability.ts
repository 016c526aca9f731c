/**
 * What a `202 Accepted` promises about durability (docs/production-redis.md, "Acknowledged means
 * durable"), decided from the settings and from what Redis confirmed. Pure.
 *
 * - `local` (default): the primary has the event in memory (and in its AOF as `appendfsync` says).
 * - `replica`: also at least `replicas` replicas confirmed it (`WAIT`) within the wait.
 * - `local-fsync`: the primary's AOF has it on disk (`WAITAOF 1 0`, Redis ≥ 7.2).
 */
export const ACCEPT_DURABILITY_MODES = ['local', 'replica', 'local-fsync'] as const;
/** One of {@link ACCEPT_DURABILITY_MODES}. */
export type AcceptDurability = (typeof ACCEPT_DURABILITY_MODES)[number];

/** The `Retry-After` of a `503 not_durable`, s: a failover or a lagging replica usually settles within it. */
export const NOT_DURABLE_RETRY_AFTER_S = 1;

/** What Redis confirmed after an event's writes: replicas that have them (`WAIT`), and whether the local AOF has them on disk (`WAITAOF`). */
export interface DurabilityConfirmation {
  replicas: number;
  localFsynced: boolean;
}

/** The answer to an accept under {@link AcceptDurability}: 202, or 503 with why and when to retry. */
export type DurabilityVerdict = { durable: true } | { durable: false; reason: string; retryAfterS: number };

/**
 * Whether an accepted event is as durable as `mode` promises, given what the slowest written
 * primary confirmed (`confirmations`: one per connection that wrote: the org's and the queue's).
 */
export function durabilityVerdict(mode: AcceptDurability, requiredReplicas: number, confirmations: readonly DurabilityConfirmation[]): DurabilityVerdict {
  if (mode === 'local') return { durable: true };
  if (mode === 'replica') {
    const fewest = Math.min(...confirmations.map((c) => c.replicas));
    if (fewest >= requiredReplicas) return { durable: true };
    return { durable: false, reason: `${fewest} of ${requiredReplicas} replica(s) confirmed the event in time`, retryAfterS: NOT_DURABLE_RETRY_AFTER_S };
  }
  if (confirmations.every((c) => c.localFsynced)) return { durable: true };
  return { durable: false, reason: "the primary's append-only file did not confirm the event on disk in time", retryAfterS: NOT_DURABLE_RETRY_AFTER_S };
}

/**
 * Whether a Redis version (`INFO server`'s `redis_version`) has `WAITAOF` (7.2 and later), which
 * `local-fsync` needs.
 */
export function supportsWaitAof(redisVersion: string): boolean {
  const [major = 0, minor = 0] = redisVersion.split('.').map(Number);
  return major > 7 || (major === 7 && minor >= 2);
}

import type { RedisClient } from './redis-connection.js';
import type { KeySchema } from './keys.js';

/** How long an action's answer is returned again for its `Idempotency-Key`: 24 h, in ms. */
export const ACTION_IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * How long an in-progress claim holds its key, ms. Long enough for any action (a bulk
 * redelivery of 500 takes well under a second); short enough that a key whose first call died
 * with its process (no answer stored) can be used again a minute later.
 */
export const ACTION_CLAIM_TTL_MS = 60_000;

/** What an `Idempotency-Key` of an action route holds. `fingerprint` identifies the request (route, target, body). */
export type ActionIdempotencyRecord =
  | { state: 'in_progress'; fingerprint: string }
  | { state: 'done'; fingerprint: string; status: number; body: unknown };

/** Result of {@link ActionIdempotencyRepository.claim}. */
export type ActionClaim = { claimed: true } | { claimed: false; record: ActionIdempotencyRecord | null };

/**
 * `Idempotency-Key` records of action routes (redeliver, pause, rotate-secret…), one per org, route
 * and key hash. The claim is one `SET NX`, so of any number of concurrent calls with one key
 * exactly one runs the action; the others read the record and wait for its answer.
 */
export class ActionIdempotencyRepository {
  constructor(private readonly redis: RedisClient, private readonly keys: KeySchema) {}

  /** Claims the key for a request with this fingerprint; when it is taken, returns what it holds. */
  async claim(orgId: string, route: string, keyHash: string, fingerprint: string): Promise<ActionClaim> {
    const key = this.keys.actionIdempotency(orgId, route, keyHash);
    const marker: ActionIdempotencyRecord = { state: 'in_progress', fingerprint };
    const set = await this.redis.set(key, JSON.stringify(marker), 'PX', ACTION_CLAIM_TTL_MS, 'NX');
    if (set === 'OK') return { claimed: true };
    return { claimed: false, record: await this.get(orgId, route, keyHash) };
  }

  /** The record under the key, or null when there is none (expired, or released). */
  async get(orgId: string, route: string, keyHash: string): Promise<ActionIdempotencyRecord | null> {
    const raw = await this.redis.get(this.keys.actionIdempotency(orgId, route, keyHash));
    return raw === null ? null : (JSON.parse(raw) as ActionIdempotencyRecord);
  }

  /** Stores the answer of the claimed call, kept {@link ACTION_IDEMPOTENCY_TTL_MS}. */
  async complete(orgId: string, route: string, keyHash: string, record: Extract<ActionIdempotencyRecord, { state: 'done' }>): Promise<void> {
    await this.redis.set(this.keys.actionIdempotency(orgId, route, keyHash), JSON.stringify(record), 'PX', ACTION_IDEMPOTENCY_TTL_MS);
  }

  /** Gives the key up (the call failed on Postern's side), so a retry with it runs the action. */
  async release(orgId: string, route: string, keyHash: string): Promise<void> {
    await this.redis.del(this.keys.actionIdempotency(orgId, route, keyHash));
  }
}

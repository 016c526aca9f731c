import type { RedisClient } from './redis-connection.js';
import type { KeySchema } from './keys.js';
import { LuaScript } from './lua-script.js';
import { assertExec } from './org-repository.js';

const acquireScript = LuaScript.load('acquire-lease');
const releaseScript = LuaScript.load('release-lease');
const recallScript = LuaScript.load('recall-line');

/** Deliveries waiting for their ordering key that one policy change wakes at most (the rest look again by themselves). */
export const RECALL_KEY_LINE_MAX = 1000;

/** How much `lua/includes/lease.lua` lowers the score of a parked delivery a release has called (CALLED_OFFSET there). */
export const CALLED_OFFSET = 4e15;

/** Result of {@link LeaseRepository.acquire}. */
export type AcquireResult = 'acquired' | 'endpoint_full' | 'org_full' | 'event_claimed';

/** Whose slot: one delivery's attempt of one event to one endpoint of one org. */
export interface LeaseKey {
  deliveryId: string;
  eventId: string;
  endpointId: string;
  orgId: string;
}

/**
 * The six keys of one delivery's lease, in the order `lua/includes/lease.lua` takes them: endpoint
 * leases, org leases, endpoint parked, org parked, event claim, event claim waiters.
 */
export function leaseScriptKeys(keys: KeySchema, k: LeaseKey): string[] {
  return [
    keys.endpointLeases(k.orgId, k.endpointId),
    keys.orgLeases(k.orgId),
    keys.endpointParked(k.orgId, k.endpointId),
    keys.orgParked(k.orgId),
    keys.eventClaim(k.orgId, k.endpointId, k.eventId),
    keys.eventClaimWaiters(k.orgId, k.endpointId, k.eventId),
  ];
}

/**
 * Concurrency limits that hold across every sender process (every preset: 4 per endpoint, 20
 * per org, as jitter-45h documents), and one claim per event and endpoint (tourical: a
 * redelivery never overlaps a retry of the same event): leases in Redis scored by expiry, so a crashed holder's slot comes back by
 * itself. A refused delivery is parked, oldest first, and woken by the release that frees room.
 */
export class LeaseRepository {
  constructor(private readonly redis: RedisClient, private readonly keys: KeySchema) {}

  private scriptKeys(k: LeaseKey): string[] {
    return leaseScriptKeys(this.keys, k);
  }

  /**
   * Takes a slot of both limits and the event's claim atomically, or none. `leaseMs` bounds how
   * long they are held if their holder dies. A refused delivery is parked (at `parkOrder`, its
   * createdAt) to be woken by {@link release}.
   */
  async acquire(input: LeaseKey & { perEndpoint: number; perOrg: number; nowMs: number; leaseMs: number; parkOrder: number }): Promise<AcquireResult> {
    const r = await acquireScript.run(this.redis, [...this.scriptKeys(input), this.keys.endpoint(input.orgId, input.endpointId)], [
      input.deliveryId,
      input.nowMs,
      input.nowMs + input.leaseMs,
      input.perEndpoint,
      input.perOrg,
      input.parkOrder,
      input.leaseMs,
    ]);
    return r === 1 ? 'acquired' : r === 0 ? 'endpoint_full' : r === -1 ? 'org_full' : 'event_claimed';
  }

  /**
   * Gives a slot (and the event's claim) back, and takes off their parked sets the deliveries that
   * may use the room now: the caller wakes them. `perEndpoint`/`perOrg` are the limits the slot
   * was taken under (0 to wake none). `released` is false when the delivery held no slot.
   */
  async release(input: LeaseKey & { perEndpoint: number; perOrg: number; nowMs: number }): Promise<{ released: boolean; woken: string[] }> {
    const [released, ...woken] = (await releaseScript.run(this.redis, this.scriptKeys(input), [
      input.deliveryId,
      input.nowMs,
      input.perEndpoint,
      input.perOrg,
    ])) as [number, ...string[]];
    return { released: released === 1, woken };
  }

  /**
   * Applies a policy change to the endpoint's waiting deliveries (`planPolicyChange`): calls the
   * first of its line as the new limits (`perEndpoint`, `perOrg`) leave room for; with
   * `releaseKeyLines` also every delivery waiting for its ordering key (at most
   * {@link RECALL_KEY_LINE_MAX}); with `resetRate` drops the rate limiter's state and the stored
   * adaptive pace. Returns the delivery ids whose jobs the caller must wake.
   */
  async recall(input: { orgId: string; endpointId: string; perEndpoint: number; perOrg: number; nowMs: number; releaseKeyLines: boolean; resetRate: boolean }): Promise<string[]> {
    const k = this.keys;
    const keys = [
      k.endpointLeases(input.orgId, input.endpointId),
      k.orgLeases(input.orgId),
      k.endpointParked(input.orgId, input.endpointId),
      k.orgParked(input.orgId),
      k.endpointKeyLines(input.orgId, input.endpointId),
      k.endpointRate(input.orgId, input.endpointId),
      k.endpoint(input.orgId, input.endpointId),
    ];
    const args = [input.nowMs, input.perEndpoint, input.perOrg, input.releaseKeyLines ? '1' : '', input.resetRate ? '1' : '', RECALL_KEY_LINE_MAX];
    return ((await recallScript.run(this.redis, keys, args)) as unknown[]).map(String);
  }

  /**
   * Calls an endpoint's line again without giving back a slot: takes the parked deliveries that
   * the free slots of both limits let in, as a release does, for the caller to wake. For a sender
   * that died between a release and its wake-ups (its takeover).
   */
  async callLine(input: { orgId: string; endpointId: string; perEndpoint: number; perOrg: number; nowMs: number }): Promise<string[]> {
    return this.recall({ ...input, releaseKeyLines: false, resetRate: false });
  }

  /**
   * Whether the delivery still waits in a parked set. A refused delivery that is no longer parked
   * once its job is delayed — or is called in the endpoint's line (`lease.lua`: its score lowered by
   * {@link CALLED_OFFSET}) — was woken while it was being parked, and must wake itself.
   */
  async isParked(k: LeaseKey): Promise<boolean> {
    const [endpoint, org, claim] = assertExec(
      await this.redis
        .pipeline()
        .zscore(this.keys.endpointParked(k.orgId, k.endpointId), k.deliveryId)
        .zscore(this.keys.orgParked(k.orgId), k.deliveryId)
        .sismember(this.keys.eventClaimWaiters(k.orgId, k.endpointId, k.eventId), k.deliveryId)
        .exec(),
    ).map(([, value]) => value);
    const waitsInLine = endpoint !== null && Number(endpoint) > -CALLED_OFFSET / 2;
    return waitsInLine || org !== null || claim === 1;
  }

  /**
   * Whether a delivery waiting for its ordering key (its entry `keyLine` in the endpoint's key
   * lines) still has an earlier delivery of the key before it. One that no longer has was let go
   * while it was being parked, and must wake itself.
   */
  async waitsForItsKey(k: Pick<LeaseKey, 'orgId' | 'endpointId'>, keyLine: string): Promise<boolean> {
    const keyHash = keyLine.slice(0, 32);
    const [first] = await this.redis.zrangebylex(this.keys.endpointKeyLines(k.orgId, k.endpointId), `[${keyHash}|`, `(${keyHash}}`, 'LIMIT', 0, 1);
    return first !== undefined && first !== keyLine;
  }

  /** Attempts in flight to an endpoint right now (expired leases excluded). */
  async inFlight(orgId: string, endpointId: string, nowMs: number): Promise<number> {
    return this.redis.zcount(this.keys.endpointLeases(orgId, endpointId), `(${nowMs}`, '+inf');
  }
}

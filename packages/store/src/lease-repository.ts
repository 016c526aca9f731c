import type { Redis } from 'ioredis';
import type { KeySchema } from './keys.js';
import { LuaScript } from './lua-script.js';

const acquireScript = LuaScript.load('acquire-lease');
const releaseScript = LuaScript.load('release-lease');

/** Result of {@link LeaseRepository.acquire}. */
export type AcquireResult = 'acquired' | 'endpoint_full' | 'org_full';

/**
 * Concurrency limits that hold across every sender process (seed 001: 4 per endpoint, 20 per
 * org): leases in Redis sorted sets scored by expiry, so a crashed holder's slot comes back by
 * itself. A refused delivery is parked and woken when a slot frees.
 */
export class LeaseRepository {
  constructor(private readonly redis: Redis, private readonly keys: KeySchema) {}

  /**
   * Takes a slot of both limits atomically, or none. `leaseMs` bounds how long a slot is held if
   * its holder dies. With `park`, a refused delivery is queued to be woken on release.
   */
  async acquire(input: { deliveryId: string; endpointId: string; orgId: string; perEndpoint: number; perOrg: number; nowMs: number; leaseMs: number; park: boolean }): Promise<AcquireResult> {
    const r = await acquireScript.run(
      this.redis,
      [this.keys.endpointLeases(input.endpointId), this.keys.orgLeases(input.orgId), this.keys.endpointParked(input.endpointId), this.keys.orgParked(input.orgId)],
      [input.deliveryId, input.nowMs, input.nowMs + input.leaseMs, input.perEndpoint, input.perOrg, input.park ? '1' : '0'],
    );
    return r === 1 ? 'acquired' : r === 0 ? 'endpoint_full' : 'org_full';
  }

  /** Gives a slot back. Returns false when the delivery held none (already released, or expired). */
  async release(input: { deliveryId: string; endpointId: string; orgId: string }): Promise<boolean> {
    const r = await releaseScript.run(this.redis, [this.keys.endpointLeases(input.endpointId), this.keys.orgLeases(input.orgId)], [input.deliveryId]);
    return r === 1;
  }

  /**
   * Takes the oldest delivery id parked on the endpoint's (or org's) limit, or null. An id may be
   * stale (its job moved on by itself); the caller then takes the next.
   */
  async popParked(scope: { endpointId: string } | { orgId: string }): Promise<string | null> {
    const key = 'endpointId' in scope ? this.keys.endpointParked(scope.endpointId) : this.keys.orgParked(scope.orgId);
    return this.redis.lpop(key);
  }

  /** Whether a slot of both limits is free right now (expired leases excluded); takes nothing. */
  async hasRoom(input: { endpointId: string; orgId: string; perEndpoint: number; perOrg: number; nowMs: number }): Promise<boolean> {
    const [endpointCount, orgCount] = await Promise.all([
      this.redis.zcount(this.keys.endpointLeases(input.endpointId), `(${input.nowMs}`, '+inf'),
      this.redis.zcount(this.keys.orgLeases(input.orgId), `(${input.nowMs}`, '+inf'),
    ]);
    return endpointCount < input.perEndpoint && orgCount < input.perOrg;
  }

  /** Attempts in flight to an endpoint right now (expired leases excluded). */
  async inFlight(endpointId: string, nowMs: number): Promise<number> {
    return this.redis.zcount(this.keys.endpointLeases(endpointId), `(${nowMs}`, '+inf');
  }
}

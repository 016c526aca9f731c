import type { Redis } from 'ioredis';
import type { KeySchema } from './keys.js';
import { LuaScript } from './lua-script.js';
import { assertExec } from './org-repository.js';
import { parseEndpoint, toHashFields, type EndpointRecord } from './records.js';

const updateEndpointScript = LuaScript.load('update-endpoint');

/** Fields of an endpoint that the API may change. */
export type EndpointPatch = Partial<
  Pick<EndpointRecord, 'url' | 'description' | 'eventTypes' | 'policy' | 'policyName' | 'status' | 'secrets' | 'disabledAt' | 'disabledReason' | 'consecutiveFailures' | 'failureStreakStartedAt'>
>;

/**
 * Endpoints of orgs, with their health counters (updated by the sender's Lua scripts). Every
 * change here that decides where events go (create, update, delete) bumps the org's version in
 * the same step.
 */
export class EndpointRepository {
  constructor(private readonly redis: Redis, private readonly keys: KeySchema) {}

  /** Stores a new endpoint and indexes it under its org. */
  async create(endpoint: EndpointRecord): Promise<void> {
    await this.redis
      .multi()
      .hset(this.keys.endpoint(endpoint.id), ...toHashFields(endpoint))
      .zadd(this.keys.orgEndpoints(endpoint.orgId), 0, endpoint.id)
      .zadd(this.keys.allEndpoints(), 0, endpoint.id)
      .incr(this.keys.orgVersion(endpoint.orgId))
      .exec()
      .then(assertExec);
  }

  /** The endpoint, or null when there is none (or it was deleted). */
  async get(endpointId: string): Promise<EndpointRecord | null> {
    return parseEndpoint(await this.redis.hgetall(this.keys.endpoint(endpointId)));
  }

  /**
   * A page of the org's endpoints, oldest first. `cursor` is the last id of the previous page.
   * `limit` 1..100.
   */
  async list(orgId: string, opts: { limit: number; cursor?: string }): Promise<{ items: EndpointRecord[]; nextCursor: string | null }> {
    const min = opts.cursor ? `(${opts.cursor}` : '-';
    const ids = await this.redis.zrangebylex(this.keys.orgEndpoints(orgId), min, '+', 'LIMIT', 0, opts.limit + 1);
    const page = ids.slice(0, opts.limit);
    const items = await this.getMany(page);
    return { items, nextCursor: ids.length > opts.limit ? (page[page.length - 1] ?? null) : null };
  }

  /** Every endpoint of the org (for fan-out). */
  async listAll(orgId: string): Promise<EndpointRecord[]> {
    const ids = await this.redis.zrange(this.keys.orgEndpoints(orgId), 0, -1);
    return this.getMany(ids);
  }

  private async getMany(ids: string[]): Promise<EndpointRecord[]> {
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(this.keys.endpoint(id));
    const results = assertExec(await pipeline.exec());
    return results.map(([, h]) => parseEndpoint(h as Record<string, string>)).filter((e): e is EndpointRecord => e !== null);
  }

  /**
   * A page of every endpoint id of the instance (all orgs), in id order, after `cursor`; for
   * background sweeps.
   */
  async listAllIds(opts: { limit: number; cursor?: string }): Promise<string[]> {
    return this.redis.zrangebylex(this.keys.allEndpoints(), opts.cursor ? `(${opts.cursor}` : '-', '+', 'LIMIT', 0, opts.limit);
  }

  /**
   * Applies a patch and bumps the org's version; returns the updated endpoint, or null when it
   * does not exist. Given only an id, the endpoint's org is read first (one more round trip).
   */
  async update(endpoint: string | Pick<EndpointRecord, 'id' | 'orgId'>, patch: EndpointPatch, nowMs: number): Promise<EndpointRecord | null> {
    const id = typeof endpoint === 'string' ? endpoint : endpoint.id;
    const orgId = typeof endpoint === 'string' ? await this.redis.hget(this.keys.endpoint(id), 'orgId') : endpoint.orgId;
    if (!orgId) return null;
    const updated = await updateEndpointScript.run(this.redis, [this.keys.endpoint(id), this.keys.orgVersion(orgId)], toHashFields({ ...patch, updatedAt: nowMs }));
    return updated === 1 ? this.get(id) : null;
  }

  /**
   * Deletes the endpoint. Its deliveries stay in the log; queued ones are cancelled with
   * `endpoint_deleted` by the sender before their next attempt.
   */
  async delete(endpoint: Pick<EndpointRecord, 'id' | 'orgId'>): Promise<boolean> {
    const results = assertExec(
      await this.redis
        .multi()
        .del(this.keys.endpoint(endpoint.id))
        .zrem(this.keys.orgEndpoints(endpoint.orgId), endpoint.id)
        .zrem(this.keys.allEndpoints(), endpoint.id)
        .zadd(this.keys.deletedEndpoints(), 0, endpoint.id)
        .incr(this.keys.orgVersion(endpoint.orgId))
        .exec(),
    );
    return results[0]?.[1] === 1;
  }

  /** A page of deleted endpoints whose log still awaits expiry, in id order, after `cursor`. */
  async listDeletedIds(opts: { limit: number; cursor?: string }): Promise<string[]> {
    return this.redis.zrangebylex(this.keys.deletedEndpoints(), opts.cursor ? `(${opts.cursor}` : '-', '+', 'LIMIT', 0, opts.limit);
  }

  /**
   * Forgets a deleted endpoint once its delivery log is empty: drops it from the deleted list and
   * removes its leftover bookkeeping keys. Returns false (and changes nothing) while rows remain.
   */
  async forgetDeletedIfEmpty(endpointId: string): Promise<boolean> {
    if ((await this.redis.zcard(this.keys.endpointDeliveries(endpointId))) > 0) return false;
    await this.redis
      .multi()
      .zrem(this.keys.deletedEndpoints(), endpointId)
      .del(this.keys.endpointHeld(endpointId), this.keys.endpointBulkRedelivered(endpointId), this.keys.endpointLeases(endpointId), this.keys.endpointParked(endpointId))
      .exec()
      .then(assertExec);
    return true;
  }
}

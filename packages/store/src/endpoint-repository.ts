import type { Pace, SecretBox } from '@postern/shared';
import type { RedisClient } from './redis-connection.js';
import type { KeySchema } from './keys.js';
import { LuaScript } from './lua-script.js';
import { assertExec } from './org-repository.js';
import { parseEndpoint, parsePace, toHashFields, type EndpointRecord } from './records.js';
import { openSealedField, replaceFieldIfUnchanged, sealField } from './sealed-fields.js';
import { endpointLogSize } from './endpoint-log.js';
import { encodeRequestSecrets } from './request-secrets.js';
import { queueOrgGate } from './claim-marks.js';

/** An endpoint's fields as stored: its request secrets through the sealing seam (`request-secrets.ts`). */
function endpointHashFields(fields: Partial<EndpointRecord>, box: SecretBox, orgId: string, endpointId: string): string[] {
  const { requestSecrets, secrets, ...rest } = fields;
  return [
    ...toHashFields(rest),
    ...(secrets !== undefined ? ['secrets', sealField(box, JSON.stringify(secrets), orgId, endpointId, 'secrets')] : []),
    ...(requestSecrets !== undefined ? ['requestSecrets', encodeRequestSecrets(requestSecrets, box, orgId, endpointId)] : []),
  ];
}

const updateEndpointScript = LuaScript.load('update-endpoint');
const setPaceScript = LuaScript.load('set-pace');

/** Fields of an endpoint that the API may change. */
export type EndpointPatch = Partial<
  Pick<EndpointRecord, 'url' | 'description' | 'eventTypes' | 'policy' | 'policyName' | 'status' | 'secrets' | 'disabledAt' | 'disabledReason' | 'consecutiveFailures' | 'failureStreakStartedAt' | 'request' | 'requestSecrets' | 'transformation' | 'lastTransformationVersion'>
>;

/**
 * Endpoints of orgs, with their health counters (updated by the sender's Lua scripts). Every
 * change here that decides where events go (create, update, delete) bumps the org's version in
 * the same step.
 */
export class EndpointRepository {
  constructor(private readonly redis: RedisClient, private readonly keys: KeySchema, private readonly box: SecretBox) {}

  /**
   * Sets the endpoint's adaptive pace to `next` (null = none: back at the policy's limits) only if
   * the stored pace is still `from` (compared by value): a compare and set, for a slow-down computed
   * again after the finish found the pace changed. Returns undefined when set (or the endpoint is
   * gone), else the pace stored now (null = none), to compute from again.
   */
  async setPace(orgId: string, endpointId: string, from: Pace | null, next: Pace | null): Promise<Pace | null | undefined> {
    const r = String(await setPaceScript.run(this.redis, [this.keys.endpoint(orgId, endpointId)], [from ? JSON.stringify(from) : '', next ? JSON.stringify(next) : '-']));
    if (r === '') return undefined;
    return r === '-' ? null : parsePace(r);
  }

  /**
   * Stores a new endpoint and indexes it under its org; in the same transaction it takes the org's
   * gate (`orgGate`, claim-marks.ts) when the org is suspended or has attempt settings, so the
   * claim of its first delivery reads them.
   */
  async create(endpoint: EndpointRecord): Promise<void> {
    const multi = this.redis
      .multi()
      .hset(this.keys.endpoint(endpoint.orgId, endpoint.id), ...endpointHashFields(endpoint, this.box, endpoint.orgId, endpoint.id))
      .zadd(this.keys.orgEndpoints(endpoint.orgId), 0, endpoint.id)
      .incr(this.keys.orgVersion(endpoint.orgId));
    queueOrgGate(multi, this.keys, endpoint.orgId, [endpoint.id]);
    await multi.exec().then(assertExec);
  }

  /** The org's endpoint, or null when there is none (or it was deleted). */
  async get(orgId: string, endpointId: string): Promise<EndpointRecord | null> {
    return parseEndpoint(await this.redis.hgetall(this.keys.endpoint(orgId, endpointId)), this.box);
  }

  /**
   * A page of the org's endpoints, oldest first. `cursor` is the last id of the previous page.
   * `limit` 1..100.
   */
  async list(orgId: string, opts: { limit: number; cursor?: string }): Promise<{ items: EndpointRecord[]; nextCursor: string | null }> {
    const min = opts.cursor ? `(${opts.cursor}` : '-';
    const ids = await this.redis.zrangebylex(this.keys.orgEndpoints(orgId), min, '+', 'LIMIT', 0, opts.limit + 1);
    const page = ids.slice(0, opts.limit);
    const items = await this.getMany(orgId, page);
    return { items, nextCursor: ids.length > opts.limit ? (page[page.length - 1] ?? null) : null };
  }

  /** How many endpoints the org has (deleted ones not counted). */
  async count(orgId: string): Promise<number> {
    return this.redis.zcard(this.keys.orgEndpoints(orgId));
  }

  /** Every endpoint of the org (for fan-out). */
  async listAll(orgId: string): Promise<EndpointRecord[]> {
    const ids = await this.redis.zrange(this.keys.orgEndpoints(orgId), 0, -1);
    return this.getMany(orgId, ids);
  }

  private async getMany(orgId: string, ids: string[]): Promise<EndpointRecord[]> {
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(this.keys.endpoint(orgId, id));
    const results = assertExec(await pipeline.exec());
    return results.map(([, h]) => parseEndpoint(h as Record<string, string>, this.box)).filter((e): e is EndpointRecord => e !== null);
  }

  /** A page of the org's endpoint ids, in id order, after `cursor`; for background sweeps. */
  async listIds(orgId: string, opts: { limit: number; cursor?: string }): Promise<string[]> {
    return this.redis.zrangebylex(this.keys.orgEndpoints(orgId), opts.cursor ? `(${opts.cursor}` : '-', '+', 'LIMIT', 0, opts.limit);
  }

  /**
   * Applies a patch and bumps the org's version; returns the updated endpoint, or null when it
   * does not exist.
   */
  async update(endpoint: Pick<EndpointRecord, 'id' | 'orgId'>, patch: EndpointPatch, nowMs: number): Promise<EndpointRecord | null> {
    const { id, orgId } = endpoint;
    const fields = endpointHashFields({ ...patch, updatedAt: nowMs }, this.box, orgId, id);
    const updated = await updateEndpointScript.run(this.redis, [this.keys.endpoint(orgId, id), this.keys.orgVersion(orgId)], fields);
    return updated === 1 ? this.get(orgId, id) : null;
  }

  /**
   * Deletes the endpoint's rotated-out signing secrets whose grace ended by `nowMs` (the janitor
   * calls it; a rotation drops them too): a compare-and-set of the stored value, so a rotation in
   * between is never overwritten (it is then left for the next sweep). Returns how many were
   * dropped (0 when none had expired, the value does not open, or it changed meanwhile).
   */
  async dropExpiredSecrets(orgId: string, endpointId: string, nowMs: number): Promise<number> {
    const key = this.keys.endpoint(orgId, endpointId);
    const stored = await this.redis.hget(key, 'secrets');
    const plain = stored === null ? null : openSealedField(this.box, stored, orgId, endpointId, 'secrets');
    if (stored === null || plain === null) return 0;
    let secrets: EndpointRecord['secrets'];
    try {
      secrets = JSON.parse(plain) as EndpointRecord['secrets'];
    } catch {
      return 0;
    }
    if (!Array.isArray(secrets)) return 0;
    const kept = secrets.filter((s) => s.expiresAt === null || s.expiresAt > nowMs);
    if (kept.length === secrets.length) return 0;
    const next = sealField(this.box, JSON.stringify(kept), orgId, endpointId, 'secrets');
    return (await replaceFieldIfUnchanged(this.redis, key, 'secrets', stored, next)) ? secrets.length - kept.length : 0;
  }

  /**
   * Deletes the endpoint. Its deliveries stay in the log; queued ones are cancelled with
   * `endpoint_deleted` by the sender before their next attempt.
   */
  async delete(endpoint: Pick<EndpointRecord, 'id' | 'orgId'>): Promise<boolean> {
    const results = assertExec(
      await this.redis
        .multi()
        .del(this.keys.endpoint(endpoint.orgId, endpoint.id))
        .zrem(this.keys.orgEndpoints(endpoint.orgId), endpoint.id)
        .zadd(this.keys.deletedEndpoints(endpoint.orgId), 0, endpoint.id)
        .incr(this.keys.orgVersion(endpoint.orgId))
        .exec(),
    );
    return results[0]?.[1] === 1;
  }

  /**
   * Whether `endpointId` is a deleted endpoint of the org whose delivery log is still kept (it is
   * forgotten once the log is empty: {@link forgetDeletedIfEmpty}).
   */
  async isDeleted(orgId: string, endpointId: string): Promise<boolean> {
    return (await this.redis.zscore(this.keys.deletedEndpoints(orgId), endpointId)) !== null;
  }

  /** A page of the org's deleted endpoints whose log still awaits expiry, in id order, after `cursor`. */
  async listDeletedIds(orgId: string, opts: { limit: number; cursor?: string }): Promise<string[]> {
    return this.redis.zrangebylex(this.keys.deletedEndpoints(orgId), opts.cursor ? `(${opts.cursor}` : '-', '+', 'LIMIT', 0, opts.limit);
  }

  /**
   * Forgets a deleted endpoint once its delivery log is empty: drops it from the deleted list and
   * removes its leftover bookkeeping keys. Returns false (and changes nothing) while rows remain.
   */
  async forgetDeletedIfEmpty(orgId: string, endpointId: string): Promise<boolean> {
    const k = this.keys;
    if ((await endpointLogSize(this.redis, k, orgId, endpointId)) > 0) return false;
    await this.redis
      .multi()
      .zrem(k.deletedEndpoints(orgId), endpointId)
      .del(k.endpointHeld(orgId, endpointId), k.endpointBulkRedelivered(orgId, endpointId), k.endpointLeases(orgId, endpointId), k.endpointParked(orgId, endpointId), k.endpointKeyLines(orgId, endpointId), k.endpointRate(orgId, endpointId), k.endpointOauthToken(orgId, endpointId), k.endpointOauthLock(orgId, endpointId))
      .exec()
      .then(assertExec);
    return true;
  }
}

import type { RedisClient } from './redis-connection.js';
import type { KeySchema } from './keys.js';
import { parseOrg, toHashFields, type OrgRecord } from './records.js';

/** Orgs and their API keys (stored as SHA-256 hex of the key, never the key itself). */
export class OrgRepository {
  constructor(private readonly redis: RedisClient, private readonly keys: KeySchema) {}

  /**
   * Writes an org, adds it to the index of orgs, then its first API key hash: three single-slot
   * steps in this order, so a key never resolves to an org that is not written yet.
   */
  async create(org: OrgRecord, apiKeyHash: string): Promise<void> {
    await this.redis.hset(this.keys.org(org.id), ...toHashFields(org));
    await this.redis.zadd(this.keys.orgs(), 0, org.id);
    await this.redis.set(this.keys.apiKey(apiKeyHash), org.id);
  }

  /** A page of every org id of the instance, in id order, after `cursor`; for background sweeps. */
  async listIds(opts: { limit: number; cursor?: string }): Promise<string[]> {
    return this.redis.zrangebylex(this.keys.orgs(), opts.cursor ? `(${opts.cursor}` : '-', '+', 'LIMIT', 0, opts.limit);
  }

  /** The org, or null when there is none. */
  async get(orgId: string): Promise<OrgRecord | null> {
    return parseOrg(await this.redis.hgetall(this.keys.org(orgId)));
  }

  /** The org id an API key hash belongs to, or null. */
  async orgIdForApiKey(apiKeyHash: string): Promise<string | null> {
    return this.redis.get(this.keys.apiKey(apiKeyHash));
  }

  /**
   * Sets an org's status (`suspended` stops every delivery of the org before its next attempt) and
   * bumps the org's version in the same transaction, so ingest's next request of the org sees it.
   */
  async setStatus(orgId: string, status: OrgRecord['status']): Promise<void> {
    await this.redis.multi().hset(this.keys.org(orgId), 'status', status).incr(this.keys.orgVersion(orgId)).exec().then(assertExec);
  }
}

/** Throws the first error a MULTI/EXEC reported (ioredis resolves with per-command errors). */
export function assertExec(results: [Error | null, unknown][] | null): [Error | null, unknown][] {
  if (!results) throw new Error('transaction aborted');
  for (const [err] of results) if (err) throw err;
  return results;
}

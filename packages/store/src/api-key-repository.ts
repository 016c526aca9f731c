import type { RedisClient } from './redis-connection.js';
import type { KeySchema } from './keys.js';
import { LuaScript } from './lua-script.js';
import { assertExec } from './org-repository.js';
import { parseApiKey, toHashFields, type ApiKeyRecord } from './records.js';

const adoptApiKeyScript = LuaScript.load('adopt-api-key');

/** What a presented API key resolves to. `key` is null only for a key whose record is being adopted. */
export interface ApiKeyMatch {
  orgId: string;
  key: ApiKeyRecord | null;
}

/**
 * API keys as records (`key_…`), found by the SHA-256 of the key. The org-id lookup
 * (`apikey:<hash>`) of keys made before scopes still works: such a key has no record until
 * {@link ApiKeyRepository.adopt} gives it one on first use.
 */
export class ApiKeyRepository {
  constructor(private readonly redis: RedisClient, private readonly keys: KeySchema) {}

  /**
   * Writes a new key's record (org slot, one transaction), then both lookups (the key hash's
   * slot, one `MSET`): a key authenticates only once its record exists.
   */
  async create(key: ApiKeyRecord): Promise<void> {
    await this.redis
      .multi()
      .hset(this.keys.apiKeyRecord(key.orgId, key.id), ...toHashFields(key))
      .zadd(this.keys.orgApiKeys(key.orgId), 0, key.id)
      .exec()
      .then(assertExec);
    await this.redis.mset(this.keys.apiKey(key.keyHash), key.orgId, this.keys.apiKeyIdByHash(key.keyHash), key.id);
  }

  /**
   * Gives a key that authenticates through the org-id lookup alone its record, once; concurrent
   * calls agree on one. Returns the record on file, or null when the key stopped belonging to
   * `key.orgId` (revoked) meanwhile. The candidate record is written first (org slot); a call that
   * loses the race, or finds the key revoked, removes its candidate again.
   */
  async adopt(key: ApiKeyRecord): Promise<ApiKeyRecord | null> {
    const recordKey = this.keys.apiKeyRecord(key.orgId, key.id);
    await this.redis.multi().hset(recordKey, ...toHashFields(key)).zadd(this.keys.orgApiKeys(key.orgId), 0, key.id).exec().then(assertExec);
    const id = (await adoptApiKeyScript.run(this.redis, [this.keys.apiKey(key.keyHash), this.keys.apiKeyIdByHash(key.keyHash)], [key.orgId, key.id])) as string | null;
    if (id !== key.id) await this.redis.multi().del(recordKey).zrem(this.keys.orgApiKeys(key.orgId), key.id).exec().then(assertExec);
    if (!id) return null;
    return id === key.id ? key : this.get(key.orgId, id);
  }

  /**
   * Resolves a key by its SHA-256 (hex): null when unknown or revoked; `key: null` when it predates
   * records (adopt it).
   */
  async authenticate(keyHash: string): Promise<ApiKeyMatch | null> {
    const [orgId, keyId] = await this.redis.mget(this.keys.apiKey(keyHash), this.keys.apiKeyIdByHash(keyHash));
    if (!orgId) return null;
    if (!keyId) return { orgId, key: null };
    const key = await this.get(orgId, keyId);
    if (!key || key.revokedAt !== null || key.orgId !== orgId) return null;
    return { orgId, key };
  }

  /** The org's key record, or null. */
  async get(orgId: string, keyId: string): Promise<ApiKeyRecord | null> {
    return parseApiKey(await this.redis.hgetall(this.keys.apiKeyRecord(orgId, keyId)));
  }

  /** A page of the org's keys, revoked ones included, newest first; `cursor` is the last id of the previous page. */
  async list(orgId: string, opts: { limit: number; cursor?: string }): Promise<{ items: ApiKeyRecord[]; nextCursor: string | null }> {
    const max = opts.cursor ? `(${opts.cursor}` : '+';
    const ids = await this.redis.zrevrangebylex(this.keys.orgApiKeys(orgId), max, '-', 'LIMIT', 0, opts.limit + 1);
    const page = ids.slice(0, opts.limit);
    if (page.length === 0) return { items: [], nextCursor: null };
    const pipeline = this.redis.pipeline();
    for (const id of page) pipeline.hgetall(this.keys.apiKeyRecord(orgId, id));
    const items = assertExec(await pipeline.exec())
      .map(([, h]) => parseApiKey(h as Record<string, string>))
      .filter((k): k is ApiKeyRecord => k !== null);
    return { items, nextCursor: ids.length > opts.limit ? (page[page.length - 1] ?? null) : null };
  }

  /**
   * Revokes a key: marks the record and bumps the org's version in one transaction (org slot), so
   * the next request with the key is refused (ingest's lookup cache included: a revoked record is
   * refused even while a lookup remains), then removes both lookups (the key hash's slot).
   * Returns the record as revoked; revoking twice keeps the first time.
   */
  async revoke(key: ApiKeyRecord, nowMs: number): Promise<ApiKeyRecord> {
    const revokedAt = key.revokedAt ?? nowMs;
    await this.redis
      .multi()
      .hset(this.keys.apiKeyRecord(key.orgId, key.id), 'revokedAt', revokedAt)
      .incr(this.keys.orgVersion(key.orgId))
      .exec()
      .then(assertExec);
    await this.redis.del(this.keys.apiKey(key.keyHash), this.keys.apiKeyIdByHash(key.keyHash));
    return { ...key, revokedAt };
  }
}

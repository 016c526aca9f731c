import type { ApiKeyScope } from '@postern/shared';
import type { RedisClient } from './redis-connection.js';
import type { KeySchema } from './keys.js';
import { assertExec } from './org-repository.js';
import { parseApiKey, toHashFields } from './records.js';

/**
 * A platform key (`pfk_…`): one credential, made with the admin token, that acts for any org a
 * request names (`Postern-Org`), within its scopes (the API keys' vocabulary). Stored without the
 * key itself: `keyHash` is its SHA-256 (hex).
 */
export interface PlatformKeyRecord {
  id: string;
  name: string;
  scopes: ApiKeyScope[];
  /** The 8 characters after `ppk_`, to tell keys apart. */
  prefix: string;
  keyHash: string;
  /** Epoch ms. */
  createdAt: number;
  /** Epoch ms once revoked; a revoked key is refused from then on. */
  revokedAt: number | null;
}

/** Parses a platform key hash; null for an empty one. Unknown scopes are dropped. Same fields as an API key's, without an org. */
function parsePlatformKey(h: Record<string, string>): PlatformKeyRecord | null {
  const key = parseApiKey(h);
  if (!key) return null;
  const { orgId: _noOrg, ...platformKey } = key;
  return platformKey;
}

/**
 * Platform keys, found by the SHA-256 of the key. They belong to no org, so their keys share the
 * `{platform}` hash tag of their own ({@link KeySchema.platformKeyRecord}): every transaction here
 * stays in that one slot. Nothing is cached: a revoked key is refused by the very next request.
 */
export class PlatformKeyRepository {
  constructor(private readonly redis: RedisClient, private readonly keys: KeySchema) {}

  /** Writes a new key's record, its index entry and its hash lookup in one transaction. */
  async create(key: PlatformKeyRecord): Promise<void> {
    await this.redis
      .multi()
      .hset(this.keys.platformKeyRecord(key.id), ...toHashFields(key))
      .zadd(this.keys.platformKeys(), 0, key.id)
      .hset(this.keys.platformKeyIdsByHash(), key.keyHash, key.id)
      .exec()
      .then(assertExec);
  }

  /** Resolves a key by its SHA-256 (hex): its record, or null when unknown or revoked. Two round trips. */
  async authenticate(keyHash: string): Promise<PlatformKeyRecord | null> {
    const id = await this.redis.hget(this.keys.platformKeyIdsByHash(), keyHash);
    if (!id) return null;
    const key = await this.get(id);
    return key && key.revokedAt === null && key.keyHash === keyHash ? key : null;
  }

  /** The key's record (revoked or not), or null. */
  async get(id: string): Promise<PlatformKeyRecord | null> {
    return parsePlatformKey(await this.redis.hgetall(this.keys.platformKeyRecord(id)));
  }

  /** A page of platform keys, revoked ones included, newest first; `cursor` is the last id of the previous page. */
  async list(opts: { limit: number; cursor?: string }): Promise<{ items: PlatformKeyRecord[]; nextCursor: string | null }> {
    const max = opts.cursor ? `(${opts.cursor}` : '+';
    const ids = await this.redis.zrevrangebylex(this.keys.platformKeys(), max, '-', 'LIMIT', 0, opts.limit + 1);
    const page = ids.slice(0, opts.limit);
    if (page.length === 0) return { items: [], nextCursor: null };
    const pipeline = this.redis.pipeline();
    for (const id of page) pipeline.hgetall(this.keys.platformKeyRecord(id));
    const items = assertExec(await pipeline.exec())
      .map(([, h]) => parsePlatformKey(h as Record<string, string>))
      .filter((k): k is PlatformKeyRecord => k !== null);
    return { items, nextCursor: ids.length > opts.limit ? (page[page.length - 1] ?? null) : null };
  }

  /**
   * Revokes a key: marks the record and removes its hash lookup in one transaction, so the next
   * request with it is refused. Returns the record as revoked; revoking twice keeps the first time.
   */
  async revoke(key: PlatformKeyRecord, nowMs: number): Promise<PlatformKeyRecord> {
    const revokedAt = key.revokedAt ?? nowMs;
    await this.redis
      .multi()
      .hset(this.keys.platformKeyRecord(key.id), 'revokedAt', revokedAt)
      .hdel(this.keys.platformKeyIdsByHash(), key.keyHash)
      .exec()
      .then(assertExec);
    return { ...key, revokedAt };
  }
}

import type { SecretBox } from '@postern/shared';
import type { RedisClient } from './redis-connection.js';
import type { ApiKeyMatch } from './api-key-repository.js';
import type { KeySchema } from './keys.js';
import { assertExec } from './org-repository.js';
import { parseApiKey, parseEndpoint, parseOrg, type EndpointRecord, type OrgRecord } from './records.js';

/**
 * What one API request of an org may need to know, read no earlier than the org's version it
 * carries: a cache that keeps it while `version` is unchanged never serves anything older than
 * the last change the version counted.
 */
export interface OrgSnapshot {
  /** The org's version ({@link KeySchema.orgVersion}) read before (or with) everything below. */
  version: number;
  /** The org, or null when there is none. */
  org: OrgRecord | null;
  /**
   * The API key as {@link ApiKeyRepository.authenticate} resolves it, or null when it is unknown,
   * revoked or another org's.
   */
  apiKey: ApiKeyMatch | null;
  /** Every endpoint of the org, oldest first, parsed. */
  endpoints: EndpointRecord[];
}

/**
 * Consistent reads of an org, one API key and the org's endpoints for ingest's lookup cache: the
 * version and the lookups are read in one transaction, and whatever a second step reads is no
 * older than that version.
 */
export class OrgSnapshotRepository {
  constructor(private readonly redis: RedisClient, private readonly keys: KeySchema, private readonly box: SecretBox) {}

  /** The org an API key's SHA-256 (hex) belongs to, or null when unknown or revoked. */
  async orgIdOfApiKey(keyHash: string): Promise<string | null> {
    return this.redis.get(this.keys.apiKey(keyHash));
  }

  /** The org's version counter; 0 before its first change. One `GET`. */
  async version(orgId: string): Promise<number> {
    return Number((await this.redis.get(this.keys.orgVersion(orgId))) ?? 0);
  }

  /**
   * Reads the org's version, the org and its endpoint ids in one transaction (the org's slot)
   * while the key's two lookups are read with one `MGET` (the key hash's slot), then the key's
   * record and the endpoints in one pipeline (the org's slot): two round trips. A lookup read
   * alongside the version may be older than it; the record read after it is not, and a revoked
   * record is refused.
   */
  async read(orgId: string, keyHash: string): Promise<OrgSnapshot> {
    const [orgReads, [keyOrgId, keyId]] = await Promise.all([
      this.redis
        .multi()
        .get(this.keys.orgVersion(orgId))
        .hgetall(this.keys.org(orgId))
        .zrange(this.keys.orgEndpoints(orgId), 0, -1)
        .exec(),
      this.redis.mget(this.keys.apiKey(keyHash), this.keys.apiKeyIdByHash(keyHash)),
    ]);
    const [version, orgHash, endpointIds] = assertExec(orgReads).map(([, value]) => value) as [string | null, Record<string, string>, string[]];

    const pipeline = this.redis.pipeline();
    const readsKey = keyOrgId === orgId && keyId != null;
    if (readsKey) pipeline.hgetall(this.keys.apiKeyRecord(orgId, keyId));
    for (const id of endpointIds) pipeline.hgetall(this.keys.endpoint(orgId, id));
    const hashes = pipeline.length > 0 ? assertExec(await pipeline.exec()).map(([, h]) => h as Record<string, string>) : [];

    let apiKey: ApiKeyMatch | null = null;
    if (keyOrgId === orgId) {
      if (!readsKey) apiKey = { orgId, key: null };
      else {
        const key = parseApiKey(hashes[0] ?? {});
        apiKey = key && key.revokedAt === null && key.orgId === orgId ? { orgId, key } : null;
      }
    }
    const endpoints = (readsKey ? hashes.slice(1) : hashes).map((h) => parseEndpoint(h, this.box)).filter((e): e is EndpointRecord => e !== null);
    return { version: Number(version ?? 0), org: parseOrg(orgHash, this.box), apiKey, endpoints };
  }

  /**
   * Reads the org's version, the org and its endpoint ids in one transaction, then the endpoints in
   * one pipeline (both the org's slot): what a request made with a platform key, which names its
   * org, needs. `apiKey` is always null.
   */
  async readOrg(orgId: string): Promise<OrgSnapshot> {
    const orgReads = await this.redis.multi().get(this.keys.orgVersion(orgId)).hgetall(this.keys.org(orgId)).zrange(this.keys.orgEndpoints(orgId), 0, -1).exec();
    const [version, orgHash, endpointIds] = assertExec(orgReads).map(([, value]) => value) as [string | null, Record<string, string>, string[]];
    let endpoints: EndpointRecord[] = [];
    if (endpointIds.length > 0) {
      const pipeline = this.redis.pipeline();
      for (const id of endpointIds) pipeline.hgetall(this.keys.endpoint(orgId, id));
      endpoints = assertExec(await pipeline.exec())
        .map(([, h]) => parseEndpoint(h as Record<string, string>, this.box))
        .filter((e): e is EndpointRecord => e !== null);
    }
    return { version: Number(version ?? 0), org: parseOrg(orgHash, this.box), apiKey: null, endpoints };
  }
}

import type { SecretBox } from '@postern/shared';
import type { KeySchema } from './keys.js';
import { LuaScript } from './lua-script.js';
import type { RedisClient } from './redis-connection.js';
import { decodeSecretValue, encodeSecretValue } from './request-secrets.js';

const releaseScript = LuaScript.load('release-if-holder');
const setFieldIfExistsScript = LuaScript.load('set-field-if-exists');

/** A cached answer of an endpoint's token endpoint: a token, or (briefly) the reason none came. */
export type CachedToken = { token: string } | { failure: string };

/** What {@link OauthTokenRepository.read} found: the cached value and its stored form (for {@link OauthTokenRepository.dropIf}). */
export interface CachedTokenRead {
  value: CachedToken;
  stored: string;
}

/**
 * Each endpoint's OAuth 2.0 token, shared by every sender process: one cached value per endpoint
 * (key `endpointOauthToken`, expiring with the token) and one short lock (`endpointOauthLock`) so
 * one process at a time asks the token endpoint. The cached value goes through the secrets seam
 * (`request-secrets.ts`). When a token was last fetched is kept on the endpoint hash itself
 * (field `oauthTokenFetchedAt`), so reads of the endpoint show it without another key.
 */
export class OauthTokenRepository {
  constructor(private readonly redis: RedisClient, private readonly keys: KeySchema, private readonly box: SecretBox) {}

  /** The cached token (or failure) of the endpoint, or null when none is cached. */
  async read(orgId: string, endpointId: string): Promise<CachedTokenRead | null> {
    const stored = await this.redis.get(this.keys.endpointOauthToken(orgId, endpointId));
    const value = decodeSecretValue<CachedToken>(stored, this.box, orgId, endpointId, 'oauthToken');
    return stored !== null && value ? { value, stored } : null;
  }

  /** Caches `value` for `ttlMs` (≥ 1), replacing what was cached. */
  async write(orgId: string, endpointId: string, value: CachedToken, ttlMs: number): Promise<void> {
    await this.redis.set(this.keys.endpointOauthToken(orgId, endpointId), encodeSecretValue(value, this.box, orgId, endpointId, 'oauthToken'), 'PX', Math.max(1, Math.ceil(ttlMs)));
  }

  /**
   * Drops the cached value only if it is still `stored` (as {@link read} returned it): a token the
   * receiver refused is dropped once, however many attempts saw it refused, and a newer token that
   * another process fetched meanwhile is kept.
   */
  async dropIf(orgId: string, endpointId: string, stored: string): Promise<boolean> {
    return Number(await releaseScript.run(this.redis, [this.keys.endpointOauthToken(orgId, endpointId)], [stored])) === 1;
  }

  /** Takes the endpoint's fetch lock for `holder` for `ttlMs`; false when another holds it. */
  async lock(orgId: string, endpointId: string, holder: string, ttlMs: number): Promise<boolean> {
    return (await this.redis.set(this.keys.endpointOauthLock(orgId, endpointId), holder, 'PX', Math.max(1, Math.ceil(ttlMs)), 'NX')) === 'OK';
  }

  /** Gives the fetch lock back if `holder` still holds it. */
  async unlock(orgId: string, endpointId: string, holder: string): Promise<void> {
    await releaseScript.run(this.redis, [this.keys.endpointOauthLock(orgId, endpointId)], [holder]);
  }

  /**
   * Records that a token was just fetched for the endpoint: field `oauthTokenFetchedAt` (epoch
   * ms) of its hash, one HSET per fetch (never per attempt), and only while the endpoint exists.
   * Returns false when the endpoint is gone.
   */
  async recordFetched(orgId: string, endpointId: string, nowMs: number): Promise<boolean> {
    return Number(await setFieldIfExistsScript.run(this.redis, [this.keys.endpoint(orgId, endpointId)], ['oauthTokenFetchedAt', Math.floor(nowMs)])) === 1;
  }

  /** Whether any process holds the endpoint's fetch lock now. */
  async locked(orgId: string, endpointId: string): Promise<boolean> {
    return (await this.redis.exists(this.keys.endpointOauthLock(orgId, endpointId))) === 1;
  }
}

import type { EventValidationMode, PortalBranding, PortalPolicies, SecretBox } from '@postern/shared';
import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from './redis-connection.js';
import type { KeySchema } from './keys.js';
import { parseOrg, toHashFields, type OrgRecord } from './records.js';
import { sealField } from './sealed-fields.js';
import { queueOrgGate, syncOrgGate } from './claim-marks.js';

/**
 * A change of an org's settings: undefined leaves a field as it is. `disabledEventTypes` [] and
 * `preAttemptCheckUrl` null clear; `portal` is written whole (merge first); `portalPolicies` null
 * goes back to the default.
 */
export interface OrgSettingsPatch {
  disabledEventTypes?: string[];
  preAttemptCheckUrl?: string | null;
  checkSecret?: string;
  eventValidation?: EventValidationMode;
  requireKnownEventTypes?: boolean;
  portal?: PortalBranding;
  portalPolicies?: PortalPolicies | null;
}

/** Orgs and their API keys (stored as SHA-256 hex of the key, never the key itself). */
export class OrgRepository {
  constructor(private readonly redis: RedisClient, private readonly keys: KeySchema, private readonly box: SecretBox) {}

  /**
   * Writes an org, adds it to the index of orgs, then its first API key hash: three single-slot
   * steps in this order, so a key never resolves to an org that is not written yet.
   */
  async create(org: OrgRecord, apiKeyHash: string): Promise<void> {
    const stored = org.preAttemptCheckSecret === undefined ? org : { ...org, preAttemptCheckSecret: sealField(this.box, org.preAttemptCheckSecret, org.id, org.id, 'preAttemptCheckSecret') };
    await this.redis.hset(this.keys.org(org.id), ...toHashFields(stored));
    await this.redis.zadd(this.keys.orgs(), 0, org.id);
    await this.redis.set(this.keys.apiKey(apiKeyHash), org.id);
  }

  /** A page of every org id of the instance, in id order, after `cursor`; for background sweeps. */
  async listIds(opts: { limit: number; cursor?: string }): Promise<string[]> {
    return this.redis.zrangebylex(this.keys.orgs(), opts.cursor ? `(${opts.cursor}` : '-', '+', 'LIMIT', 0, opts.limit);
  }

  /** The org, or null when there is none. */
  async get(orgId: string): Promise<OrgRecord | null> {
    return parseOrg(await this.redis.hgetall(this.keys.org(orgId)), this.box);
  }

  /** The org id an API key hash belongs to, or null. */
  async orgIdForApiKey(apiKeyHash: string): Promise<string | null> {
    return this.redis.get(this.keys.apiKey(apiKeyHash));
  }

  /**
   * Changes an org's settings (issue 16) and bumps the org's version in the same transaction, so
   * ingest's next request of the org fans out with them; the sender's claim reads them with the
   * org's status before every attempt of an org that has any (the org's gate on its endpoints,
   * written in the same transaction). `disabledEventTypes` [] and `preAttemptCheckUrl` null clear
   * the field; undefined leaves it. A check secret is kept once made: `checkSecret` is written only
   * when the org has none (HSETNX), so a racing second PATCH does not replace it.
   */
  async updateSettings(orgId: string, patch: OrgSettingsPatch): Promise<void> {
    const key = this.keys.org(orgId);
    await this.changeAttemptSettings(orgId, (multi) => {
      if (patch.disabledEventTypes !== undefined) {
        if (patch.disabledEventTypes.length === 0) multi.hdel(key, 'disabledEventTypes');
        else multi.hset(key, 'disabledEventTypes', JSON.stringify(patch.disabledEventTypes));
      }
      if (patch.preAttemptCheckUrl === null) multi.hdel(key, 'preAttemptCheckUrl');
      else if (patch.preAttemptCheckUrl !== undefined) multi.hset(key, 'preAttemptCheckUrl', patch.preAttemptCheckUrl);
      if (patch.eventValidation !== undefined) multi.hset(key, 'eventValidation', patch.eventValidation);
      if (patch.requireKnownEventTypes !== undefined) multi.hset(key, 'requireKnownEventTypes', patch.requireKnownEventTypes ? '1' : '0');
      if (patch.portal !== undefined) multi.hset(key, 'portal', JSON.stringify(patch.portal));
      if (patch.portalPolicies === null) multi.hdel(key, 'portalPolicies');
      else if (patch.portalPolicies !== undefined) multi.hset(key, 'portalPolicies', JSON.stringify(patch.portalPolicies));
      if (patch.checkSecret !== undefined) multi.hsetnx(key, 'preAttemptCheckSecret', sealField(this.box, patch.checkSecret, orgId, orgId, 'preAttemptCheckSecret'));
    });
  }

  /**
   * Sets an org's status (`suspended` stops every delivery of the org before its next attempt) and
   * bumps the org's version in the same transaction, so ingest's next request of the org sees it;
   * the org's gate on its endpoints goes with them, so the claim reads the status.
   */
  async setStatus(orgId: string, status: OrgRecord['status']): Promise<void> {
    await this.changeAttemptSettings(orgId, (multi) => multi.hset(this.keys.org(orgId), 'status', status));
  }

  /**
   * Runs `change` (of the org hash) in one transaction with the bump of the org's version and the
   * copy of the org's gate onto every endpoint of the org (`orgGate`, claim-marks.ts): the claim
   * reads the org's status and attempt settings only from an endpoint that carries it. An endpoint
   * created between listing them and the transaction is covered by {@link syncOrgGate} after it.
   */
  private async changeAttemptSettings(orgId: string, change: (multi: ChainableCommander) => void): Promise<void> {
    const endpointIds = await this.redis.zrange(this.keys.orgEndpoints(orgId), 0, -1);
    const multi = this.redis.multi();
    change(multi);
    multi.incr(this.keys.orgVersion(orgId));
    queueOrgGate(multi, this.keys, orgId, endpointIds);
    const results = assertExec(await multi.exec());
    if (Number(results[results.length - 1]?.[1]) > 0) await syncOrgGate(this.redis, this.keys, orgId);
  }
}

/** Throws the first error a MULTI/EXEC reported (ioredis resolves with per-command errors). */
export function assertExec(results: [Error | null, unknown][] | null): [Error | null, unknown][] {
  if (!results) throw new Error('transaction aborted');
  for (const [err] of results) if (err) throw err;
  return results;
}

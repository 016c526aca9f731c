import type { Redis } from 'ioredis';
import { deliveryJobData, deliveryJobOptions } from './delivery-queue.js';
import type { DeliveryJobEntry, DeliveryQueues } from './delivery-queues.js';
import type { KeySchema } from './keys.js';
import { parseDelivery } from './records.js';

/** What {@link migrateKeyLayout} did: keys renamed by kind, jobs queued, old queue keys removed. */
export interface KeyLayoutMigration {
  renamed: Record<string, number>;
  /** Unfinished deliveries given a job on their org's partition. */
  queued: number;
  /** Keys of the old single queue (`<prefix>:q:*`) removed. */
  oldQueueKeysRemoved: number;
  /** Keys left as they were because their org could not be found (their record names none). */
  skipped: string[];
  /**
   * Endpoints' indexes of every delivery (`<o>:endpoint:<ep>:deliveries`) removed: compact records
   * neither write nor read them (the log is the union of the status indexes, which hold the same ids).
   */
  legacyLogIndexesRemoved: number;
}

/** Every key matching `pattern` (SCAN, a page at a time). */
async function scanAll(redis: Redis, pattern: string): Promise<string[]> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    cursor = next;
    out.push(...keys);
  } while (cursor !== '0');
  return out;
}

/**
 * One-shot migration of data written by a Postern before the org-tagged key layout (README,
 * "Migrating data written by an older Postern"), on the standalone Redis that release used, with
 * every Postern process stopped. Renames each record to its key in `keys` (RENAME keeps expiries),
 * rebuilds the per-org index of deleted endpoints and the index of orgs, queues a job for every
 * unfinished delivery (as the old release's one index of them names) on its org's partition (held
 * ones of an inactive endpoint excepted, as the reconciler does), and removes the old single queue
 * and that index (the reconciler now finds unfinished deliveries in their endpoints' indexes); also
 * removes the endpoints' indexes of every delivery that compact records no longer use. Safe to
 * run twice: the second run finds no key of the old layout.
 *
 * @param redis - a standalone connection (RENAME across hash slots needs one node)
 */
export async function migrateKeyLayout(redis: Redis, keys: KeySchema, queues: DeliveryQueues): Promise<KeyLayoutMigration> {
  const p = keys.prefix;
  const renamed: Record<string, number> = {};
  const skipped: string[] = [];
  const move = async (kind: string, from: string, to: string) => {
    if (from === to) return;
    await redis.rename(from, to);
    renamed[kind] = (renamed[kind] ?? 0) + 1;
  };
  const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const P = esc(p);

  // Orgs and what is named by the org id.
  const orgs = new Set<string>();
  for (const key of await scanAll(redis, `${p}:org:*`)) {
    const m = new RegExp(`^${P}:org:(org_[^:]+)(?::(version|apikeys|endpoints|notifications|leases|parked))?$`).exec(key);
    if (!m) continue;
    const orgId = m[1]!;
    orgs.add(orgId);
    const target = {
      undefined: keys.org(orgId),
      version: keys.orgVersion(orgId),
      apikeys: keys.orgApiKeys(orgId),
      endpoints: keys.orgEndpoints(orgId),
      notifications: keys.orgNotifications(orgId),
      leases: keys.orgLeases(orgId),
      parked: keys.orgParked(orgId),
    }[String(m[2]) as 'undefined'];
    await move('org', key, target);
  }
  for (const orgId of orgs) await redis.zadd(keys.orgs(), 0, orgId);

  // API keys: the lookups by hash, and the records (which name their org).
  for (const key of await scanAll(redis, `${p}:apikey:*`)) await move('apikey', key, keys.apiKey(key.slice(`${p}:apikey:`.length)));
  for (const key of await scanAll(redis, `${p}:apikey-id:*`)) await move('apikey', key, keys.apiKeyIdByHash(key.slice(`${p}:apikey-id:`.length)));
  for (const key of await scanAll(redis, `${p}:key:*`)) {
    const orgId = await redis.hget(key, 'orgId');
    if (!orgId) skipped.push(key);
    else await move('apikey', key, keys.apiKeyRecord(orgId, key.slice(`${p}:key:`.length)));
  }

  // Deliveries first (their records name the org), so a deleted endpoint's org is known too.
  const orgOfEndpoint = new Map<string, string>();
  const orgOfDelivery = new Map<string, string>();
  const deliveryKeys = await scanAll(redis, `${p}:delivery:*`);
  for (const key of deliveryKeys) {
    const m = new RegExp(`^${P}:delivery:(dlv_[^:]+)$`).exec(key);
    if (!m) continue;
    const [orgId, endpointId] = await redis.hmget(key, 'orgId', 'endpointId');
    if (!orgId) {
      skipped.push(key);
      continue;
    }
    if (endpointId) orgOfEndpoint.set(endpointId, orgId);
    orgOfDelivery.set(m[1]!, orgId);
    await move('delivery', key, keys.delivery(orgId, m[1]!));
    if (await redis.exists(`${key}:attempts`)) await move('delivery', `${key}:attempts`, keys.deliveryAttempts(orgId, m[1]!));
  }
  // The old release's one index of unfinished deliveries names those that get a job below; it is
  // removed once they have one (nothing of this release reads it).
  const unfinishedKey = `${p}:deliveries:unfinished`;
  const unfinishedOf = new Map<string, string[]>();
  for (const id of await redis.zrange(unfinishedKey, 0, -1)) {
    const orgId = orgOfDelivery.get(id);
    if (orgId) unfinishedOf.set(orgId, [...(unfinishedOf.get(orgId) ?? []), id]);
  }

  // Endpoints and everything under them (delivery log, leases, parked, claims).
  for (const key of await scanAll(redis, `${p}:endpoint:*`)) {
    const m = new RegExp(`^${P}:endpoint:(ep_[^:]+)(:.*)?$`).exec(key);
    if (!m) continue;
    const endpointId = m[1]!;
    const orgId = orgOfEndpoint.get(endpointId) ?? (await redis.hget(`${p}:endpoint:${endpointId}`, 'orgId'));
    if (!orgId) {
      skipped.push(key);
      continue;
    }
    orgOfEndpoint.set(endpointId, orgId);
    await move('endpoint', key, `${keys.endpoint(orgId, endpointId)}${m[2] ?? ''}`);
  }
  const deletedKey = `${p}:endpoints:deleted`;
  for (const endpointId of await redis.zrange(deletedKey, 0, -1)) {
    const orgId = orgOfEndpoint.get(endpointId);
    if (orgId) await redis.zadd(keys.deletedEndpoints(orgId), 0, endpointId);
  }
  await redis.del(deletedKey, `${p}:endpoints`);

  // Events and notifications name their org.
  for (const [pattern, kind] of [['event', 'evt_'], ['notification', 'ntf_']] as const) {
    for (const key of await scanAll(redis, `${p}:${pattern}:*`)) {
      const m = new RegExp(`^${P}:${pattern}:(${kind}[^:]+)$`).exec(key);
      if (!m) continue;
      const orgId = await redis.hget(key, 'orgId');
      if (!orgId) skipped.push(key);
      else await move(pattern, key, pattern === 'event' ? keys.event(orgId, m[1]!) : keys.notification(orgId, m[1]!));
    }
  }

  // Idempotency answers: the org is in the key.
  for (const key of await scanAll(redis, `${p}:idem:*`)) {
    const [orgId, hash] = key.slice(`${p}:idem:`.length).split(':');
    if (orgId && hash) await move('idempotency', key, keys.idempotency(orgId, hash));
  }
  for (const key of await scanAll(redis, `${p}:action-idem:*`)) {
    const parts = key.slice(`${p}:action-idem:`.length).split(':');
    const orgId = parts[0];
    const hash = parts[parts.length - 1];
    if (orgId && hash && parts.length >= 3) await move('idempotency', key, keys.actionIdempotency(orgId, parts.slice(1, -1).join(':'), hash));
  }

  // The old single queue goes; every unfinished delivery gets a job on its org's partition.
  let oldQueueKeysRemoved = 0;
  for (const key of await scanAll(redis, `${p}:q:*`)) oldQueueKeysRemoved += await redis.unlink(key);
  let queued = 0;
  for (const orgId of orgs) {
    const ids = unfinishedOf.get(orgId) ?? [];
    const jobs: DeliveryJobEntry[] = [];
    const endpointActive = new Map<string, boolean>();
    const now = Date.now();
    for (const id of ids) {
      const d = parseDelivery(await redis.hgetall(keys.delivery(orgId, id)), orgId, id);
      if (!d || d.status === 'succeeded' || d.status === 'failed' || d.status === 'cancelled') continue;
      if (!endpointActive.has(d.endpointId)) {
        // Only its status is needed (its secrets are not read, so no SecretBox either).
        const [endpointId, status] = await redis.hmget(keys.endpoint(orgId, d.endpointId), 'id', 'status');
        endpointActive.set(d.endpointId, endpointId === null || (status ?? 'active') === 'active');
      }
      if (d.held && !endpointActive.get(d.endpointId)) continue;
      jobs.push({ name: 'deliver', data: deliveryJobData(d), opts: deliveryJobOptions(d.id, d.nextAttemptAt ? Math.max(0, d.nextAttemptAt - now) : 0) });
    }
    if (jobs.length > 0) await queues.forOrg(orgId).addBulk(jobs);
    queued += jobs.length;
  }
  await redis.del(unfinishedKey);
  // Compact records: the index of every delivery of an endpoint duplicates its status indexes.
  let legacyLogIndexesRemoved = 0;
  for (const key of await scanAll(redis, `${p}:{o:*}:endpoint:*:deliveries`)) {
    const m = new RegExp(`^${P}:\\{o:(org_[^:}]+)\\}:endpoint:(ep_[^:]+):deliveries$`).exec(key);
    if (m && key === keys.endpointDeliveries(m[1]!, m[2]!)) legacyLogIndexesRemoved += await redis.unlink(key);
  }
  return { renamed, queued, oldQueueKeysRemoved, skipped, legacyLogIndexesRemoved };
}

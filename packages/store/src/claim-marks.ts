import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from './redis-connection.js';
import type { KeySchema } from './keys.js';
import { LuaScript } from './lua-script.js';

const syncOrgGateScript = LuaScript.load('sync-org-gate');

/**
 * The keys of sync-org-gate.lua for these endpoints of the org: the org hash, its endpoints index,
 * each endpoint's hash.
 */
function orgGateKeys(keys: KeySchema, orgId: string, endpointIds: readonly string[]): string[] {
  return [keys.org(orgId), keys.orgEndpoints(orgId), ...endpointIds.map((id) => keys.endpoint(orgId, id))];
}

/**
 * Queues in `multi` (a transaction in the org's slot) the copy of the org's gate onto the given
 * endpoints (`orgGate` on each endpoint hash while the org is suspended, switches event types off
 * or has a pre-attempt check URL: lua/includes/org-gate.lua), after whatever `multi` changes before
 * it. Its reply: how many endpoints of the org were not given (created meanwhile), for
 * {@link syncOrgGate} to cover.
 */
export function queueOrgGate(multi: ChainableCommander, keys: KeySchema, orgId: string, endpointIds: readonly string[]): void {
  syncOrgGateScript.queueIn(multi, orgGateKeys(keys, orgId, endpointIds), []);
}

/**
 * Copies the org's gate (see {@link queueOrgGate}) onto every endpoint of the org: lists them and
 * runs sync-org-gate.lua, and once more when an endpoint was created between the two (one created
 * after the second listing copied the org's settings itself, endpoint-repository.ts). Returns the
 * org's endpoint ids as last listed.
 */
export async function syncOrgGate(redis: RedisClient, keys: KeySchema, orgId: string): Promise<string[]> {
  const ids = await redis.zrange(keys.orgEndpoints(orgId), 0, -1);
  const missing = Number(await syncOrgGateScript.run(redis, orgGateKeys(keys, orgId, ids), []));
  if (missing <= 0) return ids;
  const again = await redis.zrange(keys.orgEndpoints(orgId), 0, -1);
  await syncOrgGateScript.run(redis, orgGateKeys(keys, orgId, again), []);
  return again;
}

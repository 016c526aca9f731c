import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from './redis-connection.js';
import type { KeySchema } from './keys.js';
import { LuaScript } from './lua-script.js';

const syncOrgGateScript = LuaScript.load('sync-org-gate');
const markLinesScript = LuaScript.load('mark-lines');

/** Orgs whose endpoints {@link markEndpointsForClaim} marks at once (one round trip each). */
const ORGS_AT_ONCE = 16;

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

/** What {@link markEndpointsForClaim} did. */
export interface ClaimMarks {
  /** True when an earlier run had marked everything, so nothing was read. */
  done: boolean;
  orgs: number;
  endpoints: number;
  /** Endpoints whose line had members but no `lined` mark (filled by an older Postern). */
  linesMarked: number;
}

/**
 * Brings the two marks the claim reads on each endpoint hash (claim-attempt.lua) onto data written
 * by a Postern before them: the org's gate (`orgGate`, {@link syncOrgGate}) and `lined` on an
 * endpoint whose line has members (lua/includes/lease.lua). Without them the claim would neither
 * read the settings of a suspended org nor look at a line an older sender filled. Idempotent, and
 * writes only what differs; the sender runs it at start, before its workers take a job (one
 * listing and two scripts per org, {@link ORGS_AT_ONCE} orgs at a time), once per deployment: a
 * run that got through every org records it ({@link KeySchema.claimMarksDone}), and later starts
 * read only that (`always` runs it again). Every change made by this version keeps the marks
 * itself: run ingest's new version before the sender's, so no org setting is changed without its
 * gate once the sender has marked (docs/architecture.md, "Org settings before an attempt").
 */
export async function markEndpointsForClaim(redis: RedisClient, keys: KeySchema, opts: { always?: boolean } = {}): Promise<ClaimMarks> {
  const marks: ClaimMarks = { done: false, orgs: 0, endpoints: 0, linesMarked: 0 };
  if (!opts.always && (await redis.get(keys.claimMarksDone())) !== null) return { ...marks, done: true };
  const markOrg = async (orgId: string) => {
    const ids = await syncOrgGate(redis, keys, orgId);
    const lineKeys = ids.flatMap((id) => [keys.endpoint(orgId, id), keys.endpointParked(orgId, id)]);
    const marked = lineKeys.length > 0 ? Number(await markLinesScript.run(redis, lineKeys, [])) : 0;
    marks.orgs += 1;
    marks.endpoints += ids.length;
    marks.linesMarked += marked;
  };
  let cursor: string | undefined;
  for (;;) {
    const page = await redis.zrangebylex(keys.orgs(), cursor ? `(${cursor}` : '-', '+', 'LIMIT', 0, ORGS_AT_ONCE);
    if (page.length === 0) {
      await redis.set(keys.claimMarksDone(), String(Date.now()));
      return marks;
    }
    await Promise.all(page.map(markOrg));
    cursor = page[page.length - 1];
  }
}

import { AUDIT_RETENTION_MS, type AuditAction, type AuditEntry } from '@postern/shared';
import type { RedisClient } from './redis-connection.js';
import type { KeySchema } from './keys.js';

/**
 * Filters and paging of {@link AuditLogRepository.list}. Times are epoch ms, both ends inclusive;
 * `cursor` is the `cursor` of the previous page's last entry.
 */
export interface AuditLogQuery {
  limit: number;
  cursor?: string;
  action?: AuditAction;
  /** The target's id (`ep_…`, `key_…`, …). */
  targetId?: string;
  /** The actor's id (`key_…`, `pfk_…`, `ps_…`, `admin`). */
  actorId?: string;
  sinceMs?: number;
  untilMs?: number;
}

/** An entry as listed, with the stream id the next page starts after. */
export interface StoredAuditEntry extends AuditEntry {
  /** The entry's stream id (`<at ms>-<n>`): pass it back as `cursor`. */
  cursor: string;
}

/** Entries looked at per call at most: a filter that matches rarely returns a short page and a cursor. */
export const AUDIT_SCAN_BUDGET = 2000;
const SCAN_BATCH = 200;

/**
 * The audit log (docs/audit-log.md): one Redis stream per org (and one for the instance's platform
 * keys), entries in time order, each one field `e` holding the entry's JSON. Kept 90 days by
 * native means only, never a sweep: every append trims entries older than 90 days (`XADD … MINID ~`,
 * whole listpack nodes at a time, so O(1) amortised) and sets the stream to expire 90 days after
 * its last append, so an org that changes nothing for 90 days leaves no key behind. Reads never
 * return an entry older than 90 days, whatever trimming has left.
 */
export class AuditLogRepository {
  constructor(private readonly redis: RedisClient, private readonly keys: KeySchema) {}

  /** Appends an org's entry (one round trip: XADD with trim, PEXPIRE). `nowMs` is the caller's clock. */
  async append(orgId: string, entry: AuditEntry, nowMs: number): Promise<string> {
    return this.appendTo(this.keys.orgAuditLog(orgId), entry, nowMs);
  }

  /** Appends an entry of the instance's own log (platform keys). */
  async appendPlatform(entry: AuditEntry, nowMs: number): Promise<string> {
    return this.appendTo(this.keys.platformAuditLog(), entry, nowMs);
  }

  /** A page of an org's entries, newest first. `nextCursor` is null at the end. */
  async list(orgId: string, q: AuditLogQuery, nowMs: number): Promise<{ items: StoredAuditEntry[]; nextCursor: string | null }> {
    return this.listFrom(this.keys.orgAuditLog(orgId), q, nowMs);
  }

  /** A page of the instance's own entries (platform keys), newest first. */
  async listPlatform(q: AuditLogQuery, nowMs: number): Promise<{ items: StoredAuditEntry[]; nextCursor: string | null }> {
    return this.listFrom(this.keys.platformAuditLog(), q, nowMs);
  }

  private async appendTo(key: string, entry: AuditEntry, nowMs: number): Promise<string> {
    const add = async (id: string) => {
      const [[addErr, streamId], [expireErr]] = (await this.redis
        .multi()
        .xadd(key, 'MINID', '~', String(nowMs - AUDIT_RETENTION_MS), id, 'e', JSON.stringify(entry))
        .pexpire(key, AUDIT_RETENTION_MS)
        .exec()) as [[Error | null, string], [Error | null, number]];
      if (addErr) throw addErr;
      if (expireErr) throw expireErr;
      return streamId;
    };
    try {
      // `<ms>-*`: the stream id carries the entry's time, so since/until are id ranges.
      return await add(`${Math.max(Math.floor(entry.at), 0)}-*`);
    } catch (err) {
      // Another process whose clock runs a little ahead appended later ids already: the stream
      // stays in order with Redis's own time (`*`), which is as close as the clocks are.
      if (err instanceof Error && err.message.includes('equal or smaller than the target stream top item')) return add('*');
      throw err;
    }
  }

  private async listFrom(key: string, q: AuditLogQuery, nowMs: number): Promise<{ items: StoredAuditEntry[]; nextCursor: string | null }> {
    const oldest = Math.max(q.sinceMs ?? 0, nowMs - AUDIT_RETENTION_MS);
    const start = String(oldest);
    let end = q.untilMs !== undefined ? `${q.untilMs}-18446744073709551615` : '+';
    if (q.cursor !== undefined && (end === '+' || compareStreamIds(q.cursor, end) < 0)) end = `(${q.cursor}`;
    const items: StoredAuditEntry[] = [];
    let looked = 0;
    while (looked < AUDIT_SCAN_BUDGET) {
      const batch = (await this.redis.xrevrange(key, end, start, 'COUNT', Math.min(SCAN_BATCH, AUDIT_SCAN_BUDGET - looked))) as [string, string[]][];
      if (batch.length === 0) return { items, nextCursor: null };
      for (const [streamId, fields] of batch) {
        looked += 1;
        end = `(${streamId}`;
        const entry = parseEntry(fields);
        if (!entry || !matches(entry, q)) continue;
        items.push({ ...entry, cursor: streamId });
        if (items.length === q.limit) {
          const more = await this.redis.xrevrange(key, end, start, 'COUNT', 1);
          return { items, nextCursor: more.length > 0 ? streamId : null };
        }
      }
      if (batch.length < SCAN_BATCH) return { items, nextCursor: null };
    }
    // The budget ran out: the caller goes on from the last entry looked at.
    return { items, nextCursor: end.slice(1) };
  }
}

/** Orders two stream ids `<ms>-<seq>` (or a bare `<ms>`) numerically. */
function compareStreamIds(a: string, b: string): number {
  const [am = '0', as = '0'] = a.split('-');
  const [bm = '0', bs = '0'] = b.split('-');
  const d = BigInt(am) - BigInt(bm);
  if (d !== 0n) return d < 0n ? -1 : 1;
  const s = BigInt(as) - BigInt(bs);
  return s === 0n ? 0 : s < 0n ? -1 : 1;
}

function parseEntry(fields: string[]): AuditEntry | null {
  const at = fields.indexOf('e');
  const raw = at >= 0 ? fields[at + 1] : undefined;
  if (raw === undefined) return null;
  try {
    return JSON.parse(raw) as AuditEntry;
  } catch {
    return null;
  }
}

function matches(e: AuditEntry, q: AuditLogQuery): boolean {
  if (q.action !== undefined && e.action !== q.action) return false;
  if (q.targetId !== undefined && e.target.id !== q.targetId) return false;
  if (q.actorId !== undefined && e.actor.id !== q.actorId) return false;
  return true;
}

/** Whether a cursor has the shape of a stream id (`<ms>-<seq>`), for validating `?cursor=`. */
export function isAuditCursor(s: string): boolean {
  return /^[0-9]{1,15}-[0-9]{1,20}$/.test(s);
}

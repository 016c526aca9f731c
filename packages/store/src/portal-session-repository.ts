import type { ApiKeyScope } from '@postern/shared';
import { isApiKeyScope } from '@postern/shared';
import type { KeySchema } from './keys.js';
import { assertExec } from './org-repository.js';
import type { RedisClient } from './redis-connection.js';
import { toHashFields } from './records.js';

/**
 * How long a portal session's keys outlive the session, ms: for a day after it expires its token
 * is answered `session_expired` (not `unauthorized`) and the platform can still read it. Then
 * Redis removes both keys by itself (PEXPIREAT), so nothing has to sweep them.
 */
export const PORTAL_SESSION_KEEP_MS = 24 * 60 * 60 * 1000;

/** One portal session: a short-lived bearer credential of one org, within its scopes. */
export interface PortalSessionRecord {
  /** `ps_…` */
  id: string;
  orgId: string;
  scopes: ApiKeyScope[];
  /** `customer` (plain words, the org's policy choices only) or `operator` (the full console); stored before modes existed: `customer`. */
  mode: PortalSessionMode;
  /** SHA-256 (hex) of the token; the token itself is never stored. */
  tokenHash: string;
  createdAt: number;
  /** Epoch ms from which the token is refused (`session_expired`). */
  expiresAt: number;
  /** Set once revoked; the token is refused (`session_revoked`) from then on. */
  revokedAt: number | null;
}

/** What a presented token resolves to, read from its lookup alone (one `HGETALL`). */
export interface PortalSessionMatch {
  sessionId: string;
  orgId: string;
  scopes: ApiKeyScope[];
  mode: PortalSessionMode;
  expiresAt: number;
  revokedAt: number | null;
}

/** How a portal session shows the org: to its customer, or to an operator. */
export type PortalSessionMode = 'customer' | 'operator';

const parseMode = (raw: string | undefined): PortalSessionMode => (raw === 'operator' ? 'operator' : 'customer');

function parseScopes(raw: string | undefined): ApiKeyScope[] {
  try {
    const parsed: unknown = JSON.parse(raw ?? '[]');
    return Array.isArray(parsed) ? parsed.filter(isApiKeyScope) : [];
  } catch {
    return [];
  }
}

const optionalMs = (raw: string | undefined): number | null => (raw ? Number(raw) : null);

/**
 * Portal sessions (`POST /v1/orgs/:id/portal-sessions`). Two hashes, each written in a
 * transaction of its own slot (Redis Cluster safe): the record in the org's slot and the lookup
 * by token hash in the token's slot, both with a native expiry of `expiresAt` +
 * {@link PORTAL_SESSION_KEEP_MS}.
 */
export class PortalSessionRepository {
  constructor(private readonly redis: RedisClient, private readonly keys: KeySchema) {}

  /** Writes the record, then the lookup: a token authenticates only once its record exists. */
  async create(session: PortalSessionRecord): Promise<void> {
    const keepUntil = session.expiresAt + PORTAL_SESSION_KEEP_MS;
    const record = this.keys.portalSession(session.orgId, session.id);
    await this.redis.multi().hset(record, ...toHashFields(session)).pexpireat(record, keepUntil).exec().then(assertExec);
    const lookup = this.keys.portalSessionByToken(session.tokenHash);
    const fields = { sessionId: session.id, orgId: session.orgId, scopes: session.scopes, mode: session.mode, expiresAt: session.expiresAt, revokedAt: null };
    await this.redis.multi().hset(lookup, ...toHashFields(fields)).pexpireat(lookup, keepUntil).exec().then(assertExec);
  }

  /** The session a token's SHA-256 (hex) belongs to, revoked and expired ones included; null when unknown or long gone. */
  async authenticate(tokenHash: string): Promise<PortalSessionMatch | null> {
    const h = await this.redis.hgetall(this.keys.portalSessionByToken(tokenHash));
    if (!h.sessionId || !h.orgId) return null;
    return { sessionId: h.sessionId, orgId: h.orgId, scopes: parseScopes(h.scopes), mode: parseMode(h.mode), expiresAt: Number(h.expiresAt), revokedAt: optionalMs(h.revokedAt) };
  }

  /** The org's session record, or null (unknown, another org's, or past its keep time). */
  async get(orgId: string, sessionId: string): Promise<PortalSessionRecord | null> {
    const h = await this.redis.hgetall(this.keys.portalSession(orgId, sessionId));
    if (!h.id || h.orgId !== orgId) return null;
    return {
      id: h.id,
      orgId: h.orgId,
      scopes: parseScopes(h.scopes),
      mode: parseMode(h.mode),
      tokenHash: h.tokenHash ?? '',
      createdAt: Number(h.createdAt),
      expiresAt: Number(h.expiresAt),
      revokedAt: optionalMs(h.revokedAt),
    };
  }

  /**
   * Revokes a session: the lookup first (what authentication reads, so the very next request with
   * the token is refused), then the record. Each step re-applies the keys' expiry in the same
   * transaction, so a lookup already gone is not brought back for longer than it would have lived.
   * Revoking twice keeps the first time. Returns the record as revoked.
   */
  async revoke(session: PortalSessionRecord, nowMs: number): Promise<PortalSessionRecord> {
    const revokedAt = session.revokedAt ?? nowMs;
    const keepUntil = session.expiresAt + PORTAL_SESSION_KEEP_MS;
    const lookup = this.keys.portalSessionByToken(session.tokenHash);
    await this.redis.multi().hset(lookup, 'revokedAt', revokedAt).pexpireat(lookup, keepUntil).exec().then(assertExec);
    const record = this.keys.portalSession(session.orgId, session.id);
    await this.redis.multi().hset(record, 'revokedAt', revokedAt).pexpireat(record, keepUntil).exec().then(assertExec);
    return { ...session, revokedAt };
  }
}

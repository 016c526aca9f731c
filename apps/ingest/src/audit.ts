import { buildAuditEntry, type AuditAction, type AuditActor, type AuditEntry, type AuditTarget, type ChangedFieldsOptions } from '@postern/shared';
import type { ApiKeyRecord, EndpointRecord, PlatformKeyRecord } from '@postern/store';
import type { Request, Response } from 'express';
import type { AppDeps } from './app-deps.js';
import type { PortalSessionCredential } from './auth.js';
import { requestIdOf } from './request-logging.js';

/** The admin token as an actor: it has no id of its own. */
export const ADMIN_ACTOR: AuditActor = { kind: 'admin', id: 'admin', name: 'admin token' };

/**
 * Who is making this request, from what the credential check put in `res.locals`: a portal
 * session, a platform key (acting for an org, or on an admin route), an API key, else the admin
 * token (the only credential that sets none of them).
 */
export function auditActor(res: Response): AuditActor {
  const session = res.locals.portalSession as PortalSessionCredential | null | undefined;
  if (session) return { kind: 'portal_session', id: session.id, name: 'portal session' };
  const platformKey = res.locals.platformKey as PlatformKeyRecord | undefined;
  if (platformKey) return { kind: 'platform_key', id: platformKey.id, name: platformKey.name };
  const apiKey = res.locals.apiKey as ApiKeyRecord | null | undefined;
  if (apiKey) return { kind: 'api_key', id: apiKey.id, name: apiKey.name };
  return ADMIN_ACTOR;
}

/** What one change is: the action, its target and either the changed field names or both shapes to compare. */
export interface AuditChange {
  action: AuditAction;
  target: AuditTarget;
  /** The org whose log it goes to; absent = the request's org (`res.locals.orgId`); null = the instance's own log (platform keys). */
  orgId?: string | null;
  changes?: readonly string[];
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
  diff?: ChangedFieldsOptions;
}

/**
 * Records one change made by this request in the audit log (docs/audit-log.md): builds the entry
 * from the request's actor and id, appends it to the org's log (or the instance's), writes it as a
 * log line `{audit: entry}` with the message `audit`, and, when tracing is on, as a span
 * `audit <action>` carrying the entry's fields as attributes. Called by a route once its change is
 * stored. A failed append does not undo the change nor fail the answer (the change is made and a
 * retry would repeat it): it is logged at `error` with the whole entry, which is then still in the
 * logs. Returns the entry.
 */
export async function recordAudit(deps: Pick<AppDeps, 'store' | 'ids' | 'clock' | 'logger' | 'tracer'>, req: Request, res: Response, change: AuditChange): Promise<AuditEntry> {
  const now = deps.clock.now();
  const entry = buildAuditEntry({
    id: deps.ids('aud', now),
    atMs: now,
    actor: auditActor(res),
    action: change.action,
    target: change.target,
    requestId: requestIdOf(req) ?? '',
    changes: change.changes,
    before: change.before,
    after: change.after,
    diff: change.diff,
  });
  const orgId = change.orgId === undefined ? (res.locals.orgId as string | undefined) : change.orgId;
  deps.logger.info({ audit: entry, ...(orgId ? { orgId } : {}) }, 'audit');
  if (deps.tracer) {
    deps.tracer
      .startSpan(`audit ${entry.action}`, {
        attributes: {
          'postern.audit.id': entry.id,
          'postern.audit.action': entry.action,
          'postern.audit.actor.kind': entry.actor.kind,
          'postern.audit.actor.id': entry.actor.id,
          'postern.audit.target.type': entry.target.type,
          'postern.audit.target.id': entry.target.id,
          'postern.audit.changes': entry.changes,
          'postern.request_id': entry.requestId,
          ...(orgId ? { 'postern.org_id': orgId } : {}),
        },
      })
      .end();
  }
  try {
    if (orgId) await deps.store.auditLog.append(orgId, entry, now);
    else await deps.store.auditLog.appendPlatform(entry, now);
  } catch (err) {
    deps.logger.error({ err, audit: entry, requestId: entry.requestId }, 'audit write failed');
  }
  return entry;
}

/**
 * An endpoint as the audit log compares it: every field a person changes, secrets included as
 * values (only names ever leave {@link recordAudit}), health counters and bookkeeping left out.
 * A changed signing secret shows as `signingSecrets`, changed auth (its settings or its secret) as
 * `auth`, a transformation set, changed, switched or removed as `transformation`, and so on; the
 * policy is compared field by field (`policy.maxAttempts`).
 */
export function endpointAuditShape(e: EndpointRecord): Record<string, unknown> {
  const request = e.request;
  const secrets = e.requestSecrets ?? {};
  return {
    url: e.url,
    description: e.description,
    eventTypes: e.eventTypes,
    policy: e.policy,
    status: e.status,
    signingSecrets: e.secrets.map((s) => s.secret),
    headers: { settings: request?.headers ?? [], secrets: secrets.headers ?? {} },
    auth: { settings: request?.auth ?? null, password: secrets.password, token: secrets.token, clientSecret: secrets.clientSecret, privateKey: secrets.privateKey },
    proxy: { settings: request?.proxy ?? null, password: secrets.proxyPassword },
    // Its code and switch (the version follows the code); shown as `transformation` when either changes.
    transformation: e.transformation ? { code: e.transformation.code, enabled: e.transformation.enabled } : null,
  };
}

/** {@link endpointAuditShape}'s comparison options: the policy field by field. */
export const ENDPOINT_DIFF: ChangedFieldsOptions = { expand: ['policy'] };

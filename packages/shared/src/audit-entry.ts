/**
 * The audit log's entries (docs/audit-log.md): who changed what through the API, when, under
 * which request. Pure: the caller passes the id, the time and both shapes of the thing changed;
 * an entry names the fields that changed and never their values, so a secret cannot leak into it.
 */

/** Who made a change: the credential the request was authenticated with. */
export type AuditActorKind = 'api_key' | 'platform_key' | 'portal_session' | 'admin';

/** Every actor kind, for validation of `?actorKind=` style filters and docs. */
export const AUDIT_ACTOR_KINDS: readonly AuditActorKind[] = ['api_key', 'platform_key', 'portal_session', 'admin'];

/** The actor of an entry: its kind, its id (`key_…`, `pfk_…`, `ps_…`, or `admin`) and a name people read. */
export interface AuditActor {
  kind: AuditActorKind;
  id: string;
  name: string;
}

/**
 * Every action the audit log records, one per kind of change made through the API. A bulk action
 * (`endpoint.failed_redelivered`, `endpoint.recovered`) is one entry per call, its target the
 * endpoint.
 */
export const AUDIT_ACTIONS = [
  'org.created',
  'org.suspended',
  'org.reactivated',
  'org.settings_updated',
  'api_key.created',
  'api_key.revoked',
  'platform_key.created',
  'platform_key.revoked',
  'portal_session.created',
  'portal_session.revoked',
  'endpoint.created',
  'endpoint.updated',
  'endpoint.paused',
  'endpoint.resumed',
  'endpoint.deleted',
  'endpoint.secret_rotated',
  'endpoint.test_sent',
  'endpoint.failed_redelivered',
  'endpoint.recovered',
  'delivery.redelivered',
  'delivery.sent_now',
  'event.data_erased',
] as const;

/** One of {@link AUDIT_ACTIONS}. */
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Whether `s` is one of {@link AUDIT_ACTIONS}. */
export function isAuditAction(s: string): s is AuditAction {
  return (AUDIT_ACTIONS as readonly string[]).includes(s);
}

/** What a change was made to: its kind and id (`endpoint` `ep_…`, `org` `org_…`, …). */
export interface AuditTarget {
  type: 'org' | 'api_key' | 'platform_key' | 'portal_session' | 'endpoint' | 'delivery' | 'event';
  id: string;
}

/** One audit log entry. `at` is epoch ms; `changes` are field names, sorted, never values. */
export interface AuditEntry {
  id: string;
  at: number;
  actor: AuditActor;
  action: AuditAction;
  target: AuditTarget;
  changes: string[];
  /** The request's id (`X-Request-Id`), the key to its log lines. */
  requestId: string;
}

/** Options of {@link changedFields}. */
export interface ChangedFieldsOptions {
  /** Top-level fields never reported (bookkeeping such as `updatedAt`). */
  ignore?: readonly string[];
  /** Top-level object fields reported one level deeper, as `<field>.<key>` (e.g. `policy.maxAttempts`). */
  expand?: readonly string[];
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** JSON equality of two values built from JSON-like data (key order of objects ignored). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const k of keys) if (!sameValue(a[k], b[k])) return false;
    return true;
  }
  // `undefined` and a missing field are the same; null is a value.
  return a === undefined && b === undefined;
}

/**
 * The names of the fields that differ between two shapes of one thing (before and after a
 * change), sorted. A field present on one side only counts as changed. Values are compared, never
 * returned, so shapes may hold secrets (a rotated signing secret shows as its field's name).
 * `before` null (a creation) or `after` null (a deletion) report every field of the other side.
 */
export function changedFields(before: Record<string, unknown> | null, after: Record<string, unknown> | null, opts: ChangedFieldsOptions = {}): string[] {
  const ignore = new Set(opts.ignore ?? []);
  const expand = new Set(opts.expand ?? []);
  const a = before ?? {};
  const b = after ?? {};
  const out = new Set<string>();
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (ignore.has(key)) continue;
    const x = a[key];
    const y = b[key];
    if (before !== null && after !== null && sameValue(x, y)) continue;
    if (expand.has(key) && isPlainObject(x) && isPlainObject(y)) {
      for (const sub of changedFields(x, y)) out.add(`${key}.${sub}`);
    } else if (!(before === null && y === undefined) && !(after === null && x === undefined)) {
      out.add(key);
    }
  }
  return [...out].sort();
}

/**
 * Builds an audit entry. `changes` is given as field names (an action without a before/after,
 * such as a redelivery, names what it did, or nothing), or computed from `before` and `after`
 * with {@link changedFields}. Names are deduplicated and sorted.
 */
export function buildAuditEntry(input: {
  id: string;
  /** When the change was made, epoch ms. */
  atMs: number;
  actor: AuditActor;
  action: AuditAction;
  target: AuditTarget;
  requestId: string;
  changes?: readonly string[];
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
  diff?: ChangedFieldsOptions;
}): AuditEntry {
  const computed = input.before !== undefined || input.after !== undefined ? changedFields(input.before ?? null, input.after ?? null, input.diff) : [];
  const changes = [...new Set([...(input.changes ?? []), ...computed])].sort();
  return { id: input.id, at: input.atMs, actor: { ...input.actor }, action: input.action, target: { ...input.target }, changes, requestId: input.requestId };
}

/** How long the audit log keeps an entry: 90 days, in ms (native expiry in the store). */
export const AUDIT_RETENTION_MS = 90 * 24 * 60 * 60 * 1000;

import { isApiKeyScope, type ApiKeyScope, type Policy, type SentRequestFields } from '@postern/shared';

/** Status of a delivery. `pending` covers queued, retry-scheduled and held deliveries. */
export type DeliveryStatus = 'pending' | 'in_flight' | 'succeeded' | 'failed' | 'cancelled';
/** Every delivery status, for validation of `?status=` filters. */
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'in_flight', 'succeeded', 'failed', 'cancelled'];
/** Status of an endpoint: only `active` endpoints receive attempts. */
export type EndpointStatus = 'active' | 'paused' | 'disabled';

/** A tenant. Times are epoch milliseconds. */
export interface OrgRecord {
  id: string;
  name: string;
  status: 'active' | 'suspended';
  createdAt: number;
  /** Event types (or `prefix.*` groups) switched off for the org (issue 16); absent = none. */
  disabledEventTypes?: string[];
  /** The org's pre-attempt check URL (issue 16); absent = none. */
  preAttemptCheckUrl?: string;
  /** The secret that signs requests to {@link OrgRecord.preAttemptCheckUrl} (`whsec_…`); set with the first URL. */
  preAttemptCheckSecret?: string;
}

/** What an attempt needs of the org's settings (read by the claim with the org's status). */
export interface OrgAttemptSettings {
  disabledEventTypes: string[];
  /** Null when the org has no check URL (or no secret for it). */
  check: { url: string; secret: string } | null;
}

/** One signing secret of an endpoint; `expiresAt` (epoch ms) is set on the old secret during rotation. */
export interface EndpointSecret {
  secret: string;
  expiresAt: number | null;
}

/** An endpoint with its policy and health counters. Times are epoch ms or null. */
export interface EndpointRecord {
  id: string;
  orgId: string;
  url: string;
  description: string;
  eventTypes: string[];
  /** The preset the policy came from, when it is one unchanged; null for custom or overridden. */
  policyName: string | null;
  policy: Policy;
  status: EndpointStatus;
  secrets: EndpointSecret[];
  createdAt: number;
  updatedAt: number;
  consecutiveFailures: number;
  failureStreakStartedAt: number | null;
  lastSuccessAt: number | null;
  lastFailureAt: number | null;
  /** Every failed attempt so far, whether or not the breaker counts it. */
  failedAttempts: number;
  /** Failed attempts since the last successful one, whether or not the breaker counts them. */
  consecutiveFailedAttempts: number;
  disabledAt: number | null;
  disabledReason: string | null;
  /** Set when a breaker whose policy says `reenable: 'recreate'` disabled it: resume is refused for good. */
  recreateRequired?: boolean;
}

/** An accepted event. `envelope` is the exact body every delivery of it sends. */
export interface EventRecord {
  id: string;
  orgId: string;
  type: string;
  envelope: string;
  createdAt: number;
  idempotencyKey: string | null;
  deliveryIds: string[];
}

/** One event to one endpoint. Times are epoch ms or null. */
export interface DeliveryRecord {
  id: string;
  orgId: string;
  eventId: string;
  eventType: string;
  endpointId: string;
  status: DeliveryStatus;
  /** Attempts started so far (1-based number of the latest). */
  attempts: number;
  nextAttemptAt: number | null;
  lastResponseStatus: number | null;
  lastError: string | null;
  lastDurationMs: number | null;
  deliveredAt: number | null;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
  redeliveredFromId: string | null;
  cancelReason: string | null;
  /** True while the delivery waits for its endpoint to become active again. */
  held: boolean;
  /** A `webhook.test` delivery from `POST /v1/endpoints/:id/test`. */
  isTest: boolean;
  /** True while the delivery waits for a concurrency slot (its job parked); absent = false. */
  parked?: boolean;
  /**
   * The body every attempt of this delivery sends, frozen when the org's pre-attempt check first
   * answered send (with its `data`, or the event's envelope); copied to its redeliveries. Absent =
   * the event's envelope (issue 16).
   */
  frozenEnvelope?: string;
}

/**
 * Whether a delivery is waiting out the delay before its next attempt (a retry is scheduled): pending,
 * at least one attempt made, neither held for an inactive endpoint nor parked for a slot. Only
 * such a delivery can be sent now (`POST /v1/deliveries/:id/send-now`).
 */
export function isWaitingForNextAttempt(d: DeliveryRecord): boolean {
  return d.status === 'pending' && d.attempts >= 1 && !d.held && d.parked !== true && d.nextAttemptAt !== null;
}

/**
 * A new delivery, `pending` with no attempt yet, due now: what ingest's fan-out, a redelivery and
 * an operational webhook all create. Times are epoch ms.
 */
export function newPendingDelivery(input: {
  id: string;
  orgId: string;
  eventId: string;
  eventType: string;
  endpointId: string;
  nowMs: number;
  isTest?: boolean;
  redeliveredFromId?: string | null;
  /** A redelivery's original's frozen body, sent byte for byte again. */
  frozenEnvelope?: string;
}): DeliveryRecord {
  return {
    id: input.id,
    orgId: input.orgId,
    eventId: input.eventId,
    eventType: input.eventType,
    endpointId: input.endpointId,
    status: 'pending',
    attempts: 0,
    nextAttemptAt: input.nowMs,
    lastResponseStatus: null,
    lastError: null,
    lastDurationMs: null,
    deliveredAt: null,
    createdAt: input.nowMs,
    updatedAt: input.nowMs,
    finishedAt: null,
    redeliveredFromId: input.redeliveredFromId ?? null,
    cancelReason: null,
    held: false,
    isTest: input.isTest ?? false,
    ...(input.frozenEnvelope !== undefined ? { frozenEnvelope: input.frozenEnvelope } : {}),
  };
}

/**
 * One HTTP request of a delivery. `durationMs`, `responseStatus`, `error` are null while in flight.
 * The exchange itself (issue 14): `requestHeaders` as sent (null for an attempt that sent nothing
 * or was recorded before they were kept); `response` — bounded headers and the body excerpt — only
 * where the policy's `keepResponseBody` kept it, else null.
 */
export interface AttemptRecord {
  number: number;
  startedAt: number;
  durationMs: number | null;
  responseStatus: number | null;
  error: string | null;
  requestHeaders: Record<string, string> | null;
  response: AttemptResponseRecord | null;
  /** Set when the attempt sent nothing because the org's check cancelled the delivery (`check:<reason>`). */
  cancelReason?: string;
}

/**
 * An attempt as stored (JSON in the delivery's attempts hash): the request's headers as the
 * fields they were built from (`sent`), `response` only when kept; absent fields read as null.
 */
export interface StoredAttempt {
  number: number;
  startedAt: number;
  durationMs?: number | null;
  responseStatus?: number | null;
  error?: string | null;
  sent?: SentRequestFields;
  response?: AttemptResponseRecord;
  /** The pre-attempt check cancelled the delivery at this attempt, nothing sent (`check:<reason>`). */
  cancelReason?: string;
}

/** What was kept of an answer: headers (bounded), body excerpt (≤ `maxResponseBytesRead` bytes, UTF-8). */
export interface AttemptResponseRecord {
  headers: Record<string, string>;
  headersTruncated: boolean;
  body: string;
  bodyTruncated: boolean;
}

/** Flattens a record into Redis hash field/value pairs; null becomes '' and objects JSON. */
export function toHashFields(record: object): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(record)) {
    if (value === undefined) continue;
    out.push(key, encodeValue(value));
  }
  return out;
}

function encodeValue(value: unknown): string {
  if (value === null) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  if (typeof value === 'boolean') return value ? '1' : '0';
  return String(value);
}

/** Reads an optional epoch-ms or integer field: '' and absent become null. */
export function optionalNumber(raw: string | undefined): number | null {
  if (raw === undefined || raw === '') return null;
  const n = Number(raw);
  return Number.isFinite(n) ? n : null;
}

/** Reads an optional string field: '' and absent become null. */
export function optionalString(raw: string | undefined): string | null {
  return raw === undefined || raw === '' ? null : raw;
}

/** Parses a delivery hash; returns null for an empty hash (no such delivery). */
export function parseDelivery(h: Record<string, string>): DeliveryRecord | null {
  if (!h.id) return null;
  return {
    id: h.id,
    orgId: h.orgId ?? '',
    eventId: h.eventId ?? '',
    eventType: h.eventType ?? '',
    endpointId: h.endpointId ?? '',
    status: (h.status ?? 'pending') as DeliveryStatus,
    attempts: Number(h.attempts ?? 0),
    nextAttemptAt: optionalNumber(h.nextAttemptAt),
    lastResponseStatus: optionalNumber(h.lastResponseStatus),
    lastError: optionalString(h.lastError),
    lastDurationMs: optionalNumber(h.lastDurationMs),
    deliveredAt: optionalNumber(h.deliveredAt),
    createdAt: Number(h.createdAt ?? 0),
    updatedAt: Number(h.updatedAt ?? 0),
    finishedAt: optionalNumber(h.finishedAt),
    redeliveredFromId: optionalString(h.redeliveredFromId),
    cancelReason: optionalString(h.cancelReason),
    held: h.held === '1',
    isTest: h.isTest === '1',
    ...(h.parked === '1' ? { parked: true } : {}),
    ...(h.frozenEnvelope ? { frozenEnvelope: h.frozenEnvelope } : {}),
  };
}

/**
 * Reads the stored secrets leniently: a value that is not a JSON array reads as no secrets, which
 * the sender records as `internal:secret_unreadable` (vestiarion) instead of every read of the
 * endpoint, and so every event's fan-out to the org, throwing.
 */
function parseSecrets(raw: string | undefined): EndpointSecret[] {
  try {
    const value: unknown = JSON.parse(raw ?? '[]');
    return Array.isArray(value) ? (value as EndpointSecret[]) : [];
  } catch {
    return [];
  }
}

/** Parses an endpoint hash; returns null for an empty hash. */
export function parseEndpoint(h: Record<string, string>): EndpointRecord | null {
  if (!h.id) return null;
  return {
    id: h.id,
    orgId: h.orgId ?? '',
    url: h.url ?? '',
    description: h.description ?? '',
    eventTypes: JSON.parse(h.eventTypes ?? '["*"]') as string[],
    policyName: optionalString(h.policyName),
    policy: JSON.parse(h.policy ?? '{}') as Policy,
    status: (h.status ?? 'active') as EndpointStatus,
    secrets: parseSecrets(h.secrets),
    createdAt: Number(h.createdAt ?? 0),
    updatedAt: Number(h.updatedAt ?? 0),
    consecutiveFailures: Number(h.consecutiveFailures ?? 0),
    failureStreakStartedAt: optionalNumber(h.failureStreakStartedAt),
    lastSuccessAt: optionalNumber(h.lastSuccessAt),
    lastFailureAt: optionalNumber(h.lastFailureAt),
    failedAttempts: Number(h.failedAttempts ?? 0),
    consecutiveFailedAttempts: Number(h.consecutiveFailedAttempts ?? 0),
    disabledAt: optionalNumber(h.disabledAt),
    disabledReason: optionalString(h.disabledReason),
    recreateRequired: h.recreateRequired === '1',
  };
}

/** Parses an event hash; returns null for an empty hash. */
export function parseEvent(h: Record<string, string>): EventRecord | null {
  if (!h.id) return null;
  return {
    id: h.id,
    orgId: h.orgId ?? '',
    type: h.type ?? '',
    envelope: h.envelope ?? '',
    createdAt: Number(h.createdAt ?? 0),
    idempotencyKey: optionalString(h.idempotencyKey),
    deliveryIds: JSON.parse(h.deliveryIds ?? '[]') as string[],
  };
}

/** Parses an org hash; returns null for an empty hash. */
export function parseOrg(h: Record<string, string>): OrgRecord | null {
  if (!h.id) return null;
  return {
    id: h.id,
    name: h.name ?? '',
    status: (h.status ?? 'active') as OrgRecord['status'],
    createdAt: Number(h.createdAt ?? 0),
    ...(h.disabledEventTypes ? { disabledEventTypes: parseStringList(h.disabledEventTypes) } : {}),
    ...(h.preAttemptCheckUrl ? { preAttemptCheckUrl: h.preAttemptCheckUrl } : {}),
    ...(h.preAttemptCheckSecret ? { preAttemptCheckSecret: h.preAttemptCheckSecret } : {}),
  };
}

/** A JSON array of strings as stored; anything else reads as empty. */
function parseStringList(raw: string): string[] {
  try {
    const value: unknown = JSON.parse(raw);
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  } catch {
    return [];
  }
}

/**
 * The org settings an attempt needs, from the org hash fields the claim reads
 * (`disabledEventTypes`, `preAttemptCheckUrl`, `preAttemptCheckSecret`; absent fields as null).
 */
export function parseOrgAttemptSettings(disabledEventTypes: string | null, checkUrl: string | null, checkSecret: string | null): OrgAttemptSettings {
  return {
    disabledEventTypes: disabledEventTypes ? parseStringList(disabledEventTypes) : [],
    check: checkUrl && checkSecret ? { url: checkUrl, secret: checkSecret } : null,
  };
}

/** An operator notice: an endpoint was paused or disabled by its breaker. */
export interface NotificationRecord {
  id: string;
  orgId: string;
  kind: 'endpoint.paused' | 'endpoint.disabled';
  endpointId: string;
  endpointUrl: string;
  /** Why, e.g. `20 consecutive failed attempts since 2026-…`. */
  reason: string;
  consecutiveFailures: number;
  /** Deliveries cancelled, held or failed by the trip. */
  deliveriesAffected: number;
  createdAt: number;
}

/** Parses a notification hash; returns null for an empty hash. */
export function parseNotification(h: Record<string, string>): NotificationRecord | null {
  if (!h.id) return null;
  return {
    id: h.id,
    orgId: h.orgId ?? '',
    kind: (h.kind ?? 'endpoint.disabled') as NotificationRecord['kind'],
    endpointId: h.endpointId ?? '',
    endpointUrl: h.endpointUrl ?? '',
    reason: h.reason ?? '',
    consecutiveFailures: Number(h.consecutiveFailures ?? 0),
    deliveriesAffected: Number(h.deliveriesAffected ?? 0),
    createdAt: Number(h.createdAt ?? 0),
  };
}

/**
 * An API key of an org: never the key itself, only what identifies it to people (`name`, `prefix`:
 * the 8 characters after `pk_`) and its SHA-256 (`keyHash`, hex), by which requests are matched.
 */
export interface ApiKeyRecord {
  id: string;
  orgId: string;
  name: string;
  scopes: ApiKeyScope[];
  prefix: string;
  keyHash: string;
  createdAt: number;
  /** Set once the key is revoked; a revoked key is refused from then on. */
  revokedAt: number | null;
}

/** Parses an API key hash; returns null for an empty hash. Unknown scopes are dropped. */
export function parseApiKey(h: Record<string, string>): ApiKeyRecord | null {
  if (!h.id) return null;
  let scopes: unknown;
  try {
    scopes = JSON.parse(h.scopes ?? '[]');
  } catch {
    scopes = [];
  }
  return {
    id: h.id,
    orgId: h.orgId ?? '',
    name: h.name ?? '',
    scopes: Array.isArray(scopes) ? scopes.filter(isApiKeyScope) : [],
    prefix: h.prefix ?? '',
    keyHash: h.keyHash ?? '',
    createdAt: Number(h.createdAt ?? 0),
    revokedAt: optionalNumber(h.revokedAt),
  };
}

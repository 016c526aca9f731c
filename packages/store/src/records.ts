import { isApiKeyScope, NO_REQUEST_SETTINGS, type ApiKeyScope, type Pace, type Policy, type RequestSecrets, type RequestSettings, type SecretBox, type SentRequestFields, type TransformationSettings, type TransformedRequestRecord, type EventValidationMode, type PortalBranding, type PortalPolicies } from '@postern/shared';
import { deliveryIdsOfEvent, eventIdOfDelivery, idTimeOf, storedDeliveryIds, storedEventId } from './derived-ids.js';
import { openSealedField, sealField } from './sealed-fields.js';
import { decodeRequestSecrets, parseRequestSettings } from './request-secrets.js';

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
  /** What ingest does with an event whose data fails its type's schema; absent = `off`. */
  eventValidation?: EventValidationMode;
  /** Refuse events of types not in the org's catalog; absent = false. */
  requireKnownEventTypes?: boolean;
  /** The customer portal's branding (stored field `portal`, JSON); absent = none. */
  portal?: PortalBranding;
  /** What portal customers may pick as a policy (stored field `portalPolicies`, JSON); absent = {@link DEFAULT_PORTAL_POLICIES}. */
  portalPolicies?: PortalPolicies;
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
  /**
   * Its current pace under `pacing: "adaptive"` (stored field `pace`, JSON); null = at the
   * policy's limits. Written by the finish script, applied by the claim script.
   */
  pace?: Pace | null;
  /**
   * Static headers, auth and proxy without their secrets (stored field `request`, JSON); absent
   * = none ({@link NO_REQUEST_SETTINGS} when read).
   */
  request?: RequestSettings;
  /**
   * Their secrets (stored field `requestSecrets`, written and read only through
   * `request-secrets.ts`, the seam for sealing); `{}` when none. Never shown by the API.
   */
  requestSecrets?: RequestSecrets;
  /**
   * When the sender last fetched an OAuth 2.0 token for it, epoch ms (stored field
   * `oauthTokenFetchedAt`, written by `OauthTokenRepository.recordFetched`); null = never.
   */
  oauthTokenFetchedAt?: number | null;
  /**
   * The endpoint's transformation (stored field `transformation`, JSON; docs/transformations.md):
   * code, switch and version; absent or null = none.
   */
  transformation?: TransformationSettings | null;
  /**
   * The highest transformation version the endpoint has had (stored field
   * `lastTransformationVersion`), kept when the transformation is removed: a new one goes on from
   * it, so one version number names one code for the endpoint's whole life. Absent = none recorded.
   */
  lastTransformationVersion?: number;
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
  /** When its payload was erased (`DELETE /v1/events/:id/data`), epoch ms; absent = not erased (its `envelope` is then ''). */
  dataErasedAt?: number;
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
  /**
   * The org's acceptance sequence of its event (or redelivery): its place in its endpoint's line,
   * oldest first (README, "Ordering"); absent on deliveries written before issue 13.
   */
  acceptSeq?: number;
  /** The producer's `orderingKey` of the event (1..256 characters); absent = none. */
  orderingKey?: string;
  /**
   * Its number among the deliveries of its ordering key to this endpoint, from 1 (`webhook-sequence`);
   * only under a `per-key` policy. A redelivery keeps its original's.
   */
  sequence?: number;
  /** Its entry in the endpoint's key lines (`keys.endpointKeyLines`) while unfinished; internal. */
  keyLine?: string;
  /** Its event's payload was erased: no frozen body, no stored responses, never redelivered; absent = false. */
  dataErased?: boolean;
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
  /** The event's ordering key, if the producer gave one. */
  orderingKey?: string | null;
  /** A redelivery's original sequence number (kept for the receiver's gap check). */
  sequence?: number | null;
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
    ...(input.orderingKey ? { orderingKey: input.orderingKey } : {}),
    ...(input.sequence ? { sequence: input.sequence } : {}),
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
  /**
   * The endpoint transformation's version that ran at this attempt, and the request it made (null
   * when it sent nothing: it failed or cancelled); absent when no transformation ran.
   */
  transformation?: { version: number; request: TransformedRequestRecord | null };
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
  /** The transformation version that ran and sent nothing (it failed or cancelled); with a request sent, `sent.transformed` has it. */
  transformationVersion?: number;
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

/**
 * A delivery as its hash's fields (compact records, docs/architecture.md): its id and org id are
 * in the key, so they are not stored; null, empty and false fields are left out (absent reads as
 * null, false or 0), and so are `updatedAt` and `nextAttemptAt` while they equal `createdAt`,
 * `createdAt` when it is the time in the delivery's id, and `eventId` when it is the delivery's id
 * minus one (an offset when minus a few: derived-ids.ts).
 * Field names are the record's own, so the Lua scripts and this file agree by name.
 */
export function deliveryHashFields(d: DeliveryRecord): string[] {
  const { id: _idInKey, orgId: _orgInKey, updatedAt, nextAttemptAt, eventId, createdAt, ...rest } = d;
  return compactHashFields({
    eventId: storedEventId(eventId, d.id),
    ...rest,
    // Stored only when they differ from what parseDelivery derives.
    createdAt: createdAt === idTimeOf(d.id) ? null : createdAt,
    updatedAt: updatedAt === d.createdAt ? null : updatedAt,
    nextAttemptAt: nextAttemptAt === d.createdAt && d.attempts === 0 && !d.held ? null : nextAttemptAt,
  });
}

/** Like {@link toHashFields}, leaving out null, empty-string, false and zero-attempt fields. */
function compactHashFields(record: object): string[] {
  const out: string[] = [];
  for (const [key, value] of Object.entries(record)) {
    if (value === undefined || value === null || value === '' || value === false) continue;
    if (key === 'attempts' && value === 0) continue;
    out.push(key, encodeValue(value));
  }
  return out;
}

/**
 * Parses a delivery hash; returns null for an empty hash (no such delivery). `orgId` and `id` are
 * the org and delivery whose key it was read from (compact records do not store them; older ones
 * do). Fields left out by compact records are derived: `createdAt` absent is the time in the id,
 * `eventId` absent or a number is the id minus one or that number (derived-ids.ts);
 * `updatedAt` absent is `createdAt`;
 * `nextAttemptAt` absent on a pending or in-flight delivery that is not held is `createdAt` (a
 * cleared one is absent only on finished or held deliveries); a finished delivery's `finishedAt`
 * is its `updatedAt`, and a succeeded one's `deliveredAt` its `finishedAt`; `lastResponseStatus`,
 * `lastDurationMs` and `lastError` absent are those of its latest finished attempt (its core, in
 * this same hash: attempt-encoding.ts). A stored value wins: '' is null, as written before.
 */
export function parseDelivery(h: Record<string, string>, orgId = '', id = ''): DeliveryRecord | null {
  if (!h.id && !h.status) return null;
  const status = (h.status ?? 'pending') as DeliveryStatus;
  const deliveryId = h.id ?? id;
  const createdAt = h.createdAt !== undefined ? Number(h.createdAt) : (idTimeOf(deliveryId) ?? 0);
  const updatedAt = h.updatedAt ? Number(h.updatedAt) : createdAt;
  const held = h.held === '1';
  const open = status === 'pending' || status === 'in_flight';
  const last = latestFinishedAttempt(h, Number(h.attempts ?? 0));
  const finished = status === 'succeeded' || status === 'failed' || status === 'cancelled';
  const finishedAt = optionalNumber(h.finishedAt) ?? (finished ? updatedAt : null);
  return {
    id: deliveryId,
    orgId: h.orgId ?? orgId,
    eventId: eventIdOfDelivery(h.eventId, deliveryId),
    eventType: h.eventType ?? '',
    endpointId: h.endpointId ?? '',
    status,
    attempts: Number(h.attempts ?? 0),
    nextAttemptAt: optionalNumber(h.nextAttemptAt) ?? (h.nextAttemptAt === undefined && open && !held ? createdAt : null),
    lastResponseStatus: h.lastResponseStatus !== undefined ? optionalNumber(h.lastResponseStatus) : (last?.[2] ?? null),
    lastError: h.lastError !== undefined ? optionalString(h.lastError) : (last?.[3] ?? null),
    lastDurationMs: h.lastDurationMs !== undefined ? optionalNumber(h.lastDurationMs) : (last?.[1] ?? null),
    deliveredAt: optionalNumber(h.deliveredAt) ?? (status === 'succeeded' ? finishedAt : null),
    createdAt,
    updatedAt,
    finishedAt,
    redeliveredFromId: optionalString(h.redeliveredFromId),
    cancelReason: optionalString(h.cancelReason),
    held,
    isTest: h.isTest === '1',
    ...(h.parked === '1' ? { parked: true } : {}),
    ...(h.frozenEnvelope ? { frozenEnvelope: h.frozenEnvelope } : {}),
    ...(h.acceptSeq ? { acceptSeq: Number(h.acceptSeq) } : {}),
    ...(h.orderingKey ? { orderingKey: h.orderingKey } : {}),
    ...(h.sequence ? { sequence: Number(h.sequence) } : {}),
    ...(h.keyLine ? { keyLine: h.keyLine } : {}),
    ...(h.dataErased === '1' ? { dataErased: true } : {}),
  };
}

/**
 * The core (`[startedAt, durationMs, responseStatus, error, …]`, attempt-encoding.ts) of the
 * latest attempt that has an outcome (an attempt in flight has only its start), from a delivery
 * hash read as strings (a core is ASCII, so its pieces join as strings); null when there is none.
 */
function latestFinishedAttempt(h: Record<string, string>, attempts: number): [number, number | null, number | null, string | null] | null {
  for (let n = attempts; n >= 1; n--) {
    let raw = h[`a${n}`];
    if (raw === undefined && h[`a${n}~0`] !== undefined) {
      raw = '';
      for (let i = 0; h[`a${n}~${i}`] !== undefined; i++) raw += h[`a${n}~${i}`];
    }
    if (raw === undefined) continue;
    try {
      const core = JSON.parse(raw) as [number, number | null, number | null, string | null];
      if (core.length >= 2) return [core[0], core[1] ?? null, core[2] ?? null, core[3] ?? null];
    } catch {
      return null;
    }
  }
  return null;
}

/**
 * Reads the stored secrets leniently: a value that does not open (sealed with a key this process
 * lacks, or moved from another record) or is not a JSON array reads as no secrets, which the
 * sender records as `internal:secret_unreadable` (vestiarion) instead of every read of the
 * endpoint, and so every event's fan-out to the org, throwing.
 */
function parseSecrets(raw: string | undefined, box: SecretBox, orgId: string, endpointId: string): EndpointSecret[] {
  const plain = raw === undefined ? '[]' : openSealedField(box, raw, orgId, endpointId, 'secrets');
  if (plain === null) return [];
  try {
    const value: unknown = JSON.parse(plain);
    return Array.isArray(value) ? (value as EndpointSecret[]) : [];
  } catch {
    return [];
  }
}

/** Reads a stored transformation leniently: absent, cleared or unreadable = none. */
function parseTransformation(raw: string | undefined): TransformationSettings | null {
  if (!raw) return null;
  try {
    const t = JSON.parse(raw) as TransformationSettings;
    return t && typeof t.code === 'string' && typeof t.version === 'number' ? { code: t.code, enabled: t.enabled === true, version: t.version, updatedAt: Number(t.updatedAt) || 0 } : null;
  } catch {
    return null;
  }
}

/** Reads a stored pace leniently: absent or unreadable = none (the policy's limits). */
export function parsePace(raw: string | undefined): Pace | null {
  if (!raw) return null;
  try {
    const value = JSON.parse(raw) as Pace;
    return typeof value.concurrency === 'number' ? value : null;
  } catch {
    return null;
  }
}

/**
 * Parses an endpoint hash, opening its sealed secrets with `box`; returns null for an empty hash.
 * The marks the claim reads on the hash (`lined`, `orgGate`: claim-marks.ts) are not part of the
 * record.
 */
export function parseEndpoint(h: Record<string, string>, box: SecretBox): EndpointRecord | null {
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
    secrets: parseSecrets(h.secrets, box, h.orgId ?? '', h.id),
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
    pace: parsePace(h.pace),
    transformation: parseTransformation(h.transformation),
    ...(optionalNumber(h.lastTransformationVersion) !== null ? { lastTransformationVersion: Number(h.lastTransformationVersion) } : {}),
    request: parseRequestSettings(h.request) ?? NO_REQUEST_SETTINGS,
    requestSecrets: decodeRequestSecrets(h.requestSecrets, box, h.orgId ?? '', h.id),
    ...(h.oauthTokenFetchedAt ? { oauthTokenFetchedAt: Number(h.oauthTokenFetchedAt) } : {}),
  };
}

/**
 * An event as its hash's fields (compact records): its id and org id are in the key, a null
 * idempotency key is left out, and of an envelope built by `buildEnvelope` only the data and the
 * timestamp are stored (the timestamp is the creation time, so `createdAt` is not stored either;
 * nor the timestamp when it is the time in the event's id). `deliveryIds` is their count when they
 * are the event's id plus 1, 2, … (derived-ids.ts). create-event.lua stores a value longer than 64 bytes (the envelope,
 * the delivery ids of a wide fan-out) as pieces, so the hash stays listpack-encoded; read it with
 * `hgetallBuffer` and `joinSplitValues`.
 */
export function eventHashFields(e: EventRecord): string[] {
  const { id: _idInKey, orgId: _orgInKey, envelope, createdAt, deliveryIds, ...rest } = e;
  const parts = envelopeParts(e);
  const ids = storedDeliveryIds(e.id, deliveryIds);
  // The envelope's wrapper (id, type, timestamp) is rebuilt on read: only its data is stored, and
  // its timestamp only when it is not the time in the event's id.
  if (parts) return compactHashFields({ ...rest, deliveryIds: ids, timestamp: parts.timestamp === timestampOfId(e.id) ? null : parts.timestamp, data: parts.dataJson });
  return compactHashFields({ ...rest, deliveryIds: ids, envelope, createdAt });
}

/**
 * The envelope timestamp (ISO 8601, as `buildEnvelope` writes it) of the time in an id; null when
 * it has no ULID time or the year is not four digits (compact-hash.lua's `isoOfMs` writes those only).
 */
function timestampOfId(id: string): string | null {
  const ms = idTimeOf(id);
  if (ms === null) return null;
  const iso = new Date(ms).toISOString();
  return /^[0-9]{4}-/.test(iso) ? iso : null;
}

/**
 * The envelope as `buildEnvelope` (packages/shared) made it from this event's id, type and
 * creation time: `{"id":"<id>","type":"<type>","timestamp":"<ISO>","data":<data>}`. Returns its
 * data and timestamp when the envelope is exactly that (so {@link envelopeOf} rebuilds it byte for
 * byte), else null (it is then stored whole).
 */
function envelopeParts(e: EventRecord): { timestamp: string; dataJson: string } | null {
  if (!Number.isFinite(e.createdAt)) return null;
  const timestamp = new Date(e.createdAt).toISOString();
  const head = envelopeHead(e.id, e.type, timestamp);
  if (head === null || !e.envelope.startsWith(head) || !e.envelope.endsWith('}')) return null;
  const dataJson = e.envelope.slice(head.length, -1);
  return dataJson.length > 0 ? { timestamp, dataJson } : null;
}

/** The envelope up to its data; null when id or type would need JSON escapes (create-event.lua's rebuild has none). */
function envelopeHead(id: string, type: string, timestamp: string): string | null {
  if (JSON.stringify(id) !== `"${id}"` || JSON.stringify(type) !== `"${type}"`) return null;
  return `{"id":"${id}","type":"${type}","timestamp":"${timestamp}","data":`;
}

/**
 * The envelope of an event hash: stored whole, or rebuilt from its data, id, type and timestamp
 * (compact records; claim-attempt.lua rebuilds it the same way). Null when neither is stored.
 */
export function envelopeOf(h: Record<string, string>, id: string): string | null {
  if (h.envelope !== undefined) return h.envelope;
  const timestamp = h.timestamp ?? timestampOfId(id);
  if (h.data === undefined || timestamp === null) return null;
  return `${envelopeHead(id, h.type ?? '', timestamp) ?? ''}${h.data}}`;
}

/**
 * Parses an event hash (its split values joined); returns null for an empty hash. `orgId` and `id`
 * are the org and event whose key it was read from (compact records do not store them; older ones do).
 */
export function parseEvent(h: Record<string, string>, orgId = '', id = ''): EventRecord | null {
  if (!h.id && !h.createdAt && !h.timestamp && h.data === undefined && !h.dataErasedAt) return null;
  const eventId = h.id ?? id;
  return {
    id: eventId,
    orgId: h.orgId ?? orgId,
    type: h.type ?? '',
    envelope: envelopeOf(h, eventId) ?? '',
    createdAt: h.createdAt !== undefined ? Number(h.createdAt) : h.timestamp !== undefined ? Date.parse(h.timestamp) || 0 : (idTimeOf(eventId) ?? 0),
    idempotencyKey: optionalString(h.idempotencyKey),
    // Their count when they are the event's id plus 1, 2, … (derived-ids.ts), else their JSON.
    deliveryIds: deliveryIdsOfEvent(h.deliveryIds, eventId),
    ...(h.dataErasedAt ? { dataErasedAt: Number(h.dataErasedAt) } : {}),
  };
}

/**
 * Parses an org hash, opening its sealed check secret with `box` (one that does not open reads as
 * absent); returns null for an empty hash.
 */
export function parseOrg(h: Record<string, string>, box: SecretBox): OrgRecord | null {
  if (!h.id) return null;
  const checkSecret = h.preAttemptCheckSecret ? openSealedField(box, h.preAttemptCheckSecret, h.id, h.id, 'preAttemptCheckSecret') : null;
  return {
    id: h.id,
    name: h.name ?? '',
    status: (h.status ?? 'active') as OrgRecord['status'],
    createdAt: Number(h.createdAt ?? 0),
    ...(h.disabledEventTypes ? { disabledEventTypes: parseStringList(h.disabledEventTypes) } : {}),
    ...(h.preAttemptCheckUrl ? { preAttemptCheckUrl: h.preAttemptCheckUrl } : {}),
    ...(checkSecret ? { preAttemptCheckSecret: checkSecret } : {}),
    ...(h.eventValidation === 'warn' || h.eventValidation === 'reject' ? { eventValidation: h.eventValidation } : {}),
    ...(h.requireKnownEventTypes === '1' ? { requireKnownEventTypes: true } : {}),
    ...(h.portal ? { portal: parseJsonObject(h.portal) as unknown as PortalBranding } : {}),
    ...(h.portalPolicies ? { portalPolicies: parseJsonObject(h.portalPolicies) as unknown as PortalPolicies } : {}),
  };
}

/** A stored JSON object; anything else reads as `{}`. */
function parseJsonObject(raw: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(raw);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
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
 * The check secret is opened with `box`; one that does not open becomes '' (never a skipped
 * check), which signing refuses: the attempt records `internal:secret_unreadable`.
 */
export function parseOrgAttemptSettings(
  orgId: string,
  disabledEventTypes: string | null,
  checkUrl: string | null,
  checkSecret: string | null,
  box: SecretBox,
): OrgAttemptSettings {
  return {
    disabledEventTypes: disabledEventTypes ? parseStringList(disabledEventTypes) : [],
    check: checkUrl && checkSecret ? { url: checkUrl, secret: openSealedField(box, checkSecret, orgId, orgId, 'preAttemptCheckSecret') ?? '' } : null,
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

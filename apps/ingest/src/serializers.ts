import { DEFAULT_SIGNATURE_SCHEME, extractRawField, fullPace, publicKeyOf, signatureSchemeOf, type SignatureScheme } from '@postern/shared';
import type { apiKeyResponse, attemptResponse, deliveryResponse, endpointResponse, eventSummaryResponse, Json, notificationResponse, platformKeyResponse } from './response-schemas.js';
import { requestSettingsJson } from './request-settings-input.js';
import { transformationJson } from './transformation-input.js';
import { isWaitingForNextAttempt, type ApiKeyRecord, type PlatformKeyRecord, type NotificationRecord, type AttemptRecord, type DeliveryRecord, type EndpointRecord, type EventRecord } from '@postern/store';

/** Epoch ms → ISO 8601 string; null stays null. */
export function iso(ms: number): string;
export function iso(ms: number | null): string | null;
export function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

/**
 * How an endpoint signs now, from its current secret's prefix (Standard Webhooks): the scheme, and
 * for `ed25519` the `whpk_` public key a receiver verifies `v1a` signatures with (null for
 * `hmac-sha256`, whose secret is never shown here).
 */
export function signingJson(e: Pick<EndpointRecord, 'secrets'>): { signatureScheme: SignatureScheme; publicKey: string | null } {
  const current = e.secrets.find((s) => s.expiresAt === null)?.secret;
  if (current === undefined) return { signatureScheme: DEFAULT_SIGNATURE_SCHEME, publicKey: null };
  return { signatureScheme: signatureSchemeOf(current) ?? DEFAULT_SIGNATURE_SCHEME, publicKey: publicKeyOf(current) };
}

/** An endpoint as the API shows it: no secrets (an Ed25519 public key is not one), times as ISO strings, health fields flat. */
export function endpointJson(e: EndpointRecord): Json<typeof endpointResponse> {
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    eventTypes: e.eventTypes,
    status: e.status,
    policyName: e.policyName,
    policy: e.policy,
    ...signingJson(e),
    ...requestSettingsJson(e.request, e.oauthTokenFetchedAt ?? null),
    createdAt: iso(e.createdAt),
    updatedAt: iso(e.updatedAt),
    consecutiveFailures: e.consecutiveFailures,
    failureStreakStartedAt: iso(e.failureStreakStartedAt),
    lastSuccessAt: iso(e.lastSuccessAt),
    lastFailureAt: iso(e.lastFailureAt),
    failedAttempts: e.failedAttempts,
    consecutiveFailedAttempts: e.consecutiveFailedAttempts,
    disabledAt: iso(e.disabledAt),
    disabledReason: e.disabledReason,
    ...paceJson(e),
    transformation: transformationJson(e.transformation),
  };
}

/**
 * The endpoint's pace under `pacing: "adaptive"` (issue 13): `pace` `{perSecond, concurrency}` —
 * what the sender allows it now (`perSecond` null = no rate bound) — and `pausedUntil`, the end of
 * the last Retry-After pause (a past time: not paused). Both null without adaptive pacing.
 */
function paceJson(e: EndpointRecord): { pace: { perSecond: number | null; concurrency: number } | null; pausedUntil: string | null } {
  if (e.policy.pacing !== 'adaptive') return { pace: null, pausedUntil: null };
  const pace = e.pace ?? fullPace(e.policy);
  const perSecond = pace.perSecond === null ? null : Math.round(pace.perSecond * 100) / 100;
  return { pace: { perSecond, concurrency: Math.max(1, Math.floor(pace.concurrency)) }, pausedUntil: iso(pace.pausedUntil) };
}

/**
 * A delivery as every answer shows it (docs/architecture.md's delivery fields). The number of
 * attempts is `attemptCount` everywhere; only `GET /v1/deliveries/:id` adds `attempts`, the list
 * of them. `waitingForNextAttempt`: a retry is scheduled and `POST …/send-now` would bring it forward.
 */
export function deliveryJson(d: DeliveryRecord): Json<typeof deliveryResponse> {
  return {
    id: d.id,
    eventId: d.eventId,
    eventType: d.eventType,
    endpointId: d.endpointId,
    status: d.status,
    attemptCount: d.attempts,
    nextAttemptAt: d.status === 'pending' ? iso(d.nextAttemptAt) : null,
    held: d.held,
    lastResponseStatus: d.lastResponseStatus,
    lastError: d.lastError,
    lastDurationMs: d.lastDurationMs,
    deliveredAt: iso(d.deliveredAt),
    createdAt: iso(d.createdAt),
    finishedAt: iso(d.finishedAt),
    redeliveredFromId: d.redeliveredFromId,
    cancelReason: d.cancelReason,
    isTest: d.isTest,
    waitingForNextAttempt: isWaitingForNextAttempt(d),
    orderingKey: d.orderingKey ?? null,
    sequence: d.sequence ?? null,
    dataErased: d.dataErased === true,
  };
}

/**
 * One attempt of a delivery: its outcome, the request headers sent (signature included; null when
 * nothing was sent) and `response` — `{headers, headersTruncated, body, bodyTruncated}`, the body
 * excerpt as UTF-8 text — where the policy's `keepResponseBody` kept it, else null. `cancelReason`
 * (`check:<reason>`) is present only on an attempt that sent nothing because the org's check cancelled it.
 */
export function attemptJson(a: AttemptRecord): Json<typeof attemptResponse> {
  return {
    number: a.number,
    startedAt: iso(a.startedAt),
    durationMs: a.durationMs,
    responseStatus: a.responseStatus,
    error: a.error,
    requestHeaders: a.requestHeaders,
    response: a.response,
    // Only on the attempt the org's check cancelled: every other attempt keeps its shape.
    ...(a.cancelReason ? { cancelReason: a.cancelReason } : {}),
    ...(a.transformation ? { transformation: { version: a.transformation.version, request: a.transformation.request ? { method: a.transformation.request.method, url: a.transformation.request.url, contentType: a.transformation.request.contentType, headers: a.transformation.request.headers, body: a.transformation.request.bodyExcerpt, bodyTruncated: a.transformation.request.bodyTruncated } : null } } : {}),
  };
}

/**
 * An event as JSON text: its envelope fields, the data exactly as delivered, `envelope` (the exact
 * body every delivery sent, as a string), `dataErased`/`dataErasedAt` and its delivery ids; `extra`
 * fields are appended. An erased event shows `data` and `envelope` null, its timestamp from `createdAt`.
 */
export function eventJson(e: EventRecord, extra: Record<string, unknown> = {}): string {
  // Erased: the metadata is kept, the payload (and so the envelope) is not.
  if (e.dataErasedAt !== undefined) {
    return JSON.stringify({ id: e.id, type: e.type, timestamp: iso(e.createdAt), data: null, createdAt: iso(e.createdAt), idempotencyKey: e.idempotencyKey, envelope: null, dataErased: true, dataErasedAt: iso(e.dataErasedAt), deliveryIds: e.deliveryIds, ...extra });
  }
  // Built as text so `data` is the producer's JSON byte for byte (big integers, `1.0`, duplicate
  // keys), exactly as delivered, rather than what a parse-and-stringify would make of it.
  const dataText = extractRawField(e.envelope, 'data') ?? 'null';
  const timestamp = extractRawField(e.envelope, 'timestamp') ?? 'null';
  const head = JSON.stringify({ id: e.id, type: e.type });
  const tail = JSON.stringify({ createdAt: iso(e.createdAt), idempotencyKey: e.idempotencyKey, envelope: e.envelope, dataErased: false, dataErasedAt: null, deliveryIds: e.deliveryIds, ...extra });
  return `${head.slice(0, -1)},"timestamp":${timestamp},"data":${dataText},${tail.slice(1)}`;
}

/** An event as listed by `GET /v1/events`: no data, no envelope (open the event for those). */
export function eventSummaryJson(e: EventRecord): Json<typeof eventSummaryResponse> {
  return { id: e.id, type: e.type, createdAt: iso(e.createdAt), idempotencyKey: e.idempotencyKey, deliveryCount: e.deliveryIds.length };
}

/** An API key as listed: its prefix, never the key or its hash. */
export function apiKeyJson(k: Omit<ApiKeyRecord, 'orgId' | 'keyHash'>): Json<typeof apiKeyResponse> {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    scopes: k.scopes,
    createdAt: iso(k.createdAt),
    revokedAt: iso(k.revokedAt),
  };
}

/** A platform key as the API shows it: prefix only, never the key or its hash (an API key's fields). */
export function platformKeyJson(k: PlatformKeyRecord): Json<typeof platformKeyResponse> {
  return apiKeyJson(k);
}

/** A breaker notification as `GET /v1/notifications` lists it. */
export function notificationJson(n: NotificationRecord): Json<typeof notificationResponse> {
  return {
    id: n.id,
    kind: n.kind,
    endpointId: n.endpointId,
    endpointUrl: n.endpointUrl,
    reason: n.reason,
    consecutiveFailures: n.consecutiveFailures,
    deliveriesAffected: n.deliveriesAffected,
    createdAt: iso(n.createdAt),
  };
}

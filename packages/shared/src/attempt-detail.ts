import { errorFamily } from './error-codes.js';
import type { Policy } from './policy.js';
import type { TransformedRequestRecord } from './transformation.js';

/**
 * What the delivery log keeps of one attempt's exchange besides its status (issue 14): the
 * request headers sent, and the response's headers and body excerpt where the policy's
 * `keepResponseBody` says so. Pure rules; the transport reads, the store writes.
 */

/** What varies between the requests Postern sends, besides ids and the attempt number. */
export interface SentRequestFields {
  userAgent: string;
  /** `webhook-timestamp`, seconds since the epoch. */
  timestampS: number;
  /** The whole `webhook-signature` header (one `v1,…` per secret that signs). */
  signature: string;
  /** `webhook-ordering-key`: the event's ordering key; absent when it has none. */
  orderingKey?: string;
  /** `webhook-sequence`: the delivery's number in its ordering key's line at the endpoint (`per-key` policies); absent otherwise. */
  sequence?: number;
  /**
   * The endpoint's own headers as the log shows them (`shownRequestHeaders`: static headers, secret
   * values and `authorization` as `••••`); absent when it has none.
   */
  addedHeaders?: Record<string, string>;
  /**
   * The request as the endpoint's transformation shaped it (method, URL, content type, its extra
   * headers, body excerpt) and the version that ran; absent when no transformation ran.
   */
  transformed?: TransformedRequestRecord;
}

/**
 * The headers of one attempt's request, in the order sent (Standard Webhooks plus Postern's own
 * `webhook-attempt`, `webhook-delivery-id`, `webhook-request-id`, and for an event with an ordering
 * key `webhook-ordering-key` and, under a `per-key` policy, `webhook-sequence`). The one place they are built: the
 * sender sends them, and the delivery log rebuilds them from {@link SentRequestFields} (all it
 * stores), so the log shows exactly what was sent. A transformation's content type replaces
 * `application/json` and its headers come last; they never carry a `webhook-*` name
 * (`planTransformedRequest` refuses those), so Postern's own headers stay as built.
 */
export function webhookRequestHeaders(ids: { eventId: string; deliveryId: string; attemptNumber: number }, sent: SentRequestFields): Record<string, string> {
  return {
    'content-type': sent.transformed?.contentType ?? 'application/json',
    'user-agent': sent.userAgent,
    'webhook-id': ids.eventId,
    'webhook-timestamp': String(sent.timestampS),
    'webhook-signature': sent.signature,
    'webhook-attempt': String(ids.attemptNumber),
    'webhook-delivery-id': ids.deliveryId,
    'webhook-request-id': `${ids.deliveryId}.${ids.attemptNumber}`,
    ...(sent.orderingKey !== undefined ? { 'webhook-ordering-key': sent.orderingKey } : {}),
    ...(sent.sequence !== undefined ? { 'webhook-sequence': String(sent.sequence) } : {}),
    ...sent.addedHeaders,
    ...sent.transformed?.headers,
  };
}

/**
 * Whether a failed attempt shows in the endpoint's health (`lastFailureAt`, `failedAttempts`,
 * `consecutiveFailedAttempts`): every error but Postern's own faults (`internal:*`, never held
 * against the endpoint) and the endpoint's own transformation failing (`transformation_failed:*`,
 * its configuration, not the receiver's health). Unlike the breaker's streak it ignores what the policy counts (4xx only,
 * test events, deliveries): the health shows every failure the endpoint had.
 */
export function isEndpointFailure(error: string | null): boolean {
  return error !== null && errorFamily(error) !== 'internal' && errorFamily(error) !== 'transformation_failed';
}

/** Bounds on the response headers kept with an attempt: count, bytes of one value, bytes in all. */
export const RESPONSE_HEADER_LIMITS = { maxHeaders: 32, maxValueBytes: 512, maxTotalBytes: 4096 } as const;

/** Response headers as kept: lower-case name → value (repeated headers joined with `, `). */
export type KeptHeaders = Record<string, string>;

/**
 * Whether an attempt keeps its response headers and body excerpt under `mode`: `all` always,
 * `none` never, `failed` when the attempt did not succeed (`error` non-null).
 */
export function keepsResponse(mode: Policy['keepResponseBody'] | undefined, error: string | null): boolean {
  // Endpoints stored before the field existed read as the default, `failed`.
  const m = mode ?? 'failed';
  return m === 'all' || (m === 'failed' && error !== null);
}

/**
 * Bounds response headers to {@link RESPONSE_HEADER_LIMITS}: the first `maxHeaders` in the order
 * received, each value cut to `maxValueBytes` (marked with `…`), and none once `maxTotalBytes` of
 * names and values are reached. Returns the kept headers and whether any were left out or cut.
 */
export function boundHeaders(headers: Record<string, string | string[] | undefined>): { headers: KeptHeaders; truncated: boolean } {
  const out: KeptHeaders = {};
  let total = 0;
  let count = 0;
  let truncated = false;
  for (const [name, raw] of Object.entries(headers)) {
    if (raw === undefined) continue;
    let value = Array.isArray(raw) ? raw.join(', ') : raw;
    if (Buffer.byteLength(value) > RESPONSE_HEADER_LIMITS.maxValueBytes) {
      value = `${Buffer.from(value).subarray(0, RESPONSE_HEADER_LIMITS.maxValueBytes).toString('utf8')}…`;
      truncated = true;
    }
    const size = name.length + Buffer.byteLength(value);
    if (count >= RESPONSE_HEADER_LIMITS.maxHeaders || total + size > RESPONSE_HEADER_LIMITS.maxTotalBytes) {
      truncated = true;
      continue;
    }
    out[name.toLowerCase()] = value;
    total += size;
    count += 1;
  }
  return { headers: out, truncated };
}

import {
  MAX_CHECK_ANSWER_BYTES,
  checkRequestBody,
  planFromCheckAnswer,
  signatureHeader,
  validateEndpointUrl,
  type CheckPlan,
} from '@postern/shared';
import type { DeliveryRecord, OrgAttemptSettings } from '@postern/store';
import { checkDestination, type LookupAll } from './destination-check.js';
import type { DeliveryTransport } from './http-transport.js';

/** What {@link askPreAttemptCheck} needs: the sender's transport and address rules. */
export interface CheckDeps {
  transport: DeliveryTransport;
  classifyAddress: (address: string) => string | null;
  lookupAll?: LookupAll;
  userAgent: string;
  /** The check's whole answer within this, ms (`PRE_ATTEMPT_CHECK_TIMEOUT_MS`). */
  checkTimeoutMs: number;
}

/**
 * Asks the org's pre-attempt check URL about one attempt (issue 16) and reads its answer with
 * `planFromCheckAnswer`. The request is a signed POST like a webhook (Standard Webhooks headers,
 * the org's check secret; `webhook-id` is `<deliveryId>.<attempt>.check`), its destination is
 * checked like an endpoint's (the URL rules, then every resolved address, then again at connect
 * time by the transport), redirects are not followed and the whole answer must come within
 * `checkTimeoutMs`. Any failure is a `fault` plan (`internal:check_…`); never throws.
 *
 * @param envelope the event's envelope (null when the event is gone: `internal:event_missing`)
 * @param nowMs when the request is signed, epoch ms
 */
export async function askPreAttemptCheck(
  deps: CheckDeps,
  input: { check: NonNullable<OrgAttemptSettings['check']>; delivery: DeliveryRecord; attemptNumber: number; envelope: string | null; nowMs: number },
): Promise<CheckPlan> {
  const { check, delivery, attemptNumber } = input;
  if (input.envelope === null) return { kind: 'fault', error: 'internal:event_missing' };
  const parsed = validateEndpointUrl(check.url);
  if (!parsed.ok) return { kind: 'fault', error: 'internal:check_unsafe_url' };
  const refused = await checkDestination(parsed.url, deps.classifyAddress, deps.lookupAll);
  if (refused) return { kind: 'fault', error: refused.startsWith('unsafe_url') ? 'internal:check_unsafe_url' : 'internal:check_unreachable' };

  const bodyOpen = delivery.frozenEnvelope === undefined;
  const body = checkRequestBody({ eventId: delivery.eventId, eventType: delivery.eventType, endpointId: delivery.endpointId, deliveryId: delivery.id, attempt: attemptNumber, bodyOpen });
  const msgId = `${delivery.id}.${attemptNumber}.check`;
  const timestampS = Math.floor(input.nowMs / 1000);
  let signature: string;
  try {
    signature = signatureHeader({ secrets: [check.secret], msgId, timestampS, body });
  } catch {
    return { kind: 'fault', error: 'internal:secret_unreadable' };
  }
  // The transport reports failures as results; a throw would be a bug, and still only a fault.
  const result = await deps.transport
    .send({
      url: parsed.url.toString(),
      body,
      headers: { 'content-type': 'application/json', 'user-agent': deps.userAgent, 'webhook-id': msgId, 'webhook-timestamp': String(timestampS), 'webhook-signature': signature },
      timeout: { ms: deps.checkTimeoutMs, measures: 'whole-response' },
      redirects: { follow: false },
      maxResponseBytesRead: MAX_CHECK_ANSWER_BYTES,
      keepResponseBody: 'all',
    })
    .catch(() => ({ kind: 'error' as const, code: 'delivery_failed' }));
  const response =
    result.kind === 'error'
      ? result
      : { kind: 'response' as const, status: result.status, body: result.detail?.body ?? '', bodyTruncated: result.detail?.bodyTruncated ?? false };
  return planFromCheckAnswer(response, { envelope: delivery.frozenEnvelope ?? input.envelope, bodyOpen });
}

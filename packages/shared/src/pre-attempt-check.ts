import { z } from 'zod';
import { extractRawField } from './envelope.js';
import { EVENT_TYPE_GROUP_PATTERN, MAX_EVENT_TYPE_LENGTH, eventTypeSchema } from './event-types.js';

/**
 * Org settings that act before an attempt (issue 16): event-type switches and the producer's
 * pre-attempt check. Everything here is pure; the sender calls the check URL and carries out the
 * plans, the store keeps the settings in the org's hash.
 */

/** When an endpoint's deliveries ask the org's check URL (the policy's `preAttemptCheck`). */
export type PreAttemptCheckMode = 'none' | 'first' | 'every';

/** Most entries `disabledEventTypes` may hold. */
export const MAX_DISABLED_EVENT_TYPES = 100;

/** Largest check answer read, bytes: a longer one is a Postern-side fault (`internal:check_answer_too_large`). */
export const MAX_CHECK_ANSWER_BYTES = 256 * 1024;

/** Default of the sender's `PRE_ATTEMPT_CHECK_TIMEOUT_MS`: the check's whole answer within this, ms. */
export const DEFAULT_CHECK_TIMEOUT_MS = 3_000;

/** Longest `reason` of a cancel answer, characters. */
export const MAX_CHECK_REASON_LENGTH = 64;

const SWITCH_MESSAGE = 'each entry must be an event type (invoice.paid) or a group ending in ".*" (invoice.*)';

/**
 * zod schema for an org's `disabledEventTypes`: at most 100 entries, each an exact event type
 * (`timesheet.approved`) or a group `prefix.*` (`expense.*` switches off `expense.created` and
 * `expense.report.filed`, not `expense` itself). `*` alone is refused: suspending the org is the
 * way to stop everything. Duplicates are dropped, keeping first positions.
 */
export const disabledEventTypesSchema = z
  .array(
    z.string({ error: SWITCH_MESSAGE }).max(MAX_EVENT_TYPE_LENGTH, { error: SWITCH_MESSAGE }).refine((s) => EVENT_TYPE_GROUP_PATTERN.test(s) || eventTypeSchema.safeParse(s).success, { error: SWITCH_MESSAGE }),
    { error: 'disabledEventTypes must be an array of event types or "prefix.*" groups' },
  )
  .max(MAX_DISABLED_EVENT_TYPES, { error: `disabledEventTypes holds at most ${MAX_DISABLED_EVENT_TYPES} entries` })
  .transform((list) => [...new Set(list)]);

/**
 * Whether `type` is switched off by the org's `disabledEventTypes`: an entry equal to it, or a
 * `prefix.*` entry whose `prefix.` starts it. claim-attempt.lua applies the same rule before an
 * attempt; ingest applies it at fan-out.
 */
export function isEventTypeDisabled(disabled: readonly string[] | undefined, type: string): boolean {
  if (!disabled || disabled.length === 0) return false;
  return disabled.some((entry) => (entry.endsWith('.*') ? type.startsWith(entry.slice(0, -1)) : entry === type));
}

/**
 * Whether the check is asked before this attempt: never under `none` or when the org has no check
 * URL; under `every` before each attempt (a redelivery's too); under `first` until an answer said
 * send, which is when the body is frozen — so a delivery with a frozen body (a redelivery carries
 * its original's) is not asked again.
 */
export function shouldAskCheck(input: { mode: PreAttemptCheckMode | undefined; checkUrl: string | null; hasFrozenEnvelope: boolean }): boolean {
  const mode = input.mode ?? 'none';
  if (mode === 'none' || input.checkUrl === null) return false;
  return mode === 'every' || !input.hasFrozenEnvelope;
}

/** The JSON body Postern POSTs to the check URL. Times are ISO 8601 UTC. */
export interface CheckRequest {
  eventId: string;
  eventType: string;
  endpointId: string;
  deliveryId: string;
  /** The attempt about to be made, 1-based (a redelivery starts again at 1). */
  attempt: number;
  /** True when a `data` answer would still set this delivery's body (nothing frozen yet). */
  bodyOpen: boolean;
}

/** The check request's body text (signed like a webhook: its `webhook-id` is `<deliveryId>.<attempt>.check`). */
export function checkRequestBody(req: CheckRequest): string {
  return JSON.stringify({ eventId: req.eventId, eventType: req.eventType, endpointId: req.endpointId, deliveryId: req.deliveryId, attempt: req.attempt, bodyOpen: req.bodyOpen });
}

/**
 * What a check answer means for the attempt:
 * - `send`: go on; `envelope` is the body to freeze and send (only when the answer had `data` and
 *   the body was still open), else undefined (send the frozen body, or the event's envelope);
 * - `cancel`: end the delivery, nothing sent, with `cancelReason` `check:<reason>`;
 * - `fault`: Postern's own fault (`internal:check_…`): retried on the schedule, never charged to
 *   the endpoint.
 */
export type CheckPlan =
  | { kind: 'send'; envelope?: string }
  | { kind: 'cancel'; cancelReason: string }
  | { kind: 'fault'; error: string };

const REASON_PATTERN = /^[a-z0-9][a-z0-9_]*$/;

/** What came back from the check URL, as the transport read it. */
export type CheckResponse =
  | { kind: 'response'; status: number; body: string; bodyTruncated: boolean }
  | { kind: 'error'; code: string };

/**
 * Reads the check's answer into a {@link CheckPlan}. Any transport error is
 * `internal:check_timeout` (timed out) or `internal:check_unreachable`; an `unsafe_url:*` refusal
 * `internal:check_unsafe_url`; a non-2xx status `internal:check_status`; more than
 * {@link MAX_CHECK_ANSWER_BYTES} `internal:check_answer_too_large`; text that is not a JSON object
 * with `action` `send` or `cancel` (a cancel needs a snake_case `reason` of at most 64 characters)
 * `internal:check_bad_answer`. A `send` with `data` rebuilds `envelope` (the event's envelope with
 * that `data`) only when `bodyOpen`; otherwise the data is ignored. Never throws.
 */
export function planFromCheckAnswer(response: CheckResponse, input: { envelope: string; bodyOpen: boolean }): CheckPlan {
  if (response.kind === 'error') {
    if (response.code.startsWith('unsafe_url')) return { kind: 'fault', error: 'internal:check_unsafe_url' };
    return { kind: 'fault', error: response.code === 'timeout' ? 'internal:check_timeout' : 'internal:check_unreachable' };
  }
  if (response.bodyTruncated || Buffer.byteLength(response.body) > MAX_CHECK_ANSWER_BYTES) return { kind: 'fault', error: 'internal:check_answer_too_large' };
  if (response.status < 200 || response.status >= 300) return { kind: 'fault', error: 'internal:check_status' };
  let answer: unknown;
  try {
    answer = JSON.parse(response.body);
  } catch {
    return { kind: 'fault', error: 'internal:check_bad_answer' };
  }
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return { kind: 'fault', error: 'internal:check_bad_answer' };
  const { action, reason, data } = answer as { action?: unknown; reason?: unknown; data?: unknown };
  if (action === 'cancel') {
    if (typeof reason !== 'string' || reason.length > MAX_CHECK_REASON_LENGTH || !REASON_PATTERN.test(reason)) return { kind: 'fault', error: 'internal:check_bad_answer' };
    return { kind: 'cancel', cancelReason: `check:${reason}` };
  }
  if (action !== 'send') return { kind: 'fault', error: 'internal:check_bad_answer' };
  if (data === undefined || !input.bodyOpen) return { kind: 'send' };
  const envelope = envelopeWithData(input.envelope, JSON.stringify(data));
  return envelope === null ? { kind: 'fault', error: 'internal:event_missing' } : { kind: 'send', envelope };
}

/**
 * What an attempt sends, once the check (if asked) has answered:
 * - `send` these bytes (null: the event is gone, which the send stage records as
 *   `internal:event_missing`); `freeze`: store them with the delivery first, so every later
 *   attempt and redelivery sends exactly them;
 * - `cancel` with `check:<reason>`;
 * - `unsent`: nothing is sent and the attempt fails with `error` (the check's `internal:check_…`
 *   fault, or `payload_too_large` for a body the check's data made larger than `maxPayloadBytes`).
 */
export type AttemptBodyPlan =
  | { kind: 'send'; envelope: string | null; freeze: boolean }
  | { kind: 'cancel'; cancelReason: string }
  | { kind: 'unsent'; error: string };

/**
 * Decides the body of an attempt. Without a check (`check` null) the frozen body, else the event's
 * envelope. With one: its fault or cancel as they are; a send keeps a frozen body, or freezes the
 * body the answer built (or the event's envelope) at this, the first send.
 */
export function planAttemptBody(input: { check: CheckPlan | null; frozenEnvelope: string | undefined; envelope: string | null; maxPayloadBytes: number | null }): AttemptBodyPlan {
  const { check, frozenEnvelope, envelope } = input;
  if (check === null) return { kind: 'send', envelope: frozenEnvelope ?? envelope, freeze: false };
  if (check.kind === 'fault') return { kind: 'unsent', error: check.error };
  if (check.kind === 'cancel') return check;
  if (frozenEnvelope !== undefined) return { kind: 'send', envelope: frozenEnvelope, freeze: false };
  const chosen = check.envelope ?? envelope;
  if (chosen === null) return { kind: 'unsent', error: 'internal:event_missing' };
  if (input.maxPayloadBytes !== null && Buffer.byteLength(chosen) > input.maxPayloadBytes) return { kind: 'unsent', error: 'payload_too_large' };
  return { kind: 'send', envelope: chosen, freeze: true };
}

/**
 * The event's envelope with its `data` replaced by `dataJson`, the other fields (`id`, `type`,
 * `timestamp`) byte for byte as they were; null when the envelope cannot be read.
 */
export function envelopeWithData(envelope: string, dataJson: string): string | null {
  const id = extractRawField(envelope, 'id');
  const type = extractRawField(envelope, 'type');
  const timestamp = extractRawField(envelope, 'timestamp');
  if (id === undefined || type === undefined || timestamp === undefined) return null;
  return `{"id":${id},"type":${type},"timestamp":${timestamp},"data":${dataJson}}`;
}

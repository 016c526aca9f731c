import { extractRawArrayElements, type EventTypeDefinition } from '@postern/shared';
import type { EndpointRecord, OrgRecord } from '@postern/store';
import { Router } from 'express';
import { z } from 'zod';
import { acceptEvents, type AcceptedEvent, type AcceptInput, type AcceptOutcome } from '../accept-event.js';
import { idempotencyKeyHeader } from '../action-idempotency.js';
import { ApiError, invalidRequest, toApiError } from '../api-error.js';
import type { AppDeps } from '../app-deps.js';
import { requireScope } from '../auth.js';
import type { EventValidators } from '../event-validation.js';
import { requestLogger } from '../request-logging.js';
import { createEventBody } from '../schemas.js';
import { acceptInputOf, catalogWarnings, logAccepted, parseEventInput } from './events.js';

/** Most events in one `POST /v1/events/batch`. */
export const MAX_BATCH_EVENTS = 100;

const EVENTS_MESSAGE = `must be an array of 1 to ${MAX_BATCH_EVENTS} events`;

/**
 * `POST /v1/events/batch` body as a whole: `events`, 1 to {@link MAX_BATCH_EVENTS} values. Each
 * value is then checked on its own as `POST /v1/events` checks its body, so a bad event fails alone.
 */
const batchEnvelope = z.strictObject({
  events: z
    .array(z.unknown(), { error: EVENTS_MESSAGE })
    .min(1, EVENTS_MESSAGE)
    .max(MAX_BATCH_EVENTS, `at most ${MAX_BATCH_EVENTS} events in one batch; send the rest in another`),
});

/** `POST /v1/events/batch` body as documented: 1 to {@link MAX_BATCH_EVENTS} events, each a `POST /v1/events` body. */
export const eventBatchBody = z.strictObject({
  events: z.array(createEventBody).min(1).max(MAX_BATCH_EVENTS),
});

/**
 * A refused event's message as the batch says it: the field it starts with named under
 * `events[i]` (`type: …` → `events[2].type: …`, `body: …` → `events[3]: …`), so a producer finds
 * the event and the field in the request it sent. Messages that name no field are kept.
 */
export function batchItemMessage(index: number, message: string): string {
  const field = /^(body|[A-Za-z_$][\w$-]*(?:\.[\w$-]+)*): /.exec(message)?.[1];
  if (field === undefined) return message;
  return `events[${index}]${field === 'body' ? '' : `.${field}`}${message.slice(field.length)}`;
}

/** One event's result in a batch's 207: what `POST /v1/events` would have answered it, with that answer's status. */
export type BatchResult = ({ status: 202; idempotentReplayed?: true } & AcceptedEvent) | { status: number; error: { code: string; message: string } & Record<string, unknown> };

/**
 * `POST /v1/events/batch`: up to {@link MAX_BATCH_EVENTS} events of the calling org in one request,
 * each checked and accepted exactly as `POST /v1/events` would (`acceptEvents`: one Redis round
 * trip for all the events, one for all their jobs). 207 `{results}`, one per event in request
 * order. The request itself is refused (400) when its body is not `{events: [...]}` with 1 to 100
 * events, or when it carries an `Idempotency-Key` header (each event takes its own key); 413 past
 * `MAX_BODY_BYTES` (the body parser). Behind API-key auth, scope `events:write`.
 */
export function eventBatchRoutes(deps: AppDeps, validators: EventValidators): Router {
  const router = Router();

  router.post('/v1/events/batch', requireScope('events:write'), async (req, res) => {
    if (req.body === null || typeof req.body !== 'object' || Array.isArray(req.body)) {
      throw new ApiError(400, 'invalid_request', 'body: must be a JSON object {events: [...]}');
    }
    const body = batchEnvelope.safeParse(req.body);
    if (!body.success) throw invalidRequest(body.error);
    // One key for many events would make the second a replay of the first: refuse it rather than guess.
    if (idempotencyKeyHeader(req) !== undefined) {
      throw new ApiError(400, 'invalid_request', 'Idempotency-Key: a batch takes no header key; give each event its own idempotencyKey');
    }
    const events = body.data.events;
    const rawEvents = extractRawArrayElements(res.locals.rawBody as string, 'events');
    if (rawEvents?.length !== events.length) throw new Error('the raw text of the batch does not match its parsed events');

    const orgId = res.locals.orgId as string;
    const org = res.locals.org as OrgRecord | undefined;
    const endpoints = res.locals.orgEndpoints as readonly EndpointRecord[];
    const traceparent = deps.tracer ? req.get('traceparent') : undefined;
    // Each type's catalog entry read once for the whole batch, all in one round trip.
    const definitions = new Map<string, Promise<EventTypeDefinition | null>>();
    const definitionOf = (type: string) => {
      let definition = definitions.get(type);
      if (!definition) definitions.set(type, (definition = deps.store.eventTypes.get(orgId, type)));
      return definition;
    };
    const checked = await Promise.all(
      events.map(async (event, i): Promise<{ input: AcceptInput } | { error: unknown }> => {
        try {
          const item = parseEventInput(event, rawEvents[i]!, () => undefined);
          const warnings = await catalogWarnings(deps, validators, org, orgId, item.type, item.data, definitionOf);
          return { input: { ...acceptInputOf(item, orgId, org, endpoints, warnings), traceparent } };
        } catch (error) {
          return { error };
        }
      }),
    );

    const inputs = checked.flatMap((c) => ('input' in c ? [c.input] : []));
    const accepted = await acceptEvents(deps, inputs);
    let next = 0;

    // A failure shared by many events (Redis unreachable) is one error: logged once.
    const answers = new Map<unknown, ApiError>();
    const logger = requestLogger(req, deps.logger);
    const results = checked.map((c, i): BatchResult => {
      const outcome: AcceptOutcome = 'input' in c ? accepted[next++]! : { ok: false, error: c.error };
      if (outcome.ok) {
        logAccepted(deps, orgId, (c as { input: AcceptInput }).input.type, outcome);
        return { status: 202, ...outcome.answer, ...(outcome.replayed ? { idempotentReplayed: true as const } : {}) };
      }
      let answer = answers.get(outcome.error);
      if (!answer) answers.set(outcome.error, (answer = toApiError(outcome.error, deps.redis, logger, { path: req.path })));
      return { status: answer.status, error: { code: answer.code, message: batchItemMessage(i, answer.message), ...answer.extra } };
    });
    // As the single route would say it: the longest wait any refused event was asked for.
    const waits = [...answers.values()].filter((a) => a.status === 503).map((a) => a.retryAfterS ?? 5);
    if (waits.length > 0) res.setHeader('retry-after', String(Math.max(...waits)));
    res.status(207).json({ results });
  });

  return router;
}

import { decideEventValidation, eventTypeSchema, extractRawField, type EventTypeDefinition, needsCatalogLookup, needsSchemaCheck, OPERATIONAL_EVENT_TYPES, TEST_EVENT_TYPE, type SchemaIssue } from '@postern/shared';
import type { EndpointRecord, OrgRecord } from '@postern/store';
import { Router } from 'express';
import { z } from 'zod';
import { ApiError, invalidRequest, notFound } from '../api-error.js';
import { acceptEvent, type AcceptInput, type AcceptResult } from '../accept-event.js';
import type { AppDeps } from '../app-deps.js';
import { ownEndpoint } from './endpoints.js';
import { createEventBody, pageQuery } from '../schemas.js';
import { deliveryJson, eventJson, eventSummaryJson } from '../serializers.js';
import { requireScope } from '../auth.js';
import { requireEmptyBody } from '../empty-body.js';
import { actionIdempotency, idempotencyKeyHeader } from '../action-idempotency.js';
import { recordAudit } from '../audit.js';
import type { EventValidators } from '../event-validation.js';

/** `POST /v1/endpoints/:id/send-example` body: the catalog type whose example to send, and which (0-based, default the first). */
export const sendExampleBody = z.strictObject({
  eventType: eventTypeSchema,
  example: z.number({ error: 'example must be an integer 0..4' }).int('example must be an integer 0..4').min(0, 'example must be an integer 0..4').max(4, 'example must be an integer 0..4').default(0),
});

/** One event as `POST /v1/events` takes it (and each item of `POST /v1/events/batch`), checked. */
export interface EventInput {
  type: string;
  /** `data` parsed, for the catalog's schema check. */
  data: unknown;
  /** `data` exactly as the producer wrote it. */
  dataJson: string;
  /** The body field, else the `Idempotency-Key` header; null without either. */
  idempotencyKey: string | null;
  orderingKey?: string;
}

/**
 * Checks one event as `POST /v1/events` takes it: `body` parsed, `rawText` the same JSON as written
 * (its `data` is kept byte for byte), `readHeaderKey` the `Idempotency-Key` header if any (read after
 * the body's checks, so a bad body is named first). Throws the route's 400 `invalid_request` naming
 * what is wrong: not an object, a field the schema refuses, a type reserved for Postern's own
 * events, header and body keys that differ.
 */
export function parseEventInput(body: unknown, rawText: string, readHeaderKey: () => string | undefined): EventInput {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new ApiError(400, 'invalid_request', 'body: must be a JSON object {type, data, idempotencyKey?, orderingKey?}');
  }
  const parsed = createEventBody.safeParse(body);
  if (!parsed.success) throw invalidRequest(parsed.error);
  const { type, data, idempotencyKey: bodyKey, orderingKey } = parsed.data;
  if (OPERATIONAL_EVENT_TYPES.includes(type)) {
    throw new ApiError(400, 'invalid_request', `type: ${type} is reserved for Postern's own operational webhooks`);
  }
  if (type === TEST_EVENT_TYPE) {
    throw new ApiError(400, 'invalid_request', `type: ${TEST_EVENT_TYPE} is reserved; use POST /v1/endpoints/:id/test`);
  }
  const dataJson = extractRawField(rawText, 'data');
  if (dataJson === undefined) throw new ApiError(400, 'invalid_request', 'data: is required (any JSON value)');
  const headerKey = readHeaderKey();
  // Header bytes arrive as Latin-1: a non-ASCII key would be stored garbled and never match again.
  if (headerKey !== undefined && !/^[\x20-\x7e]*$/.test(headerKey)) {
    throw new ApiError(400, 'invalid_request', 'Idempotency-Key: header must be printable ASCII, space to ~, no tab or other control character (send other keys as the body field idempotencyKey)');
  }
  // Two different keys: using either one would silently ignore the other. Refuse, naming both.
  if (headerKey !== undefined && bodyKey !== undefined && headerKey !== bodyKey) {
    throw new ApiError(400, 'invalid_request', 'Idempotency-Key: the header and the body field idempotencyKey differ; send one of them, or the same value in both');
  }
  // A key that is silently dropped would turn a safe retry into a duplicate event: refuse it.
  if (headerKey !== undefined && bodyKey === undefined && (headerKey.length < 1 || headerKey.length > 200)) {
    throw new ApiError(400, 'invalid_request', 'Idempotency-Key: header must be 1 to 200 characters');
  }
  return { type, data, dataJson, idempotencyKey: bodyKey ?? headerKey ?? null, ...(orderingKey !== undefined ? { orderingKey } : {}) };
}

/** What {@link acceptEvent} takes for a checked event of the calling org (`res.locals`). */
export function acceptInputOf(item: EventInput, orgId: string, org: OrgRecord | undefined, endpoints: readonly EndpointRecord[], warnings: SchemaIssue[]): AcceptInput {
  return {
    warnings,
    orgId,
    type: item.type,
    dataJson: item.dataJson,
    idempotencyKey: item.idempotencyKey,
    orderingKey: item.orderingKey ?? null,
    endpoints,
    disabledEventTypes: org?.disabledEventTypes,
  };
}

/** The `event accepted` log line, at `config.logLevels.event` (debug by default), built only when that level is on. */
export function logAccepted(deps: AppDeps, orgId: string, type: string, { replayed, answer }: AcceptResult): void {
  const level = deps.config.logLevels?.event ?? 'debug';
  if (!deps.logger.isLevelEnabled(level)) return;
  deps.logger[level]({ orgId, eventId: answer.id, type, deliveries: answer.deliveries.length, ...(replayed ? { replayed } : {}) }, 'event accepted');
}

/**
 * The catalog's rule for a new event (`decideEventValidation`): reads the type's entry only when the
 * org validates or accepts known types only, checks `data` with the cached validator, and throws
 * 422 `event_type_unknown` / `event_invalid` (with `error.details`) or returns the warnings.
 * `definitionOf` reads a type's entry (default: from the store; a batch reads each type once).
 */
export async function catalogWarnings(
  deps: AppDeps,
  validators: EventValidators,
  org: OrgRecord | undefined,
  orgId: string,
  type: string,
  data: unknown,
  definitionOf: (type: string) => Promise<EventTypeDefinition | null> = (t) => deps.store.eventTypes.get(orgId, t),
): Promise<SchemaIssue[]> {
  const settings = { eventValidation: org?.eventValidation ?? 'off', requireKnownEventTypes: org?.requireKnownEventTypes ?? false };
  if (!needsCatalogLookup(settings)) return [];
  const definition = await definitionOf(type);
  const issues = definition !== null && needsSchemaCheck(settings, definition) ? validators.check(orgId, definition, data) : [];
  const decision = decideEventValidation({ type, settings, definition, issues });
  if (decision.kind === 'refuse') throw new ApiError(decision.status, decision.code, decision.message, decision.issues.length > 0 ? { details: decision.issues } : undefined);
  return decision.warnings;
}

const isoTime = (name: string) => z.iso.datetime({ offset: true, error: `${name} must be an ISO 8601 date-time, e.g. 2026-11-29T12:00:00Z` });

/**
 * `GET /v1/events` query: paging (`limit` 1..100, default 50; `cursor`), and filters — `type` (exact),
 * `idempotencyKey` (exact), `endpointId` (events fanned out to that endpoint of the org),
 * `since`/`until` (ISO 8601, inclusive; `since` after `until` is refused).
 */
export const eventListQuery = pageQuery
  .extend({
    type: eventTypeSchema.optional(),
    idempotencyKey: z.string().min(1, 'idempotencyKey must be 1 to 200 characters').max(200, 'idempotencyKey must be 1 to 200 characters').optional(),
    endpointId: z.string().regex(/^ep_[0-9A-Za-z]+$/, 'endpointId must be an endpoint id (ep_…)').optional(),
    since: isoTime('since').optional(),
    until: isoTime('until').optional(),
  })
  .strict()
  .refine((q) => q.since === undefined || q.until === undefined || Date.parse(q.since) <= Date.parse(q.until), { message: 'since must not be after until', path: ['since'] });

/** `POST /v1/events`, `GET /v1/events`, `GET /v1/events/:id`, `POST /v1/endpoints/:id/test`. Behind API-key auth. */
export function eventRoutes(deps: AppDeps, validators: EventValidators): Router {
  const router = Router();

  router.post('/v1/events', requireScope('events:write'), async (req, res) => {
    const item = parseEventInput(req.body, res.locals.rawBody as string, () => idempotencyKeyHeader(req));
    const org = res.locals.org as OrgRecord | undefined;
    const orgId = res.locals.orgId as string;
    const warnings = await catalogWarnings(deps, validators, org, orgId, item.type, item.data);
    const { replayed, answer } = await acceptEvent(deps, {
      ...acceptInputOf(item, orgId, org, res.locals.orgEndpoints as readonly EndpointRecord[], warnings),
      // Read only when tracing is on: the producer's trace, continued by the accepting span.
      traceparent: deps.tracer ? req.get('traceparent') : undefined,
    });
    if (replayed) res.setHeader('idempotent-replayed', 'true');
    logAccepted(deps, orgId, item.type, { replayed, answer });
    res.status(202).json(answer);
  });

  router.get('/v1/events', requireScope('webhooks:read'), async (req, res) => {
    const q = eventListQuery.safeParse(req.query);
    if (!q.success) throw invalidRequest(q.error, '', 'query');
    const { endpointId, since, until, ...rest } = q.data;
    // Pages of one endpoint's events go by delivery id, the org's by event id: a cursor of the
    // other list would read as the end of this one.
    const cursorKind = endpointId !== undefined ? 'dlv' : 'evt';
    if (rest.cursor !== undefined && !rest.cursor.startsWith(`${cursorKind}_`)) {
      throw new ApiError(400, 'invalid_request', `cursor: cursor must be an id from a previous page of this list (${cursorKind}_…${endpointId !== undefined ? ', with the same endpointId' : ''})`);
    }
    if (endpointId !== undefined) await ownEndpoint(deps, res, endpointId);
    const page = await deps.store.eventIndex.list(res.locals.orgId as string, {
      ...rest,
      endpointId,
      sinceMs: since === undefined ? undefined : Date.parse(since),
      untilMs: until === undefined ? undefined : Date.parse(until),
    });
    res.json({ data: page.items.map(eventSummaryJson), nextCursor: page.nextCursor });
  });

  router.get('/v1/events/:id', requireScope('webhooks:read'), async (req, res) => {
    const event = await deps.store.events.get(res.locals.orgId as string, req.params.id);
    if (!event || event.orgId !== res.locals.orgId) throw notFound('event');
    // Every delivery of the event: its first fan-out and every redelivery since, oldest first.
    const redeliveryIds = await deps.store.deliveries.redeliveryIds(event.orgId, event.id);
    const deliveries = await deps.store.deliveries.getMany(event.orgId, [...event.deliveryIds, ...redeliveryIds].sort());
    res.type('application/json').send(eventJson({ ...event, deliveryIds: deliveries.map((d) => d.id) }, { deliveries: deliveries.map(deliveryJson) }));
  });

  router.post('/v1/endpoints/:id/test', requireScope('webhooks:write'), requireEmptyBody, actionIdempotency(deps, 'test'), async (req, res) => {
    const endpoint = await ownEndpoint(deps, res, req.params.id);
    if (endpoint.status !== 'active') throw new ApiError(409, 'endpoint_inactive', `endpoint is ${endpoint.status}; resume it first`);
    const dataJson = JSON.stringify({ endpointId: endpoint.id, message: 'This is a test event from Postern.' });
    const { answer } = await acceptEvent(deps, { orgId: endpoint.orgId, type: TEST_EVENT_TYPE, dataJson, idempotencyKey: null, onlyEndpoint: endpoint, traceparent: deps.tracer ? req.get('traceparent') : undefined });
    await recordAudit(deps, req, res, { action: 'endpoint.test_sent', target: { type: 'endpoint', id: endpoint.id } });
    res.status(202).json(answer);
  });

  router.post('/v1/endpoints/:id/send-example', requireScope('webhooks:write'), actionIdempotency(deps, 'send-example'), async (req, res) => {
    const endpoint = await ownEndpoint(deps, res, req.params.id);
    const body = sendExampleBody.safeParse(req.body ?? {});
    if (!body.success) throw invalidRequest(body.error);
    if (endpoint.status !== 'active') throw new ApiError(409, 'endpoint_inactive', `endpoint is ${endpoint.status}; resume it first`);
    const definition = await deps.store.eventTypes.get(endpoint.orgId, body.data.eventType);
    if (!definition || definition.archived) throw notFound('event type');
    if (!(body.data.example in definition.examples)) throw new ApiError(409, 'no_example', `${definition.name} has ${definition.examples.length === 0 ? 'no examples' : `examples 0..${definition.examples.length - 1} only`}; add one with PATCH /v1/event-types/${definition.name}`);
    const dataJson = JSON.stringify(definition.examples[body.data.example]);
    // A test event of the example's type: never retried where the policy says so, marked test in the log.
    const { answer } = await acceptEvent(deps, { orgId: endpoint.orgId, type: definition.name, dataJson, idempotencyKey: null, onlyEndpoint: endpoint, traceparent: deps.tracer ? req.get('traceparent') : undefined });
    res.status(202).json(answer);
  });

  return router;
}

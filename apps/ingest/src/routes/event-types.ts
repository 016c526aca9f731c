import { buildAsyncApiDocument, createEventTypeBody, inPlaceSchemaCycle, MAX_EVENT_TYPE_DOCUMENT_BYTES, reservedEventTypeReason, schemaPatterns, updateEventTypeBody, type EventTypeDefinition } from '@postern/shared';
import type { OrgRecord } from '@postern/store';
import { Router } from 'express';
import { z } from 'zod';
import { ApiError, invalidRequest, notFound } from '../api-error.js';
import type { AppDeps } from '../app-deps.js';
import { requireScope } from '../auth.js';
import type { EventValidators } from '../event-validation.js';
import { linearPatternProblem } from '../linear-regexp.js';
import { eventTypeResponse, type Json } from '../response-schemas.js';
import { iso } from '../serializers.js';

/** The path of the catalog's AsyncAPI document; no event type may take its name. */
export const ASYNCAPI_NAME = 'asyncapi.json';

/** `GET /v1/event-types` query: archived entries are left out unless `includeArchived=true`. */
export const eventTypeListQuery = z.strictObject({
  includeArchived: z.enum(['true', 'false'], { error: 'includeArchived must be true or false' }).optional(),
});

/** A catalog entry as every answer shows it. */
export function eventTypeJson(d: EventTypeDefinition): Json<typeof eventTypeResponse> {
  return { name: d.name, description: d.description, group: d.group, schema: d.schema, examples: d.examples, deprecated: d.deprecated, archived: d.archived, version: d.version, createdAt: iso(d.createdAt)!, updatedAt: iso(d.updatedAt)! };
}

/**
 * The checks a definition passes before it is stored: schema and examples together at most
 * {@link MAX_EVENT_TYPE_DOCUMENT_BYTES}; the schema compiles under JSON Schema 2020-12 (400
 * `invalid_schema` with ajv's words); no `$ref` applies a schema to the value it is already
 * checking (`inPlaceSchemaCycle`; 400 `invalid_schema` naming the `$ref`); every pattern compiles on the linear-time engine events are
 * checked with (`linearRegExp`; 400 `invalid_schema` naming it, e.g. `schema.properties.v.pattern`);
 * every example is valid against it (400 `invalid_request` naming `examples.N` and the first
 * failing JSON pointer).
 */
function checkDefinition(validators: EventValidators, d: EventTypeDefinition): void {
  const bytes = Buffer.byteLength(JSON.stringify([d.schema, d.examples]));
  if (bytes > MAX_EVENT_TYPE_DOCUMENT_BYTES) throw new ApiError(400, 'invalid_request', `schema: schema and examples together are ${bytes} bytes; at most ${MAX_EVENT_TYPE_DOCUMENT_BYTES}`);
  if (d.schema === null) return;
  const cycle = inPlaceSchemaCycle(d.schema);
  if (cycle) {
    const chain = [...cycle.through, cycle.through[0]!].map((p) => `#${p}`).join(' → ');
    throw new ApiError(400, 'invalid_schema', `schema${cycle.at.replace(/\//g, '.')}: refers back to the same value without moving into a property or an item (${chain}), so validation would never end; a recursive schema puts the $ref under properties, items or the like`);
  }
  for (const { path, pattern } of schemaPatterns(d.schema)) {
    const problem = linearPatternProblem(pattern);
    if (problem !== null) throw new ApiError(400, 'invalid_schema', `schema${path.replace(/\//g, '.')}: the pattern ${JSON.stringify(pattern)} is not supported: ${problem}`);
  }
  const { compileError, exampleIssues } = validators.checkDefinition(d.schema, d.examples);
  if (compileError !== null) throw new ApiError(400, 'invalid_schema', `schema: not a valid JSON Schema (2020-12): ${compileError}`);
  exampleIssues.forEach((issues, i) => {
    const first = issues[0];
    if (first) throw new ApiError(400, 'invalid_request', `examples.${i}: does not match the schema: ${first.path || '/'} ${first.message}`, { details: issues });
  });
}

/**
 * The org's event catalog (`/v1/event-types`), behind API-key auth:
 * - `POST` (`webhooks:write`) `{name, description, group?, schema?, examples?, deprecated?, archived?}`
 *   → 201 the entry (version 1); 409 `event_type_exists`;
 * - `GET` (`webhooks:read`) → `{data}` by name, archived ones only with `includeArchived=true`;
 * - `GET|PATCH|DELETE /v1/event-types/:name`; a PATCH bumps `version`, so validators compiled for
 *   the old schema are not used again;
 * - `GET /v1/event-types/asyncapi.json` → the catalog as an AsyncAPI 3.0 document.
 */
export function eventTypeRoutes(deps: AppDeps, validators: EventValidators): Router {
  const router = Router();
  const orgIdOf = (res: { locals: Record<string, unknown> }) => res.locals.orgId as string;

  router.post('/v1/event-types', requireScope('webhooks:write'), async (req, res) => {
    const body = createEventTypeBody.safeParse(req.body ?? {});
    if (!body.success) throw invalidRequest(body.error);
    if (body.data.name === ASYNCAPI_NAME) throw new ApiError(400, 'invalid_request', `name: ${ASYNCAPI_NAME} is reserved (the catalog's AsyncAPI document)`);
    const reserved = reservedEventTypeReason(body.data.name);
    if (reserved !== null) throw new ApiError(400, 'invalid_request', `name: ${reserved}; the catalog lists the org's own event types`);
    const now = deps.clock.now();
    const orgId = orgIdOf(res);
    const d: EventTypeDefinition = {
      name: body.data.name,
      description: body.data.description,
      group: body.data.group ?? null,
      schema: body.data.schema ?? null,
      examples: body.data.examples ?? [],
      deprecated: body.data.deprecated ?? false,
      archived: body.data.archived ?? false,
      version: 1,
      createdAt: now,
      updatedAt: now,
    };
    checkDefinition(validators, d);
    if (!(await deps.store.eventTypes.create(orgId, d))) throw new ApiError(409, 'event_type_exists', `name: ${d.name} is already in the catalog; change it with PATCH /v1/event-types/${d.name}`);
    res.status(201).json(eventTypeJson(d));
  });

  router.get('/v1/event-types', requireScope('webhooks:read'), async (req, res) => {
    const q = eventTypeListQuery.safeParse(req.query);
    if (!q.success) throw invalidRequest(q.error, '', 'query');
    const all = await deps.store.eventTypes.list(orgIdOf(res));
    res.json({ data: all.filter((d) => q.data.includeArchived === 'true' || !d.archived).map(eventTypeJson) });
  });

  router.get(`/v1/event-types/${ASYNCAPI_NAME}`, requireScope('webhooks:read'), async (_req, res) => {
    const org = (res.locals.org as OrgRecord | undefined) ?? (await deps.store.orgs.get(orgIdOf(res)));
    const eventTypes = await deps.store.eventTypes.list(orgIdOf(res));
    res.json(buildAsyncApiDocument({ title: org?.portal?.displayName ?? org?.name ?? 'Webhooks', eventTypes }));
  });

  router.get('/v1/event-types/:name', requireScope('webhooks:read'), async (req, res) => {
    const d = await deps.store.eventTypes.get(orgIdOf(res), req.params.name);
    if (!d) throw notFound('event type');
    res.json(eventTypeJson(d));
  });

  router.patch('/v1/event-types/:name', requireScope('webhooks:write'), async (req, res) => {
    const body = updateEventTypeBody.safeParse(req.body ?? {});
    if (!body.success) throw invalidRequest(body.error);
    const orgId = orgIdOf(res);
    const patch = body.data;
    const updated = await deps.store.eventTypes.update(orgId, req.params.name, (current) => {
      const next: EventTypeDefinition = {
        ...current,
        ...(patch.description !== undefined ? { description: patch.description } : {}),
        ...(patch.group !== undefined ? { group: patch.group } : {}),
        ...(patch.schema !== undefined ? { schema: patch.schema } : {}),
        ...(patch.examples !== undefined ? { examples: patch.examples } : {}),
        ...(patch.deprecated !== undefined ? { deprecated: patch.deprecated } : {}),
        ...(patch.archived !== undefined ? { archived: patch.archived } : {}),
        version: current.version + 1,
        updatedAt: deps.clock.now(),
      };
      checkDefinition(validators, next);
      return next;
    });
    if (!updated) throw notFound('event type');
    res.json(eventTypeJson(updated));
  });

  router.delete('/v1/event-types/:name', requireScope('webhooks:write'), async (req, res) => {
    if (!(await deps.store.eventTypes.delete(orgIdOf(res), req.params.name))) throw notFound('event type');
    res.status(204).end();
  });

  return router;
}

import { z } from 'zod';
import { eventTypeSchema } from './event-types.js';
import { isPrintableText, notPrintableMessage } from './printable-text.js';

/**
 * What ingest does with an event whose `data` fails its type's schema (org setting
 * `eventValidation`): `off` never looks; `warn` accepts it and answers with `warnings`;
 * `reject` answers 422 `event_invalid`. Default `off`.
 */
export const EVENT_VALIDATION_MODES = ['off', 'warn', 'reject'] as const;
/** One of {@link EVENT_VALIDATION_MODES}. */
export type EventValidationMode = (typeof EVENT_VALIDATION_MODES)[number];

/** Most examples one event type keeps. */
export const MAX_EVENT_TYPE_EXAMPLES = 5;
/** Largest JSON text of one event type's `schema` plus `examples`, bytes. */
export const MAX_EVENT_TYPE_DOCUMENT_BYTES = 64 * 1024;

const description = z.string({ error: 'description must be a string of 1 to 2000 characters' }).min(1, 'description must be a string of 1 to 2000 characters').max(2000, 'description must be a string of 1 to 2000 characters').refine((v) => isPrintableText(v, { multiline: true }), notPrintableMessage('description', { multiline: true }));
const group = z.string({ error: 'group must be a string of 1 to 100 characters' }).min(1, 'group must be a string of 1 to 100 characters').max(100, 'group must be a string of 1 to 100 characters').refine((v) => isPrintableText(v), notPrintableMessage('group'));
/** A JSON Schema (2020-12): an object or a boolean. Whether it compiles is ingest's check (ajv). */
const jsonSchema = z.union([z.record(z.string(), z.unknown()), z.boolean()], { error: 'schema must be a JSON Schema (2020-12): an object or a boolean' });
const examples = z.array(z.unknown(), { error: `examples must be an array of at most ${MAX_EVENT_TYPE_EXAMPLES} JSON values` }).max(MAX_EVENT_TYPE_EXAMPLES, `examples must be an array of at most ${MAX_EVENT_TYPE_EXAMPLES} JSON values`);
const flag = (name: string) => z.boolean({ error: `${name} must be true or false` });

/** `POST /v1/event-types` body: a new entry of the org's event catalog. */
export const createEventTypeBody = z.strictObject({
  name: eventTypeSchema,
  description,
  group: group.optional(),
  schema: jsonSchema.optional(),
  examples: examples.optional(),
  deprecated: flag('deprecated').optional(),
  archived: flag('archived').optional(),
});

/** `PATCH /v1/event-types/:name` body: any subset; `null` clears `group` or `schema`. The name never changes. */
export const updateEventTypeBody = z.strictObject({
  description: description.optional(),
  group: group.nullable().optional(),
  schema: jsonSchema.nullable().optional(),
  examples: examples.optional(),
  deprecated: flag('deprecated').optional(),
  archived: flag('archived').optional(),
});

/** One entry of an org's event catalog, as stored. Times are epoch ms. */
export interface EventTypeDefinition {
  name: string;
  description: string;
  group: string | null;
  /** JSON Schema (2020-12) of the event's `data`; null = any data. */
  schema: Record<string, unknown> | boolean | null;
  examples: unknown[];
  /** Still accepted, but new subscriptions should not pick it. */
  deprecated: boolean;
  /** Hidden from the catalog customers see; counts as unknown for `requireKnownEventTypes`. */
  archived: boolean;
  /** 1 on creation, +1 on every change: validators are cached per name and version. */
  version: number;
  createdAt: number;
  updatedAt: number;
}

/** A place in `data` where it fails the schema: `path` is a JSON pointer (RFC 6901) into `data`, `''` for the whole value. */
export interface SchemaIssue {
  path: string;
  message: string;
}

/** The org's catalog settings that decide what happens to a new event. */
export interface EventValidationSettings {
  eventValidation: EventValidationMode;
  requireKnownEventTypes: boolean;
}

/** What {@link decideEventValidation} answers: accept (with warnings, maybe empty), or refuse with a status, code and the issues. */
export type EventValidationDecision =
  | { kind: 'accept'; warnings: SchemaIssue[] }
  | { kind: 'refuse'; status: 400 | 422; code: 'event_type_unknown' | 'event_invalid'; message: string; issues: SchemaIssue[] };

/**
 * Whether accepting an event needs the catalog entry of its type at all: not when validation is
 * off and unknown types are allowed (the default), so an org that uses neither pays nothing.
 */
export function needsCatalogLookup(settings: EventValidationSettings): boolean {
  return settings.eventValidation !== 'off' || settings.requireKnownEventTypes;
}

/** Whether `data` must be checked against the type's schema: a live entry with a schema, validation on. */
export function needsSchemaCheck(settings: EventValidationSettings, definition: Pick<EventTypeDefinition, 'schema' | 'archived'> | null): boolean {
  return settings.eventValidation !== 'off' && definition !== null && !definition.archived && definition.schema !== null && definition.schema !== true;
}

/**
 * The catalog's rule for one new event (pure). `definition` is the type's catalog entry (null =
 * none); `issues` the schema check's findings (empty when it passed or did not run).
 *
 * - `requireKnownEventTypes` and no live entry (none, or archived) → 422 `event_type_unknown`;
 * - `reject` and issues → 422 `event_invalid` naming each JSON-pointer path;
 * - `warn` and issues → accepted, the issues as warnings;
 * - a deprecated type is accepted with a warning at path `''` while validation is on.
 *
 * @returns the decision; never throws
 */
export function decideEventValidation(input: {
  type: string;
  settings: EventValidationSettings;
  definition: Pick<EventTypeDefinition, 'deprecated' | 'archived'> | null;
  issues: readonly SchemaIssue[];
}): EventValidationDecision {
  const { type, settings, definition, issues } = input;
  const live = definition !== null && !definition.archived;
  if (settings.requireKnownEventTypes && !live) {
    return { kind: 'refuse', status: 422, code: 'event_type_unknown', message: `type: ${type} is not in the org's event catalog${definition?.archived ? ' (it is archived)' : ''}, and the org accepts only known types`, issues: [] };
  }
  if (settings.eventValidation === 'off') return { kind: 'accept', warnings: [] };
  if (issues.length > 0 && settings.eventValidation === 'reject') {
    return { kind: 'refuse', status: 422, code: 'event_invalid', message: `data does not match the schema of ${type}: ${issues.map((i) => `${i.path || '/'} ${i.message}`).join('; ')}`, issues: [...issues] };
  }
  const warnings = [...issues];
  if (definition?.deprecated) warnings.push({ path: '', message: `${type} is deprecated` });
  return { kind: 'accept', warnings };
}

/** Keywords whose values are data, not subschemas: a `pattern` key inside them is not a pattern. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'examples', 'default']);

/**
 * Every regular expression of a JSON Schema (`pattern` values and `patternProperties` keys, at any
 * depth, not inside `const`, `enum`, `examples` or `default`), as `{path, pattern}` with `path` a
 * JSON pointer into the schema (`/properties/v/pattern`, `/patternProperties/^x_`). Ingest compiles
 * each with its linear-time engine before a schema is stored, to refuse one it cannot run, naming it.
 */
export function schemaPatterns(schema: unknown): { path: string; pattern: string }[] {
  const found: { path: string; pattern: string }[] = [];
  const escape = (segment: string) => segment.replace(/~/g, '~0').replace(/\//g, '~1');
  const walk = (node: unknown, path: string) => {
    if (Array.isArray(node)) {
      node.forEach((child, i) => walk(child, `${path}/${i}`));
      return;
    }
    if (node === null || typeof node !== 'object') return;
    for (const [key, value] of Object.entries(node)) {
      if (DATA_KEYWORDS.has(key)) continue;
      const at = `${path}/${escape(key)}`;
      if (key === 'pattern' && typeof value === 'string') found.push({ path: at, pattern: value });
      if (key === 'patternProperties' && value !== null && typeof value === 'object' && !Array.isArray(value)) {
        for (const p of Object.keys(value)) found.push({ path: `${at}/${escape(p)}`, pattern: p });
      }
      walk(value, at);
    }
  };
  walk(schema, '');
  return found;
}

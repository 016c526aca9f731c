import { z } from 'zod';

/** Longest event type name, in characters. */
export const MAX_EVENT_TYPE_LENGTH = 200;

/** The event type of `POST /v1/endpoints/:id/test` deliveries (vestiarion's test event). */
export const TEST_EVENT_TYPE = 'webhook.test';

/** The filter entry that subscribes an endpoint to every event type. */
export const ALL_EVENT_TYPES = '*';

const EVENT_TYPE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]*$/;

/**
 * A group of event types, `prefix.*`: every type that starts with `prefix.` (`invoice.*` holds
 * `invoice.paid` and `invoice.line.added`, not `invoice` itself). The prefix is written as an
 * event type is; `*` is allowed only as the last segment, after a dot.
 */
export const EVENT_TYPE_GROUP_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]*\.\*$/;
const EVENT_TYPE_MESSAGE =
  `event type must be 1 to ${MAX_EVENT_TYPE_LENGTH} characters: a letter or digit, ` +
  'then letters, digits, "_", ".", ":" or "-"';

/**
 * zod schema for an event type such as `invoice.paid`: 1..200 characters,
 * starting with a letter or digit, then letters, digits, `_`, `.`, `:`, `-`.
 */
export const eventTypeSchema = z
  .string({ error: (issue) => (issue.input === undefined ? `event type is required (1 to ${MAX_EVENT_TYPE_LENGTH} characters: a letter or digit, then letters, digits, "_", ".", ":" or "-")` : EVENT_TYPE_MESSAGE) })
  .min(1, { error: EVENT_TYPE_MESSAGE })
  .max(MAX_EVENT_TYPE_LENGTH, { error: EVENT_TYPE_MESSAGE })
  .regex(EVENT_TYPE_PATTERN, { error: EVENT_TYPE_MESSAGE });

/** The filter for an endpoint created without `eventTypes`: every type. */
export const DEFAULT_EVENT_TYPE_FILTER: readonly string[] = Object.freeze([ALL_EVENT_TYPES]);

/** Most entries an endpoint's event type filter may hold. */
export const MAX_EVENT_TYPE_FILTER_ENTRIES = 100;

/**
 * zod schema for an endpoint's `eventTypes` filter: 1 to 100 entries, each
 * an event type or `*`. An empty list is refused: it would subscribe to
 * nothing, silently; the API's default is `["*"]`. Duplicates are dropped,
 * keeping each entry's first position.
 */
export const eventTypeFilterSchema = z
  .array(z.union([z.literal(ALL_EVENT_TYPES), eventTypeSchema], { error: `each entry must be "*" or a valid event type` }), {
    error: 'eventTypes must be an array of event types',
  })
  .min(1, { error: 'eventTypes must list at least one event type, or ["*"] for every type' })
  .max(MAX_EVENT_TYPE_FILTER_ENTRIES, { error: `eventTypes must have at most ${MAX_EVENT_TYPE_FILTER_ENTRIES} entries` })
  .transform((types) => [...new Set(types)]);

/**
 * Whether an endpoint with this filter receives events of `type`: an exact,
 * case-sensitive name in the filter, or `*`. An empty filter matches
 * nothing: default a missing `eventTypes` to {@link DEFAULT_EVENT_TYPE_FILTER}.
 *
 * @param filter - the endpoint's `eventTypes`.
 * @param type - the event's type.
 */
export function matchesEventTypes(filter: readonly string[], type: string): boolean {
  return filter.some((entry) => entry === ALL_EVENT_TYPES || entry === type);
}

/**
 * Event types Postern itself sends when a breaker trips (its operational webhooks); producers may
 * not post them, and an endpoint receives them only by naming them in its filter (`*` does not
 * match them).
 */
export const OPERATIONAL_EVENT_TYPES: readonly string[] = Object.freeze(['endpoint.paused', 'endpoint.disabled']);

/**
 * Why `type` is not a producer's to use, or null: Postern's operational types
 * ({@link OPERATIONAL_EVENT_TYPES}) and {@link TEST_EVENT_TYPE}. Neither `POST /v1/events` nor the
 * event catalog takes them (400 naming the field).
 */
export function reservedEventTypeReason(type: string): string | null {
  if (OPERATIONAL_EVENT_TYPES.includes(type)) return `${type} is reserved for Postern's own operational webhooks`;
  if (type === TEST_EVENT_TYPE) return `${TEST_EVENT_TYPE} is reserved for test events (POST /v1/endpoints/:id/test)`;
  return null;
}

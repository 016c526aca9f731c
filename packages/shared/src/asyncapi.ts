import type { EventTypeDefinition } from './event-catalog.js';

/** What {@link buildAsyncApiDocument} describes: the org and its live catalog entries. */
export interface AsyncApiInput {
  /** The title: the org's portal display name, else its name. */
  title: string;
  /** The catalog's entries; archived ones are left out. */
  eventTypes: readonly EventTypeDefinition[];
}

/** A message id AsyncAPI accepts (`^[\w\d.\-_]+$`): the event type with anything else as `_`. */
function messageId(name: string): string {
  return name.replace(/[^\w.-]/g, '_');
}

/** A JSON Schema for AsyncAPI's default schema format: its `$schema` and `$id` dropped (the document's own dialect applies). */
function dataSchema(schema: EventTypeDefinition['schema']): Record<string, unknown> | boolean {
  if (schema === null || schema === true) return {};
  if (schema === false) return false;
  const { $schema: _s, $id: _i, ...rest } = schema;
  return rest;
}

/** The Standard Webhooks headers every request carries. */
const HEADERS = {
  type: 'object',
  required: ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
  properties: {
    'webhook-id': { type: 'string', description: 'The event id (evt_…): the same on every attempt and redelivery; deduplicate on it.' },
    'webhook-timestamp': { type: 'string', description: 'Unix seconds, fresh on every attempt.' },
    'webhook-signature': { type: 'string', description: 'Space-separated `v1,<base64 HMAC-SHA256>` (or `v1a,<base64 Ed25519>`) signatures of `<id>.<timestamp>.<body>`.' },
    'webhook-attempt': { type: 'string', description: 'Attempt number, 1-based.' },
    'webhook-delivery-id': { type: 'string', description: 'The delivery id (dlv_…).' },
    'webhook-request-id': { type: 'string', description: '`<delivery id>.<attempt>`: the correlation id in logs.' },
  },
};

/**
 * An AsyncAPI 3.0 document of an org's event catalog, from the receiver's side: one channel (the
 * endpoint URL the customer registers, so no fixed address), one `receive` operation, and one
 * message per live event type whose payload is the envelope Postern POSTs —
 * `{id, type, timestamp, data}` with `data` the type's schema. Examples become message examples,
 * groups become tags, deprecated types say so. Pure; `GET /v1/event-types/asyncapi.json` serves it.
 */
export function buildAsyncApiDocument(input: AsyncApiInput): Record<string, unknown> {
  const live = input.eventTypes.filter((t) => !t.archived);
  const messages: Record<string, unknown> = {};
  for (const t of live) {
    const id = messageId(t.name);
    messages[id] = {
      name: t.name,
      title: t.name,
      summary: t.deprecated ? `Deprecated. ${t.description}` : t.description,
      contentType: 'application/json',
      headers: HEADERS,
      payload: {
        type: 'object',
        required: ['id', 'type', 'timestamp', 'data'],
        properties: {
          id: { type: 'string', description: 'Event id (evt_…).' },
          type: { type: 'string', const: t.name },
          timestamp: { type: 'string', format: 'date-time' },
          data: dataSchema(t.schema),
        },
        ...(t.deprecated ? { deprecated: true } : {}),
      },
      ...(t.group ? { tags: [{ name: t.group }] } : {}),
      ...(t.examples.length > 0 ? { examples: t.examples.map((data, i) => ({ name: `example-${i + 1}`, payload: { id: 'evt_example', type: t.name, timestamp: '2026-01-01T00:00:00Z', data } })) } : {}),
    };
  }
  const refs = Object.fromEntries(Object.keys(messages).map((id) => [id, { $ref: `#/components/messages/${id}` }]));
  return {
    asyncapi: '3.0.0',
    info: {
      title: `${input.title} webhooks`,
      version: '1.0.0',
      description: 'Webhooks this organisation sends: each is an HTTP POST with a JSON envelope, signed per Standard Webhooks.',
    },
    defaultContentType: 'application/json',
    channels: {
      webhooks: {
        address: null,
        title: 'Your endpoint',
        description: 'The URL you registered; every event type arrives here.',
        messages: refs,
      },
    },
    operations: {
      receiveWebhook: {
        action: 'receive',
        channel: { $ref: '#/channels/webhooks' },
        summary: 'Receive a webhook',
        messages: Object.keys(messages).map((id) => ({ $ref: `#/channels/webhooks/messages/${id}` })),
      },
    },
    components: { messages },
  };
}

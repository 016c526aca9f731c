import type { RouteReference } from './route-reference.js';
import { ACCEPTED_EVENT, DELIVERY, ENDPOINT_ID, EVENT_ID, EVENT_TYPE, EVENT_TYPE_WITHOUT_SCHEMA, FAILED_DELIVERY, WAITING_DELIVERY } from './samples.js';

/** The event catalog as AsyncAPI, holding `invoice.paid` only. */
const ASYNCAPI_DOCUMENT = {
        asyncapi: '3.0.0',
        info: {
          title: 'acme webhooks',
          version: '1.0.0',
          description: 'Webhooks this organisation sends: each is an HTTP POST with a JSON envelope, signed per Standard Webhooks.',
        },
        defaultContentType: 'application/json',
        channels: {
          webhooks: {
            address: null,
            title: 'Your endpoint',
            description: 'The URL you registered; every event type arrives here.',
            messages: { 'invoice.paid': { $ref: '#/components/messages/invoice.paid' } },
          },
        },
        operations: {
          receiveWebhook: {
            action: 'receive',
            channel: { $ref: '#/channels/webhooks' },
            summary: 'Receive a webhook',
            messages: [{ $ref: '#/channels/webhooks/messages/invoice.paid' }],
          },
        },
        components: {
          messages: {
            'invoice.paid': {
              name: 'invoice.paid',
              title: 'invoice.paid',
              summary: 'An invoice was paid in full.',
              contentType: 'application/json',
              headers: {
                type: 'object',
                required: ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
                properties: {
                  'webhook-id': { type: 'string', description: 'The event id (evt_…): the same on every attempt and redelivery; deduplicate on it.' },
                  'webhook-timestamp': { type: 'string', description: 'Unix seconds, fresh on every attempt.' },
                  'webhook-signature': {
                    type: 'string',
                    description: 'Space-separated `v1,<base64 HMAC-SHA256>` (or `v1a,<base64 Ed25519>`) signatures of `<id>.<timestamp>.<body>`.',
                  },
                  'webhook-attempt': { type: 'string', description: 'Attempt number, 1-based.' },
                  'webhook-delivery-id': { type: 'string', description: 'The delivery id (dlv_…).' },
                  'webhook-request-id': { type: 'string', description: '`<delivery id>.<attempt>`: the correlation id in logs.' },
                },
              },
              payload: {
                type: 'object',
                required: ['id', 'type', 'timestamp', 'data'],
                properties: {
                  id: { type: 'string', description: 'Event id (evt_…).' },
                  type: { type: 'string', const: 'invoice.paid' },
                  timestamp: { type: 'string', format: 'date-time' },
                  data: {
                    type: 'object',
                    required: ['invoiceId', 'amountCents'],
                    properties: { invoiceId: { type: 'string' }, amountCents: { type: 'integer', minimum: 0 } },
                  },
                },
              },
              tags: [{ name: 'billing' }],
              examples: [
                {
                  name: 'example-1',
                  payload: { id: 'evt_example', type: 'invoice.paid', timestamp: '2026-01-01T00:00:00Z', data: { invoiceId: 'in_1042', amountCents: 4200 } },
                },
              ],
            },
          },
        },
      };

/** Events: sending, reading and erasing them, test events; the org's event catalog. */
export const EVENT_DOCS: Record<string, RouteReference> = {
  'post /v1/events': {
    description: [
      'Sends an event: Postern stores it, makes one delivery for every endpoint of the org subscribed to its type, and answers 202 once they are queued; each delivery is then signed and sent, and retried as its endpoint\'s policy says. `data` is any JSON value, delivered byte for byte.',
      '',
      'With an idempotency key (`Idempotency-Key` header or `idempotencyKey`, 1–200 characters), a repeat within 24 h gets the first answer and makes nothing new, so a producer can retry safely; the same key with a different event is 409 `idempotency_key_reused`. `orderingKey` (1–256 printable ASCII characters) keeps the events that share it in acceptance order at endpoints whose policy orders per key.',
      '',
      'Where the org validates events against its catalog, `data` that fails its type\'s schema is refused (422 `event_invalid`, with JSON pointers in `error.details`) or accepted with `warnings`; a type outside the catalog is 422 `event_type_unknown` when the org accepts known types only. Types Postern sends itself (`webhook.test`, `endpoint.paused`, `endpoint.disabled`) cannot be posted.',
    ].join('\n'),
    request: { type: 'invoice.paid', data: { invoiceId: 'in_1042', amountCents: 4200 }, idempotencyKey: 'invoice-1042-paid' },
    responses: { 202: ACCEPTED_EVENT },
  },
  'post /v1/events/batch': {
    description: [
      'Sends up to 100 events in one request. Each is what `POST /v1/events` takes and is handled exactly as that route would handle it alone (its own `idempotencyKey` and `orderingKey`, catalog validation, fan-out), so a bad event fails alone and the others are accepted.',
      '',
      'The answer is 207 with one result per event, in request order: `{status: 202, id, deliveries, warnings?, idempotentReplayed?}` once the event, its deliveries and their jobs are stored, or `{status, error: {code, message}}` with the status and error `POST /v1/events` would have answered (400 `invalid_request`, 409 `idempotency_key_reused`, 422 `event_invalid` or `event_type_unknown`, 503 `service_unavailable` or `not_durable`: send that event again with its idempotency key).',
      '',
      "The events of a batch are written in order, so a later one with an earlier one's idempotency key replays it, and events that share an ordering key keep their order. The whole request is refused only when its body is not `{events: [...]}` with 1 to 100 events, or when it carries an `Idempotency-Key` header (give each event its own key instead).",
    ].join('\n'),
    request: {
      events: [
        { type: 'invoice.paid', data: { invoiceId: 'in_1042', amountCents: 4200 }, idempotencyKey: 'invoice-1042-paid' },
        { type: 'invoice.paid', data: { invoiceId: 'in_1043', amountCents: 990 }, idempotencyKey: 'invoice-1043-paid', orderingKey: 'customer-77' },
        { type: 'webhook.test', data: {} },
      ],
    },
    responses: {
      207: {
        results: [
          // The first was sent before with the same key: its first answer again.
          { status: 202, ...ACCEPTED_EVENT, idempotentReplayed: true },
          {
            status: 202,
            id: 'evt_01M8TFFD2HZ8EPE7BRPZZ23QQP',
            deliveries: [
              { id: 'dlv_01M8TFFD2HZ8EPE7BRPZZ23QQQ', endpointId: ENDPOINT_ID },
              { id: 'dlv_01M8TFFD2HZ8EPE7BRPZZ23QQR', endpointId: FAILED_DELIVERY.endpointId },
              { id: 'dlv_01M8TFFD2HZ8EPE7BRPZZ23QQS', endpointId: WAITING_DELIVERY.endpointId },
            ],
          },
          { status: 400, error: { code: 'invalid_request', message: 'events[2].type: webhook.test is reserved; use POST /v1/endpoints/:id/test' } },
        ],
      },
    },
  },
  'get /v1/events': {
    description:
      "The org's events, newest first, filtered by exact `type`, `idempotencyKey`, `endpointId` (events fanned out to that endpoint) and time (`since`, `until`: ISO 8601, inclusive). A call looks at 1,000 events at most, so a sparse filter may give a short, even empty, page with a `nextCursor`: follow it until it is null. An event leaves the list with its last delivery (one that reached no endpoint, after 30 days).",
    responses: {
      200: {
        data: [
          { id: 'evt_01M8TECZ5SAZ96SAG8TDF59RT6', type: 'invoice.paid', createdAt: '2026-12-02T03:57:30.169Z', idempotencyKey: null, deliveryCount: 1 },
          { id: 'evt_01M8TECZ2FZK4RF7X3W2FHZ3BM', type: 'webhook.test', createdAt: '2026-12-02T03:57:30.063Z', idempotencyKey: null, deliveryCount: 1 },
          { id: EVENT_ID, type: 'invoice.paid', createdAt: '2026-12-02T03:57:29.874Z', idempotencyKey: 'invoice-1042-paid', deliveryCount: 3 },
        ],
        nextCursor: null,
      },
    },
  },
  'get /v1/events/:id': {
    description:
      "An event: its `data` byte for byte, `envelope` (the exact body its deliveries send, as a string), and every delivery of it, redeliveries included, oldest first. Where the org's pre-attempt check froze another body for a delivery, that delivery shows it as `frozenEnvelope`. Once the event's data is erased, `data` and `envelope` are null.",
    responses: {
      200: {
        id: EVENT_ID,
        type: 'invoice.paid',
        timestamp: '2026-12-02T03:57:29.874Z',
        data: { invoiceId: 'in_1042', amountCents: 4200 },
        createdAt: '2026-12-02T03:57:29.874Z',
        idempotencyKey: 'invoice-1042-paid',
        envelope: `{"id":"${EVENT_ID}","type":"invoice.paid","timestamp":"2026-12-02T03:57:29.874Z","data":{"invoiceId":"in_1042","amountCents":4200}}`,
        dataErased: false,
        dataErasedAt: null,
        deliveryIds: [DELIVERY.id, FAILED_DELIVERY.id, WAITING_DELIVERY.id],
        deliveries: [DELIVERY, FAILED_DELIVERY, WAITING_DELIVERY],
      },
    },
  },
  'delete /v1/events/:id/data': {
    description:
      "Erases an event's payload: its `data`, its envelope, every delivery's frozen body and every stored response body. The delivery log keeps its metadata (ids, times, statuses), and the event's pending deliveries are cancelled with `data_erased`. Erasing again changes nothing. While one of its deliveries is being attempted the answer is 409 `in_flight` and nothing is erased: retry after `Retry-After`.",
    responses: { 200: { eventId: EVENT_ID, dataErased: true, dataErasedAt: '2026-12-02T03:57:32.963Z', cancelledDeliveries: 1 } },
  },
  'delete /v1/events/data': {
    description: 'Erases, as `DELETE /v1/events/:id/data` does, every event of the org accepted under one idempotency key: for when a producer keys events by the record they carry.',
    responses: { 200: { data: [{ eventId: 'evt_01M8TED1Y2AAP59SWSNDAP7K64', dataErased: true, dataErasedAt: '2026-12-02T03:57:33.030Z', cancelledDeliveries: 0 }] } },
  },
  'post /v1/endpoints/:id/test': {
    description:
      "Sends a `webhook.test` event to this endpoint only, to check that it receives and verifies Postern's requests. It is marked as a test in the log, and the endpoint's policy decides whether it is retried and whether its failures count towards the breaker. A paused or disabled endpoint is 409 `endpoint_inactive`. Takes no body.",
    responses: { 202: { id: 'evt_01M8TECZ2FZK4RF7X3W2FHZ3BM', deliveries: [{ id: 'dlv_01M8TECZ2FZK4RF7X3W2FHZ3BN', endpointId: ENDPOINT_ID }] } },
  },
  'post /v1/endpoints/:id/send-example': {
    description:
      "Sends one of a catalog type's examples (`example`: its index, default 0) to this endpoint only, as a test event of that type, so a receiver can be tried on the real shape of an event. 404 for a type not in the catalog (or archived), 409 `no_example` when the type has no example at that index, 409 `endpoint_inactive` for a paused or disabled endpoint.",
    request: { eventType: 'invoice.paid', example: 0 },
    responses: { 202: { id: 'evt_01M8TECZ5SAZ96SAG8TDF59RT6', deliveries: [{ id: 'dlv_01M8TECZ5SAZ96SAG8TDF59RT7', endpointId: ENDPOINT_ID }] } },
  },

  'post /v1/event-types': {
    description:
      "Adds an event type to the org's catalog: a description, an optional `group`, a JSON Schema (2020-12) of its `data` and up to 5 examples, each valid against the schema (else 400 naming `examples.N`). A schema that does not compile, holds a pattern the linear-time engine (RE2 syntax: no backreferences, lookahead or lookbehind) cannot run, or a `$ref` that comes back to the same value, is 400 `invalid_schema` naming it; Postern's own types (`endpoint.paused`, `endpoint.disabled`, `webhook.test`) are reserved (400 naming `name`); schema and examples together are 64 KB at most. The org's `eventValidation` decides what a schema does to new events.",
    request: {
      name: 'invoice.paid',
      description: 'An invoice was paid in full.',
      group: 'billing',
      schema: EVENT_TYPE.schema,
      examples: EVENT_TYPE.examples,
    },
    responses: { 201: EVENT_TYPE },
  },
  'get /v1/event-types': {
    description: "The org's event catalog, by name; archived entries only with `includeArchived=true`.",
    responses: { 200: { data: [EVENT_TYPE, EVENT_TYPE_WITHOUT_SCHEMA] } },
  },
  'get /v1/event-types/asyncapi.json': {
    description:
      "The catalog as an AsyncAPI 3.0 document, for receivers' code generators and docs: one message per type (archived ones left out), its payload the envelope Postern sends with `data` as the type's schema, its headers the Standard Webhooks ones.",
    responses: { 200: ASYNCAPI_DOCUMENT },
  },
  'get /v1/event-types/:name': {
    description: 'One entry of the catalog, archived or not.',
    responses: { 200: EVENT_TYPE },
  },
  'patch /v1/event-types/:name': {
    description:
      'Changes any field but the name (`null` clears `group` or `schema`); `version` goes up by one, and new events are checked against the new schema from then on. `deprecated` keeps the type working, with a warning on each new event of it while the org validates events; `archived` hides it from the list and the AsyncAPI document, stops its schema being checked, and makes it unknown where the org accepts known types only.',
    request: { deprecated: true },
    responses: { 200: { ...EVENT_TYPE_WITHOUT_SCHEMA, deprecated: true, version: 2, updatedAt: '2026-12-02T03:57:28.981Z' } },
  },
  'delete /v1/event-types/:name': {
    description: 'Removes an event type from the catalog. Events of it are still accepted, unless the org accepts known types only (`requireKnownEventTypes`).',
    responses: {},
  },
};

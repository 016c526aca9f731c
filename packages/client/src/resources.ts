import type { LiveStreamMessage, LiveStreamOptions, LiveStreamQuery } from './live-stream.js';
import type * as T from './api-types.js';
import type { RawJson } from './raw-json.js';
import { PagedList, type Page } from './paging.js';
import type { CallOptions, RequestOptions, RequestSpec } from './transport.js';

/** Makes one call; the resources share it (see `transport.ts`). */
export type Call = <R>(spec: RequestSpec) => Promise<R>;

/** Makes one call whose answer is NDJSON, yielding its lines (see `requestLines` in `transport.ts`). */
/** Opens a live stream (`live-stream.ts`). */
export type LiveCall = (query: LiveStreamQuery, options: LiveStreamOptions) => AsyncGenerator<LiveStreamMessage>;

export type LinesCall = <R>(spec: Omit<RequestSpec, 'body' | 'idempotencyKey'>) => AsyncGenerator<R>;

/** One line of `GET /v1/deliveries/export`: a delivery with its attempts, as `deliveries.get` shows it, without a frozen body. */
export type ExportedDelivery = Omit<T.DeliveryWithAttempts, 'frozenEnvelope'>;

const seg = (id: string) => encodeURIComponent(id);

function paged<Item>(call: Call, path: string, query: Record<string, string | number | undefined>, signal?: AbortSignal): PagedList<Item> {
  const start = query.cursor as string | undefined;
  return new PagedList<Item>((cursor) => call<Page<Item>>({ method: 'GET', path, query: { ...query, cursor: cursor ?? start }, signal }));
}

/** `POST /v1/events`, `GET /v1/events`, `GET /v1/events/:id`. */
export class Events {
  constructor(private readonly call: Call) {}

  /**
   * Sends an event to every subscribed endpoint: 202 once it and its deliveries are stored and
   * queued. With `idempotencyKey`, a repeat within 24 h returns the first answer and sends nothing.
   * Needs `events:write`.
   */
  create(body: T.CreateEventBody, options: CallOptions = {}): Promise<T.AcceptedEvent> {
    return this.call({ method: 'POST', path: '/v1/events', body, ...options });
  }

  /**
   * Sends up to 100 events in one request (`POST /v1/events/batch`). Each event is what
   * {@link create} takes and is handled exactly as `create` would handle it alone — its own
   * `idempotencyKey` and `orderingKey`, catalog checks, fan-out — so a bad one fails alone. Resolves
   * with `{results}`, one per event in the order given: `{status: 202, id, deliveries, warnings?,
   * idempotentReplayed?}` for an accepted event, or `{status, error: {code, message}}` with the
   * status and error `create` would have thrown for it (400, 409 `idempotency_key_reused`, 422, 503
   * `service_unavailable` or `not_durable`: send those again, with their keys). Results are not
   * retried one by one; the call itself is retried as `create` is (a 503 for the whole request;
   * a network error only when every event carries an `idempotencyKey`). Needs `events:write`.
   *
   * @param events - 1 to 100 events; `data` may be a {@link RawJson} to send it byte for byte.
   * @throws PosternApiError 400 `invalid_request` for no events or more than 100, 413
   *   `payload_too_large` past the server's `MAX_BODY_BYTES`; the errors of any call.
   */
  createMany(events: readonly T.CreateEventBody[], options: RequestOptions = {}): Promise<T.EventBatchResults> {
    const keyed = events.length > 0 && events.every((e) => typeof e.idempotencyKey === 'string');
    return this.call({ method: 'POST', path: '/v1/events/batch', body: { events }, safeToRepeat: keyed, ...options });
  }

  /** One event: its data, the exact envelope sent, every delivery of it. 404 `not_found` for another org's. */
  get(id: string, options: RequestOptions = {}): Promise<T.Event> {
    return this.call({ method: 'GET', path: `/v1/events/${seg(id)}`, ...options });
  }

  /** The org's events, newest first, filtered; iterate it with `for await`. A page may be short when filters match sparsely. */
  list(query: T.EventListQuery = {}, options: RequestOptions = {}): PagedList<T.EventSummary> {
    return paged(this.call, '/v1/events', { ...query }, options.signal);
  }

  /**
   * Erases an event's payload (envelope, frozen bodies, stored responses), keeping the delivery
   * log's metadata; its pending deliveries are cancelled with `data_erased`. Needs
   * `webhooks:write`. 404 `not_found`; 409 `in_flight` while one of its deliveries is being
   * attempted (nothing erased: try again).
   */
  eraseData(id: string, options: RequestOptions = {}): Promise<T.EventErasure> {
    return this.call({ method: 'DELETE', path: `/v1/events/${seg(id)}/data`, ...options });
  }

  /** Erases the payload of every event of the org accepted under `idempotencyKey`, as {@link eraseData} does. 404 when there is none. */
  eraseDataByIdempotencyKey(idempotencyKey: string, options: RequestOptions = {}): Promise<T.EventErasures> {
    return this.call({ method: 'DELETE', path: '/v1/events/data', query: { idempotencyKey }, ...options });
  }
}

/** Endpoints: CRUD, secrets, pause/resume, test events, timelines, bulk redelivery. */
export class Endpoints {
  constructor(private readonly call: Call) {}

  /** Registers an endpoint; the answer carries its `secret`. Needs `webhooks:write`. */
  create(body: T.CreateEndpointBody, options: RequestOptions = {}): Promise<T.CreatedEndpoint> {
    return this.call({ method: 'POST', path: '/v1/endpoints', body, ...options });
  }

  /** The org's endpoints; iterate with `for await`. */
  list(query: T.PageQuery = {}, options: RequestOptions = {}): PagedList<T.Endpoint> {
    return paged(this.call, '/v1/endpoints', { ...query }, options.signal);
  }

  /** One endpoint with its health. */
  get(id: string, options: RequestOptions = {}): Promise<T.Endpoint> {
    return this.call({ method: 'GET', path: `/v1/endpoints/${seg(id)}`, ...options });
  }

  /** Changes an endpoint's URL, event types, policy or description. */
  update(id: string, body: T.UpdateEndpointBody, options: RequestOptions = {}): Promise<T.UpdatedEndpoint> {
    return this.call({ method: 'PATCH', path: `/v1/endpoints/${seg(id)}`, body, ...options });
  }

  /** Deletes an endpoint; its queued deliveries end cancelled. */
  async delete(id: string, options: RequestOptions = {}): Promise<void> {
    await this.call({ method: 'DELETE', path: `/v1/endpoints/${seg(id)}`, ...options });
  }

  /** The current signing secret and how many rotated-out ones still sign. Needs `webhooks:write`. */
  secret(id: string, options: RequestOptions = {}): Promise<T.EndpointSecret> {
    return this.call({ method: 'GET', path: `/v1/endpoints/${seg(id)}/secret`, ...options });
  }

  /** A new secret (of `body.signatureScheme`, default the current scheme); the old one keeps signing for the grace period. */
  rotateSecret(id: string, body: T.RotateSecretBody = {}, options: CallOptions = {}): Promise<T.RotatedSecret> {
    return this.call({ method: 'POST', path: `/v1/endpoints/${seg(id)}/rotate-secret`, body, ...options });
  }

  /** Pauses an endpoint. 409 `endpoint_disabled` when its breaker disabled it. */
  pause(id: string, options: CallOptions = {}): Promise<T.Endpoint> {
    return this.call({ method: 'POST', path: `/v1/endpoints/${seg(id)}/pause`, ...options });
  }

  /** Resumes an endpoint; held deliveries are re-queued oldest first. 409 `recreate_required` where the policy says re-create. */
  resume(id: string, options: CallOptions = {}): Promise<T.ResumedEndpoint> {
    return this.call({ method: 'POST', path: `/v1/endpoints/${seg(id)}/resume`, ...options });
  }

  /** Sends a `webhook.test` event to this endpoint only. 409 `endpoint_inactive` unless active. */
  test(id: string, options: CallOptions = {}): Promise<T.AcceptedEvent> {
    return this.call({ method: 'POST', path: `/v1/endpoints/${seg(id)}/test`, ...options });
  }

  /** The endpoint's policy as attempt times. */
  timeline(id: string, options: RequestOptions = {}): Promise<T.EndpointTimeline> {
    return this.call({ method: 'GET', path: `/v1/endpoints/${seg(id)}/timeline`, ...options });
  }

  /** Sends one of a catalog type's examples to this endpoint only, as a test event of that type. 409 `endpoint_inactive` or `no_example`. */
  sendExample(id: string, body: T.SendExampleBody, options: CallOptions = {}): Promise<T.AcceptedEvent> {
    return this.call({ method: 'POST', path: `/v1/endpoints/${seg(id)}/send-example`, body, ...options });
  }

  /** The endpoint in plain words (state, deliveries waiting, actions accepted now) and its last 24 h. */
  summary(id: string, options: RequestOptions = {}): Promise<T.EndpointSummary> {
    return this.call({ method: 'GET', path: `/v1/endpoints/${seg(id)}/summary`, ...options });
  }

  /** Redelivers the endpoint's failed deliveries (≤ 500 a call); call again while `remaining` > 0. */
  redeliverFailed(id: string, options: CallOptions = {}): Promise<T.BulkRedelivery> {
    return this.call({ method: 'POST', path: `/v1/endpoints/${seg(id)}/redeliver-failed`, ...options });
  }

  /** Redelivers what failed since `since` (ISO 8601; ≤ 500 a call). */
  recover(id: string, body: T.RecoverBody, options: CallOptions = {}): Promise<T.BulkRedelivery> {
    return this.call({ method: 'POST', path: `/v1/endpoints/${seg(id)}/recover`, body, ...options });
  }
}

/** The delivery log, attempts, redelivery and send-now. */
export class Deliveries {
  constructor(
    private readonly call: Call,
    private readonly lines: LinesCall,
    private readonly live: LiveCall,
  ) {}

  /**
   * Live deliveries (`GET /v1/deliveries/stream`, Server-Sent Events): iterate with `for await`;
   * each item is a change of one of the org's deliveries (`{type: 'delivery', delivery}`) or a
   * `{type: 'reset'}` after a gap. Reconnects with `Last-Event-ID` on its own; `break` or
   * `options.signal` closes it. Throws `PosternApiError` (429 `too_many_streams`, or the reason a
   * revoked key's stream was ended).
   *
   * ```ts
   * for await (const m of postern.deliveries.stream({ endpointId })) if (m.type === 'delivery') console.log(m.delivery.status);
   * ```
   */
  stream(query: LiveStreamQuery = {}, options: LiveStreamOptions = {}): AsyncIterable<LiveStreamMessage> {
    return { [Symbol.asyncIterator]: () => this.live(query, options) };
  }

  /**
   * The org's delivery log, streamed (`GET /v1/deliveries/export`, NDJSON): iterate with
   * `for await`; each item is one delivery with its attempts, endpoint by endpoint, oldest first.
   * Lines are parsed as they arrive, so memory stays flat whatever the size; stopping early
   * (`break`) closes the connection. Throws `PosternConnectionError` when the stream is cut short.
   */
  export(query: T.DeliveryExportQuery = {}, options: RequestOptions = {}): AsyncIterable<ExportedDelivery> {
    return { [Symbol.asyncIterator]: () => this.lines<ExportedDelivery>({ method: 'GET', path: '/v1/deliveries/export', query: { ...query }, signal: options.signal }) };
  }

  /** One delivery with its attempts. */
  get(id: string, options: RequestOptions = {}): Promise<T.DeliveryWithAttempts> {
    return this.call({ method: 'GET', path: `/v1/deliveries/${seg(id)}`, ...options });
  }

  /** A delivery's attempts, oldest first. */
  async attempts(id: string, options: RequestOptions = {}): Promise<T.Attempt[]> {
    return (await this.get(id, options)).attempts;
  }

  /** An endpoint's delivery log, newest first, optionally of one status; iterate with `for await`. */
  list(query: T.DeliveryListQuery & { endpointId: string }, options: RequestOptions = {}): PagedList<T.Delivery> {
    const { endpointId, ...rest } = query;
    return paged(this.call, `/v1/endpoints/${seg(endpointId)}/deliveries`, { ...rest }, options.signal);
  }

  /** A new delivery of the same event to the same endpoint. 409 `in_flight`, `delivery_pending`, `endpoint_inactive`, `redelivery_not_offered` or `data_erased`. */
  redeliver(id: string, options: CallOptions = {}): Promise<T.DeliveryAction> {
    return this.call({ method: 'POST', path: `/v1/deliveries/${seg(id)}/redeliver`, ...options });
  }

  /** The next attempt of a delivery waiting for a retry, now. 409 `in_flight`, `delivery_finished`, `delivery_held` or `not_waiting`. */
  sendNow(id: string, options: RequestOptions = {}): Promise<T.DeliveryAction> {
    return this.call({ method: 'POST', path: `/v1/deliveries/${seg(id)}/send-now`, ...options });
  }
}

/** The org's API keys. */
export class ApiKeys {
  constructor(private readonly call: Call) {}

  /** Creates a key (shown once, in `apiKey`) with scopes the calling key holds. */
  create(body: T.CreateApiKeyBody, options: RequestOptions = {}): Promise<T.CreatedApiKey> {
    return this.call({ method: 'POST', path: '/v1/api-keys', body, ...options });
  }

  /** The org's keys, revoked ones included (prefix only). */
  list(query: T.PageQuery = {}, options: RequestOptions = {}): PagedList<T.ApiKey> {
    return paged(this.call, '/v1/api-keys', { ...query }, options.signal);
  }

  /** Revokes a key at once. */
  revoke(id: string, options: RequestOptions = {}): Promise<T.ApiKey> {
    return this.call({ method: 'DELETE', path: `/v1/api-keys/${seg(id)}`, ...options });
  }
}

/** Platform keys (admin token). */
export class PlatformKeys {
  constructor(private readonly call: Call) {}

  /** Creates a platform key (shown once, in `key`). */
  create(body: T.CreatePlatformKeyBody, options: RequestOptions = {}): Promise<T.CreatedPlatformKey> {
    return this.call({ method: 'POST', path: '/v1/platform-keys', body, ...options });
  }

  /** Every platform key, revoked ones included (prefix only). */
  list(query: T.PageQuery = {}, options: RequestOptions = {}): PagedList<T.PlatformKey> {
    return paged(this.call, '/v1/platform-keys', { ...query }, options.signal);
  }

  /** Revokes a platform key: its next request gets 401. */
  revoke(id: string, options: RequestOptions = {}): Promise<T.PlatformKey> {
    return this.call({ method: 'DELETE', path: `/v1/platform-keys/${seg(id)}`, ...options });
  }
}

/** Orgs (admin token). */
export class Orgs {
  constructor(private readonly call: Call) {}

  /** Creates an org and its first API key (shown once, in `apiKey`). */
  create(body: T.CreateOrgBody, options: RequestOptions = {}): Promise<T.CreatedOrg> {
    return this.call({ method: 'POST', path: '/v1/orgs', body, ...options });
  }

  /** Suspends an org: its keys get 403 `org_suspended`. */
  suspend(id: string, options: RequestOptions = {}): Promise<T.Org> {
    return this.call({ method: 'POST', path: `/v1/orgs/${seg(id)}/suspend`, ...options });
  }

  /** Reactivates a suspended org. */
  reactivate(id: string, options: RequestOptions = {}): Promise<T.Org> {
    return this.call({ method: 'POST', path: `/v1/orgs/${seg(id)}/reactivate`, ...options });
  }
}

/** Presets, timelines and policy previews. */
export class Policies {
  constructor(private readonly call: Call) {}

  /** Every preset with its rules (no credentials needed). */
  async list(options: RequestOptions = {}): Promise<T.Preset[]> {
    return (await this.call<{ data: T.Preset[] }>({ method: 'GET', path: '/v1/policies', ...options })).data;
  }

  /** A preset's attempt times for a delivery that always fails. */
  timeline(name: string, options: RequestOptions = {}): Promise<T.PresetTimeline> {
    return this.call({ method: 'GET', path: `/v1/policies/${seg(name)}/timeline`, ...options });
  }

  /** Resolves a policy as creating an endpoint would, with its timeline; nothing is saved. 400 `invalid_policy`. */
  preview(policy: T.PolicyInput, options: RequestOptions = {}): Promise<T.PolicyPreview> {
    return this.call({ method: 'POST', path: '/v1/policies/preview', body: { policy }, ...options });
  }
}

/** Breaker notifications. */
export class Notifications {
  constructor(private readonly call: Call) {}

  /** Endpoints paused or disabled by their breaker, newest first. */
  list(query: T.PageQuery = {}, options: RequestOptions = {}): PagedList<T.Notification> {
    return paged(this.call, '/v1/notifications', { ...query }, options.signal);
  }
}

/** The calling org's own settings: event-type switches and the pre-attempt check. */
export class CurrentOrg {
  constructor(private readonly call: Call) {}

  /** The org's settings. Needs `webhooks:read`. */
  get(options: RequestOptions = {}): Promise<T.OrgSettings> {
    return this.call({ method: 'GET', path: '/v1/org', ...options });
  }

  /** Changes `disabledEventTypes` and/or `preAttemptCheckUrl` (`null` clears it). Needs `webhooks:write`. */
  update(body: T.UpdateOrgBody, options: RequestOptions = {}): Promise<T.OrgSettings> {
    return this.call({ method: 'PATCH', path: '/v1/org', body, ...options });
  }

  /** The secret that signs requests to the check URL (null before one was set). Needs `webhooks:write`. */
  checkSecret(options: RequestOptions = {}): Promise<T.CheckSecret> {
    return this.call({ method: 'GET', path: '/v1/org/check-secret', ...options });
  }
}

/** The org's audit log: who changed what through the API, kept 90 days. */
export class AuditLog {
  constructor(private readonly call: Call) {}

  /** Entries newest first, filtered by action, target, actor and time; iterate with `for await`. Needs an API or platform key with `webhooks:read`. */
  list(query: T.AuditLogQuery = {}, options: RequestOptions = {}): PagedList<T.AuditEntry> {
    return paged(this.call, '/v1/audit-log', { ...query }, options.signal);
  }

  /** The instance's own entries (platform keys created and revoked); needs the admin token. */
  listPlatform(query: T.AuditLogQuery = {}, options: RequestOptions = {}): PagedList<T.AuditEntry> {
    return paged(this.call, '/v1/platform-audit-log', { ...query }, options.signal);
  }
}

/** The org's event catalog: types with descriptions, JSON Schemas and examples, and its AsyncAPI document. */
export class EventTypes {
  constructor(private readonly call: Call) {}

  /** Adds a type (version 1). 409 `event_type_exists`; 400 `invalid_schema` when the schema does not compile. Needs `webhooks:write`. */
  create(body: T.CreateEventTypeBody, options: RequestOptions = {}): Promise<T.EventType> {
    return this.call({ method: 'POST', path: '/v1/event-types', body, ...options });
  }

  /** Every type by name; archived ones only with `includeArchived`. */
  async list(query: { includeArchived?: boolean } = {}, options: RequestOptions = {}): Promise<T.EventType[]> {
    const q = query.includeArchived === undefined ? {} : { includeArchived: String(query.includeArchived) };
    return (await this.call<{ data: T.EventType[] }>({ method: 'GET', path: '/v1/event-types', query: q, ...options })).data;
  }

  /** One type. 404 `not_found`. */
  get(name: string, options: RequestOptions = {}): Promise<T.EventType> {
    return this.call({ method: 'GET', path: `/v1/event-types/${seg(name)}`, ...options });
  }

  /** Changes a type (`null` clears `group` or `schema`); its `version` goes up by one. */
  update(name: string, body: T.UpdateEventTypeBody, options: RequestOptions = {}): Promise<T.EventType> {
    return this.call({ method: 'PATCH', path: `/v1/event-types/${seg(name)}`, body, ...options });
  }

  /** Removes a type from the catalog. */
  async delete(name: string, options: RequestOptions = {}): Promise<void> {
    await this.call({ method: 'DELETE', path: `/v1/event-types/${seg(name)}`, ...options });
  }

  /** The catalog as an AsyncAPI 3.0 document, for receivers to generate their types from. */
  asyncApi(options: RequestOptions = {}): Promise<T.AsyncApiDocument> {
    return this.call({ method: 'GET', path: '/v1/event-types/asyncapi.json', ...options });
  }
}

/** What the customer portal shows for the calling credential. */
export class Portal {
  constructor(private readonly call: Call) {}

  /** Mode, branding and the policy choices offered to customers. */
  get(options: RequestOptions = {}): Promise<T.PortalSettings> {
    return this.call({ method: 'GET', path: '/v1/portal', ...options });
  }
}

/** Transformations (docs/transformations.md): the templates, and a test run of code on a sample. */
export class Transformations {
  constructor(private readonly call: Call) {}

  /** The templates (Slack, Discord, Teams, Google Chat, form-encoded, pick fields, drop events), each with a sample event. Needs `webhooks:read`. */
  async templates(options: RequestOptions = {}): Promise<T.TransformationTemplate[]> {
    return (await this.call<{ data: T.TransformationTemplate[] }>({ method: 'GET', path: '/v1/transformations/templates', ...options })).data;
  }

  /**
   * Runs `code` on a sample event (`{code, eventType, payload}`) or a stored event of the org
   * (`{code, eventId}`): the request it would send, or `error` when the handler failed; nothing is
   * sent. Needs `webhooks:write`. Throws `PosternApiError` 400 for code refused before it runs
   * (`transformation_syntax_error` with `line`, `transformation_handler_missing`,
   * `transformation_too_large`), 404 for an unknown `eventId`.
   */
  test(body: T.TransformationTestBody, options: RequestOptions = {}): Promise<T.TransformationTestResult> {
    return this.call({ method: 'POST', path: '/v1/transformations/test', body, ...options });
  }
}

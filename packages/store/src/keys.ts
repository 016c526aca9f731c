import { DELIVERY_QUEUE_NAME } from './delivery-queue.js';

/**
 * The whole Redis key schema of Postern, in one place. Every key starts with the instance prefix
 * (`REDIS_PREFIX`, default `postern`) so several instances and test runs can share one Redis.
 *
 * Ids are time-sortable (`dlv_…`), so the indexes below are sorted sets with score 0 ordered
 * lexicographically by id, which is creation order; cursors are ids.
 */
export interface KeySchema {
  /** The prefix every key starts with, e.g. `postern`. */
  readonly prefix: string;
  /** BullMQ's own prefix (its keys live under it), e.g. `postern:q`. */
  readonly queuePrefix: string;
  /** Hash: one org. */
  org(orgId: string): string;
  /**
   * String (integer): the org's version, incremented in the same transaction as every change that
   * decides what an API request of the org may do or where its events go (org status, an API key
   * revoked, an endpoint created, changed, paused, resumed, rotated, deleted or tripped). Ingest's
   * lookup cache compares it on every request. Absent = 0.
   */
  orgVersion(orgId: string): string;
  /** String: the org id that an API key's SHA-256 (hex) belongs to. */
  apiKey(keyHash: string): string;
  /** String: the `key_…` id of the API key whose SHA-256 (hex) this is; absent for keys older than scopes. */
  apiKeyIdByHash(keyHash: string): string;
  /** Hash: one API key's record (name, scopes, prefix, revokedAt; never the key). */
  apiKeyRecord(keyId: string): string;
  /** Sorted set (lex): the org's API key ids, revoked ones included. */
  orgApiKeys(orgId: string): string;
  /** Sorted set (lex): every endpoint id of the instance, for the janitor's sweep. */
  allEndpoints(): string;
  /** Sorted set (lex): ids of deleted endpoints whose delivery log still has rows to expire. */
  deletedEndpoints(): string;
  /** Sorted set (lex): the org's endpoint ids. */
  orgEndpoints(orgId: string): string;
  /** Hash: one endpoint, with its health counters. */
  endpoint(endpointId: string): string;
  /** Sorted set (lex): every delivery of an endpoint. */
  endpointDeliveries(endpointId: string): string;
  /** Sorted set (lex): the endpoint's deliveries in one status. */
  endpointDeliveriesByStatus(endpointId: string, status: string): string;
  /** Sorted set (lex): deliveries held while the endpoint is inactive, replayed oldest first on resume. */
  endpointHeld(endpointId: string): string;
  /** Hash: one event (its envelope bytes, type, org). */
  event(eventId: string): string;
  /** String (JSON): the first 202 answer for an idempotency key, kept 24 h. */
  idempotency(orgId: string, keyHash: string): string;
  /**
   * String (JSON): an action call's `Idempotency-Key` claim, per org and per route — first an
   * in-progress marker (short expiry), then the answer, kept 24 h.
   */
  actionIdempotency(orgId: string, route: string, keyHash: string): string;
  /** String (JSON `{id, createdAt}`): the instance marker, written once by the first process to start against this Redis and prefix (docs/architecture.md, "Data loss"). */
  instanceMarker(): string;
  /** Hash: one delivery. */
  delivery(deliveryId: string): string;
  /** Hash: attempt number → JSON attempt record. */
  deliveryAttempts(deliveryId: string): string;
  /** Sorted set (score = createdAt ms): deliveries not yet finished, for the reconciler. */
  unfinishedDeliveries(): string;
  /** Sorted set (lex): the org's notifications (endpoint paused or disabled by its breaker). */
  orgNotifications(orgId: string): string;
  /** Hash: one notification. */
  notification(notificationId: string): string;
  /** Set: ids of an endpoint's deliveries already redelivered by a bulk call, so the next call skips them. */
  endpointBulkRedelivered(endpointId: string): string;
  /** Sorted set (score = lease expiry ms): attempts in flight to an endpoint, across all senders. */
  endpointLeases(endpointId: string): string;
  /** Sorted set (score = lease expiry ms): attempts in flight for an org, across all senders. */
  orgLeases(orgId: string): string;
  /** Sorted set (score = the delivery's createdAt ms): deliveries waiting for a slot of this endpoint, woken oldest first. */
  endpointParked(endpointId: string): string;
  /** Sorted set (score = the delivery's createdAt ms): deliveries waiting for a slot of this org. */
  orgParked(orgId: string): string;
  /** String (PX = lease): the delivery whose attempt of this event to this endpoint is in flight (tourical: one claim at a time). */
  eventClaim(endpointId: string, eventId: string): string;
  /** Set: deliveries of this event to this endpoint waiting for {@link eventClaim}'s holder to finish. */
  eventClaimWaiters(endpointId: string, eventId: string): string;
  /** Sorted set (lex): the org's event ids, for `GET /v1/events`; an id leaves it when its event is purged. */
  orgEvents(orgId: string): string;
  /** Sorted set (lex): the org's events that reached no endpoint, so their {@link orgEvents} entries go when they expire (30 days). */
  orgUndeliveredEvents(orgId: string): string;
  /** Sorted set (lex): redeliveries of an event (its first deliveries are the event's `deliveryIds`). */
  eventRedeliveries(eventId: string): string;
  /**
   * Hash: attempt counters of one endpoint or org for the clock hour starting at `hourStartMs`
   * (fields `<minute>:ok`, `<minute>:fail`, `<minute>:e:<error code>`, minute 0..59); expires
   * {@link STATS_TTL_S} after its first write.
   */
  statsHour(scope: 'endpoint' | 'org', id: string, hourStartMs: number): string;
  /** Hash, BullMQ's own: the queue job of a delivery (the job id is the delivery id). Postern only checks that it exists. */
  deliveryJob(deliveryId: string): string;
}

/** How long an hour of attempt counters is kept, s: a day and two hours, so "the last 24 h" is always whole. */
export const STATS_TTL_S = 26 * 60 * 60;

/** Builds the key schema for one prefix. Throws when the prefix is empty or holds a space. */
export function createKeySchema(prefix: string): KeySchema {
  if (!/^[A-Za-z0-9:_{}.-]+$/.test(prefix)) {
    throw new Error(`REDIS_PREFIX must be letters, digits or :_{}.- (got "${prefix}")`);
  }
  const p = prefix;
  return {
    prefix: p,
    queuePrefix: `${p}:q`,
    org: (id) => `${p}:org:${id}`,
    orgVersion: (id) => `${p}:org:${id}:version`,
    apiKey: (hash) => `${p}:apikey:${hash}`,
    apiKeyIdByHash: (hash) => `${p}:apikey-id:${hash}`,
    apiKeyRecord: (id) => `${p}:key:${id}`,
    orgApiKeys: (id) => `${p}:org:${id}:apikeys`,
    allEndpoints: () => `${p}:endpoints`,
    deletedEndpoints: () => `${p}:endpoints:deleted`,
    orgEndpoints: (id) => `${p}:org:${id}:endpoints`,
    endpoint: (id) => `${p}:endpoint:${id}`,
    endpointDeliveries: (id) => `${p}:endpoint:${id}:deliveries`,
    endpointDeliveriesByStatus: (id, status) => `${p}:endpoint:${id}:deliveries:${status}`,
    endpointHeld: (id) => `${p}:endpoint:${id}:held`,
    event: (id) => `${p}:event:${id}`,
    idempotency: (orgId, hash) => `${p}:idem:${orgId}:${hash}`,
    actionIdempotency: (orgId, route, hash) => `${p}:action-idem:${orgId}:${route}:${hash}`,
    instanceMarker: () => `${p}:instance`,
    delivery: (id) => `${p}:delivery:${id}`,
    deliveryAttempts: (id) => `${p}:delivery:${id}:attempts`,
    unfinishedDeliveries: () => `${p}:deliveries:unfinished`,
    orgNotifications: (id) => `${p}:org:${id}:notifications`,
    notification: (id) => `${p}:notification:${id}`,
    endpointBulkRedelivered: (id) => `${p}:endpoint:${id}:bulk-redelivered`,
    endpointLeases: (id) => `${p}:endpoint:${id}:leases`,
    orgLeases: (id) => `${p}:org:${id}:leases`,
    endpointParked: (id) => `${p}:endpoint:${id}:parked`,
    orgParked: (id) => `${p}:org:${id}:parked`,
    eventClaim: (endpointId, eventId) => `${p}:endpoint:${endpointId}:claim:${eventId}`,
    eventClaimWaiters: (endpointId, eventId) => `${p}:endpoint:${endpointId}:claim:${eventId}:waiters`,
    orgEvents: (id) => `${p}:org:${id}:events`,
    orgUndeliveredEvents: (id) => `${p}:org:${id}:events:undelivered`,
    eventRedeliveries: (id) => `${p}:event:${id}:redeliveries`,
    statsHour: (scope, id, hourStartMs) => `${p}:stats:${scope}:${id}:${hourStartMs}`,
    deliveryJob: (id) => `${p}:q:${DELIVERY_QUEUE_NAME}:${id}`,
  };
}

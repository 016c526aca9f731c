import { DELIVERY_QUEUE_NAME } from './delivery-queue.js';
import { queuePartitionOf } from './queue-partition.js';

/**
 * The whole Redis key schema of Postern, in one place. Every key starts with the instance prefix
 * (`REDIS_PREFIX`, default `postern`) so several instances and test runs can share one Redis.
 *
 * Redis Cluster (docs/architecture.md, "Key layout"): every record of one org carries the org's
 * hash tag, `<prefix>:{o:<orgId>}:…`, so every Lua script and every MULTI or pipeline Postern
 * runs touches one hash slot. Keys addressed by something else than an org (an API key's hash,
 * the instance marker, the index of orgs) are single keys never mixed with org keys in one
 * command. Each BullMQ queue partition has its own tag, `{<prefix>:q<n>}`.
 *
 * Ids are time-sortable (`dlv_…`), so the indexes below are sorted sets with score 0 ordered
 * lexicographically by id, which is creation order; cursors are ids.
 */
export interface KeySchema {
  /** The prefix every key starts with, e.g. `postern`. */
  readonly prefix: string;
  /** How many BullMQ queues carry deliveries (`QUEUE_PARTITIONS`, ≥ 1). */
  readonly queuePartitions: number;
  /** BullMQ's prefix of one queue partition (its keys live under it), e.g. `{postern:q0}`: hash-tagged, so one queue is one slot. */
  queuePrefix(partition: number): string;
  /** The queue partition (0 ≤ n < {@link queuePartitions}) that carries an org's deliveries: a stable hash of the org id. */
  partitionOf(orgId: string): number;
  /** Sorted set (lex): every org id of the instance, for sweeps that walk orgs (reconciler, janitor). Global, never in a multi-key command. */
  orgs(): string;
  /** Hash: one org. */
  org(orgId: string): string;
  /**
   * String (integer): the org's version, incremented in the same transaction as every change that
   * decides what an API request of the org may do or where its events go (org status, an API key
   * revoked, an endpoint created, changed, paused, resumed, rotated, deleted or tripped). Ingest's
   * lookup cache compares it on every request. Absent = 0.
   */
  orgVersion(orgId: string): string;
  /** String: the org id that an API key's SHA-256 (hex) belongs to. Tagged by the key hash, with {@link apiKeyIdByHash}. */
  apiKey(keyHash: string): string;
  /** String: the `key_…` id of the API key whose SHA-256 (hex) this is; absent for keys older than scopes. */
  apiKeyIdByHash(keyHash: string): string;
  /** Hash: one API key's record (name, scopes, prefix, revokedAt; never the key). */
  apiKeyRecord(orgId: string, keyId: string): string;
  /** Sorted set (lex): the org's API key ids, revoked ones included. */
  orgApiKeys(orgId: string): string;
  /**
   * Hash: the portal session a token's SHA-256 (hex) belongs to (`orgId, sessionId, scopes,
   * expiresAt, revokedAt`; never the token). Tagged by the token hash; expires a day after the
   * session does, so an expired token is told apart from an unknown one meanwhile.
   */
  portalSessionByToken(tokenHash: string): string;
  /** Hash: one portal session's record (scopes, times, the token's hash), same expiry as its lookup. */
  portalSession(orgId: string, sessionId: string): string;
  /**
   * Hash: one platform key's record (name, scopes, prefix, revokedAt; never the key). Platform
   * keys belong to no org: they and their indexes share the instance's own `{platform}` hash tag,
   * so every command on them touches one slot and never an org's.
   */
  platformKeyRecord(keyId: string): string;
  /** Sorted set (lex): every platform key id, revoked ones included. Tagged `{platform}`. */
  platformKeys(): string;
  /** Hash: SHA-256 (hex) of a live platform key → its `pfk_…` id; a revoked key's field is removed. Tagged `{platform}`. */
  platformKeyIdsByHash(): string;
  /** Sorted set (lex): ids of the org's deleted endpoints whose delivery log still has rows to expire. */
  deletedEndpoints(orgId: string): string;
  /** Sorted set (lex): the org's endpoint ids. */
  orgEndpoints(orgId: string): string;
  /** Hash: one endpoint, with its health counters. */
  endpoint(orgId: string, endpointId: string): string;
  /**
   * Sorted set (lex): every delivery of an endpoint, written before compact records only (now the
   * log is the union of the status indexes, endpoint-log.ts); still trimmed and deleted with them.
   */
  endpointDeliveries(orgId: string, endpointId: string): string;
  /** Sorted set (lex): the endpoint's deliveries in one status. */
  endpointDeliveriesByStatus(orgId: string, endpointId: string, status: string): string;
  /** Sorted set (lex): deliveries held while the endpoint is inactive, replayed oldest first on resume. */
  endpointHeld(orgId: string, endpointId: string): string;
  /** Hash: one event (its envelope bytes, type, org). */
  event(orgId: string, eventId: string): string;
  /** A key in the org's slot written only to be waited on (`ACCEPT_DURABILITY`: an idempotent replay's `WAIT`). */
  durabilityProbe(orgId: string): string;
  /** The same in the slot of the org's queue partition. */
  queueDurabilityProbe(orgId: string): string;
  /** String (JSON): the first 202 answer for an idempotency key, kept 24 h. */
  idempotency(orgId: string, keyHash: string): string;
  /**
   * String (JSON): an action call's `Idempotency-Key` claim, per org and per route — first an
   * in-progress marker (short expiry), then the answer, kept 24 h.
   */
  actionIdempotency(orgId: string, route: string, keyHash: string): string;
  /** String (JSON `{id, createdAt}`): the instance marker, written once by the first process to start against this Redis and prefix (docs/architecture.md, "Data loss"). */
  instanceMarker(): string;
  /**
   * Hash (field `value`): a known text sealed with `SECRETS_KEY` by the first process to start with
   * a key, which every start opens to prove its keys open what is stored (README, "Secrets at rest").
   */
  secretsCheck(): string;
  /** String: set once every endpoint carries the marks the claim reads (claim-marks.ts, markEndpointsForClaim). */
  claimMarksDone(): string;
  /** Hash: one delivery. */
  delivery(orgId: string, deliveryId: string): string;
  /** Hash: attempt number → JSON attempt record. */
  deliveryAttempts(orgId: string, deliveryId: string): string;
  /**
   * Sorted set (score = createdAt ms): the org's unfinished deliveries, as releases before this one
   * kept them for the reconciler. No longer written or read (the reconciler reads the endpoints'
   * `pending` and `in_flight` indexes: unfinished-deliveries.ts); named here so the reconciler can
   * delete what is left of it as its sweep passes the org.
   */
  legacyUnfinishedDeliveries(orgId: string): string;
  /** Sorted set (lex): the org's notifications (endpoint paused or disabled by its breaker). */
  orgNotifications(orgId: string): string;
  /** Hash: one notification. */
  notification(orgId: string, notificationId: string): string;
  /**
   * Stream: the org's audit log, one entry per change made through the API, stream ids
   * `<at ms>-<n>`; trimmed by MINID to 90 days on every append and expiring 90 days after the
   * last one (audit-log-repository.ts).
   */
  orgAuditLog(orgId: string): string;
  /**
   * Stream: the org's live feed, one entry per change of a delivery (an attempt finished, or a
   * delivery ended or held without one), written by the finish and settle scripts; capped near a
   * bound (`MAXLEN ~`) and expiring an hour after the last change (live-feed-repository.ts; after
   * a finish, the sender renews the expiry within about a second, stats-flusher.ts). What
   * `GET /v1/deliveries/stream` reads.
   */
  orgLiveFeed(orgId: string): string;
  /** Stream: the instance's own audit log (platform keys, which belong to no org). Tagged `{platform}`. */
  platformAuditLog(): string;
  /** Hash: the org's event catalog, event type name → its definition (JSON, with its version). */
  orgEventTypes(orgId: string): string;
  /** Set: ids of an endpoint's deliveries already redelivered by a bulk call, so the next call skips them. */
  endpointBulkRedelivered(orgId: string, endpointId: string): string;
  /** String (PX): the one `{lastPerEndpoint}` trim of this endpoint running (its token); finishes meanwhile leave their trim to it. */
  endpointTrimming(orgId: string, endpointId: string): string;
  /** Sorted set (score = lease expiry ms): attempts in flight to an endpoint, across all senders. */
  endpointLeases(orgId: string, endpointId: string): string;
  /** Sorted set (score = lease expiry ms): attempts in flight for an org, across all senders. */
  orgLeases(orgId: string): string;
  /** Sorted set (score = the delivery's createdAt ms): deliveries waiting for a slot of this endpoint, woken oldest first. */
  endpointParked(orgId: string, endpointId: string): string;
  /** Sorted set (score = the delivery's createdAt ms): deliveries waiting for a slot of this org. */
  orgParked(orgId: string): string;
  /** String (counter): the org's acceptance sequence, one step per accepted event or redelivery: the order an endpoint's line keeps (README, "Ordering"). */
  orgAcceptSeq(orgId: string): string;
  /**
   * Sorted set (lex): the unfinished deliveries of a `per-key` endpoint that carry an ordering key,
   * as `<keyHash>|<sequence, 12 digits>|<deliveryId>`; the first entry of a key is the one that may go.
   */
  endpointKeyLines(orgId: string, endpointId: string): string;
  /** String (counter, 30-day expiry renewed on use): the last `webhook-sequence` given to an ordering key (by its hash) at an endpoint. */
  orderingKeySequence(orgId: string, endpointId: string, keyHash: string): string;
  /** String (PX): the endpoint's rate limit state, the GCRA's theoretical arrival time (epoch ms). */
  endpointRate(orgId: string, endpointId: string): string;
  /** String (PX = the token's lifetime less a margin): the endpoint's cached OAuth 2.0 token, through `request-secrets.ts`. */
  endpointOauthToken(orgId: string, endpointId: string): string;
  /** String (PX, short): the sender process fetching the endpoint's OAuth 2.0 token now; the others wait for it. */
  endpointOauthLock(orgId: string, endpointId: string): string;
  /** String (PX = lease): the delivery whose attempt of this event to this endpoint is in flight (tourical: one claim at a time). */
  eventClaim(orgId: string, endpointId: string, eventId: string): string;
  /** Set: deliveries of this event to this endpoint waiting for {@link eventClaim}'s holder to finish. */
  eventClaimWaiters(orgId: string, endpointId: string, eventId: string): string;
  /** Sorted set (lex): the org's event ids, for `GET /v1/events`; an id leaves it when its event is purged. */
  orgEvents(orgId: string): string;
  /** Sorted set (lex): the org's events that reached no endpoint, so their {@link orgEvents} entries go when they expire (30 days). */
  orgUndeliveredEvents(orgId: string): string;
  /** Sorted set (lex): redeliveries of an event (its first deliveries are the event's `deliveryIds`). */
  eventRedeliveries(orgId: string, eventId: string): string;
  /**
   * Hash: attempt counters of one endpoint or org (of org `orgId`) for the clock hour starting at
   * `hourStartMs` (fields `<minute>:ok`, `<minute>:fail`, `<minute>:e:<error code>`, minute
   * 0..59; stats-buckets.ts); written by the senders about once a second (stats-flusher.ts),
   * expires {@link STATS_TTL_S} after its last write.
   */
  statsHour(orgId: string, scope: 'endpoint' | 'org', id: string, hourStartMs: number): string;
  /** Hash, BullMQ's own: the queue job of a delivery (the job id is the delivery id) in its org's partition. Postern only checks that it exists. */
  deliveryJob(orgId: string, deliveryId: string): string;
  /** String, BullMQ's own: the lock of a job of queue partition `partition` (its worker's token, `<worker id>:<n>`), read and deleted by a sender's takeover. */
  deliveryJobLock(partition: number, jobId: string): string;
  /** List, BullMQ's own: the active jobs of queue partition `partition`. */
  queueActive(partition: number): string;
  /** Set, BullMQ's own: the jobs of queue partition `partition` that its next stalled check moves to wait unless their lock is renewed. */
  queueStalled(partition: number): string;
  /** String (PX), BullMQ's own: the guard that lets one stalled check of queue partition `partition` run per stalled interval. */
  queueStalledCheck(partition: number): string;
  /**
   * Sorted set (score = last beat, Redis time in ms): every sender process's heartbeat (README,
   * "Crashes and restarts"). Tagged `{senders}`, with {@link senderRecord} and {@link senderTakeover}.
   */
  senderHeartbeats(): string;
  /** Hash: one sender process's record — its workers' ids per partition, the endpoints it held slots of lately; expires unless renewed by its beats. */
  senderRecord(senderId: string): string;
  /** String (PX): the one sender taking over a sender whose heartbeat lapsed (SET NX). */
  senderTakeover(senderId: string): string;
}

/** How long an hour of attempt counters is kept, s: a day and two hours, so "the last 24 h" is always whole. */
export const STATS_TTL_S = 26 * 60 * 60;

/** Options of {@link createKeySchema}. */
export interface KeySchemaOptions {
  /** How many queue partitions (`QUEUE_PARTITIONS`), an integer ≥ 1; default 1. */
  queuePartitions?: number;
}

/**
 * Builds the key schema for one prefix. Throws when the prefix is empty, holds a character other
 * than letters, digits and `:_.-` (braces would change the hash tag), or when `queuePartitions`
 * is not an integer ≥ 1.
 */
export function createKeySchema(prefix: string, opts: KeySchemaOptions = {}): KeySchema {
  if (!/^[A-Za-z0-9:_.-]+$/.test(prefix)) {
    throw new Error(`REDIS_PREFIX must be letters, digits or :_.- (got "${prefix}")`);
  }
  const partitions = opts.queuePartitions ?? 1;
  if (!Number.isInteger(partitions) || partitions < 1) throw new Error(`QUEUE_PARTITIONS must be an integer ≥ 1 (got ${partitions})`);
  const p = prefix;
  /** The org's hash-tagged stem: every key of the org lives in one slot. */
  const o = (orgId: string) => `${p}:{o:${orgId}}`;
  const queuePrefix = (n: number) => `{${p}:q${n}}`;
  const partitionOf = (orgId: string) => queuePartitionOf(orgId, partitions);
  return {
    prefix: p,
    queuePartitions: partitions,
    queuePrefix,
    partitionOf,
    orgs: () => `${p}:orgs`,
    org: (id) => `${o(id)}:org`,
    orgVersion: (id) => `${o(id)}:version`,
    apiKey: (hash) => `${p}:{k:${hash}}:apikey`,
    apiKeyIdByHash: (hash) => `${p}:{k:${hash}}:apikey-id`,
    apiKeyRecord: (orgId, id) => `${o(orgId)}:key:${id}`,
    orgApiKeys: (id) => `${o(id)}:apikeys`,
    portalSessionByToken: (hash) => `${p}:{k:${hash}}:portal-session`,
    portalSession: (orgId, id) => `${o(orgId)}:portal-session:${id}`,
    platformKeyRecord: (id) => `${p}:{platform}:key:${id}`,
    platformKeys: () => `${p}:{platform}:keys`,
    platformKeyIdsByHash: () => `${p}:{platform}:key-ids`,
    deletedEndpoints: (orgId) => `${o(orgId)}:endpoints:deleted`,
    orgEndpoints: (id) => `${o(id)}:endpoints`,
    endpoint: (orgId, id) => `${o(orgId)}:endpoint:${id}`,
    endpointDeliveries: (orgId, id) => `${o(orgId)}:endpoint:${id}:deliveries`,
    endpointDeliveriesByStatus: (orgId, id, status) => `${o(orgId)}:endpoint:${id}:deliveries:${status}`,
    endpointHeld: (orgId, id) => `${o(orgId)}:endpoint:${id}:held`,
    event: (orgId, id) => `${o(orgId)}:event:${id}`,
    durabilityProbe: (orgId) => `${o(orgId)}:durability-probe`,
    queueDurabilityProbe: (orgId) => `${queuePrefix(partitionOf(orgId))}:durability-probe`,
    idempotency: (orgId, hash) => `${o(orgId)}:idem:${hash}`,
    actionIdempotency: (orgId, route, hash) => `${o(orgId)}:action-idem:${route}:${hash}`,
    instanceMarker: () => `${p}:instance`,
    secretsCheck: () => `${p}:secrets-check`,
    claimMarksDone: () => `${p}:claim-marks-done`,
    delivery: (orgId, id) => `${o(orgId)}:delivery:${id}`,
    deliveryAttempts: (orgId, id) => `${o(orgId)}:delivery:${id}:attempts`,
    legacyUnfinishedDeliveries: (orgId) => `${o(orgId)}:deliveries:unfinished`,
    orgNotifications: (id) => `${o(id)}:notifications`,
    notification: (orgId, id) => `${o(orgId)}:notification:${id}`,
    orgAuditLog: (id) => `${o(id)}:audit`,
    orgLiveFeed: (id) => `${o(id)}:live`,
    platformAuditLog: () => `${p}:{platform}:audit`,
    orgEventTypes: (id) => `${o(id)}:event-types`,
    endpointBulkRedelivered: (orgId, id) => `${o(orgId)}:endpoint:${id}:bulk-redelivered`,
    endpointTrimming: (orgId, id) => `${o(orgId)}:endpoint:${id}:trimming`,
    endpointLeases: (orgId, id) => `${o(orgId)}:endpoint:${id}:leases`,
    orgLeases: (id) => `${o(id)}:leases`,
    endpointParked: (orgId, id) => `${o(orgId)}:endpoint:${id}:parked`,
    orgParked: (id) => `${o(id)}:parked`,
    orgAcceptSeq: (id) => `${o(id)}:accept-seq`,
    endpointKeyLines: (orgId, id) => `${o(orgId)}:endpoint:${id}:key-lines`,
    orderingKeySequence: (orgId, id, keyHash) => `${o(orgId)}:endpoint:${id}:okey:${keyHash}:seq`,
    endpointRate: (orgId, id) => `${o(orgId)}:endpoint:${id}:rate`,
    endpointOauthToken: (orgId, id) => `${o(orgId)}:endpoint:${id}:oauth-token`,
    endpointOauthLock: (orgId, id) => `${o(orgId)}:endpoint:${id}:oauth-lock`,
    eventClaim: (orgId, endpointId, eventId) => `${o(orgId)}:endpoint:${endpointId}:claim:${eventId}`,
    eventClaimWaiters: (orgId, endpointId, eventId) => `${o(orgId)}:endpoint:${endpointId}:claim:${eventId}:waiters`,
    orgEvents: (id) => `${o(id)}:events`,
    orgUndeliveredEvents: (id) => `${o(id)}:events:undelivered`,
    eventRedeliveries: (orgId, id) => `${o(orgId)}:event:${id}:redeliveries`,
    statsHour: (orgId, scope, id, hourStartMs) => `${o(orgId)}:stats:${scope}:${id}:${hourStartMs}`,
    deliveryJob: (orgId, id) => `${queuePrefix(partitionOf(orgId))}:${DELIVERY_QUEUE_NAME}:${id}`,
    deliveryJobLock: (n, jobId) => `${queuePrefix(n)}:${DELIVERY_QUEUE_NAME}:${jobId}:lock`,
    queueActive: (n) => `${queuePrefix(n)}:${DELIVERY_QUEUE_NAME}:active`,
    queueStalled: (n) => `${queuePrefix(n)}:${DELIVERY_QUEUE_NAME}:stalled`,
    queueStalledCheck: (n) => `${queuePrefix(n)}:${DELIVERY_QUEUE_NAME}:stalled-check`,
    senderHeartbeats: () => `${p}:{senders}:heartbeats`,
    senderRecord: (id) => `${p}:{senders}:sender:${id}`,
    senderTakeover: (id) => `${p}:{senders}:takeover:${id}`,
  };
}

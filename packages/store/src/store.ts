import { LIVE_STREAM_DEFAULTS, createSecretBox, type SecretBox } from '@postern/shared';
import type { RedisClient } from './redis-connection.js';
import { ActionIdempotencyRepository } from './action-idempotency-repository.js';
import { ApiKeyRepository } from './api-key-repository.js';
import { AuditLogRepository } from './audit-log-repository.js';
import { AttemptRepository } from './attempt-repository.js';
import { DeliveryRepository } from './delivery-repository.js';
import { EndpointRepository } from './endpoint-repository.js';
import { EventIndexRepository } from './event-index-repository.js';
import { EventRepository } from './event-repository.js';
import { EventTypeRepository } from './event-type-repository.js';
import { createKeySchema, type KeySchema } from './keys.js';
import { NotificationRepository } from './notification-repository.js';
import { LeaseRepository } from './lease-repository.js';
import { OauthTokenRepository } from './oauth-token-repository.js';
import { OrgRepository } from './org-repository.js';
import { OrgSnapshotRepository } from './org-snapshot-repository.js';
import { PortalSessionRepository } from './portal-session-repository.js';
import { PlatformKeyRepository } from './platform-key-repository.js';
import { SenderRegistry } from './sender-registry.js';
import { StatsRepository } from './stats-repository.js';
import { UnfinishedDeliveries } from './unfinished-deliveries.js';
import { LiveFeedRepository, type LiveFeedSettings } from './live-feed-repository.js';

/** Every repository over one Redis connection and key prefix. */
export interface Store {
  readonly keys: KeySchema;
  readonly orgs: OrgRepository;
  /** Consistent reads of an org, an API key and the org's endpoints, with the org's version (ingest's lookup cache). */
  readonly orgSnapshots: OrgSnapshotRepository;
  readonly apiKeys: ApiKeyRepository;
  /** Short-lived, org-scoped bearer credentials for the customer portal. */
  readonly portalSessions: PortalSessionRepository;
  /** Platform keys: one credential acting for any org it names (global, `{platform}`-tagged). */
  readonly platformKeys: PlatformKeyRepository;
  readonly endpoints: EndpointRepository;
  readonly events: EventRepository;
  /** The org's event catalog (`/v1/event-types`). */
  readonly eventTypes: EventTypeRepository;
  /** `GET /v1/events`: the org's events, newest first, filtered. */
  readonly eventIndex: EventIndexRepository;
  /** The overview's per-minute attempt counters. */
  readonly stats: StatsRepository;
  readonly deliveries: DeliveryRepository;
  /** Where the reconciler finds the unfinished deliveries: each endpoint's `pending` and `in_flight` indexes. */
  readonly unfinished: UnfinishedDeliveries;
  /** The two calls of each attempt (claim, finish) and settling without one. */
  readonly attempts: AttemptRepository;
  readonly notifications: NotificationRepository;
  readonly leases: LeaseRepository;
  readonly actionIdempotency: ActionIdempotencyRepository;
  /** The senders' heartbeats and records, for taking over a sender that died. */
  readonly senders: SenderRegistry;
  /** Seals and opens the secrets of stored records (the one given to {@link createStore}). */
  readonly secretBox: SecretBox;
  /** Each endpoint's OAuth 2.0 token, cached for every sender, and the lock of its fetch. */
  readonly oauthTokens: OauthTokenRepository;
  /** Who changed what through the API, per org (and the instance's platform keys), kept 90 days. */
  readonly auditLog: AuditLogRepository;
  /** Each org's live feed of delivery changes (what `GET /v1/deliveries/stream` sends). */
  readonly liveFeed: LiveFeedRepository;
}

/**
 * Builds the store. `prefix` is `REDIS_PREFIX`; `queuePartitions` is `QUEUE_PARTITIONS` (default
 * 1); the connection (standalone or cluster) is owned (and closed) by the caller. `secretBox` seals
 * every stored secret (`SECRETS_KEY`, README "Secrets at rest"); absent = a box without a key, which
 * stores secrets in plain text and cannot open sealed ones (tools and tests only: both apps'
 * `main.ts` always pass theirs). `liveFeed` bounds each org's live feed (`LIVE_FEED_MAX_ENTRIES`,
 * default 1 000 entries, 0 = off; kept 1 h after the last change).
 */
export function createStore(deps: { redis: RedisClient; prefix: string; queuePartitions?: number; secretBox?: SecretBox; liveFeed?: Partial<LiveFeedSettings> }): Store {
  const keys = createKeySchema(deps.prefix, { queuePartitions: deps.queuePartitions });
  const deliveries = new DeliveryRepository(deps.redis, keys);
  const box = deps.secretBox ?? createSecretBox({ current: null, previous: [] });
  const liveFeed: LiveFeedSettings = { maxEntries: deps.liveFeed?.maxEntries ?? LIVE_STREAM_DEFAULTS.feedMaxEntries, ttlS: deps.liveFeed?.ttlS ?? LIVE_STREAM_DEFAULTS.feedTtlS };
  return {
    keys,
    secretBox: box,
    orgs: new OrgRepository(deps.redis, keys, box),
    orgSnapshots: new OrgSnapshotRepository(deps.redis, keys, box),
    apiKeys: new ApiKeyRepository(deps.redis, keys),
    portalSessions: new PortalSessionRepository(deps.redis, keys),
    platformKeys: new PlatformKeyRepository(deps.redis, keys),
    endpoints: new EndpointRepository(deps.redis, keys, box),
    oauthTokens: new OauthTokenRepository(deps.redis, keys, box),
    events: new EventRepository(deps.redis, keys),
    eventIndex: new EventIndexRepository(deps.redis, keys),
    eventTypes: new EventTypeRepository(deps.redis, keys),
    stats: new StatsRepository(deps.redis, keys),
    deliveries,
    unfinished: new UnfinishedDeliveries(deps.redis, keys),
    attempts: new AttemptRepository(deps.redis, keys, deliveries, box, liveFeed),
    liveFeed: new LiveFeedRepository(deps.redis, keys, liveFeed),
    notifications: new NotificationRepository(deps.redis, keys),
    leases: new LeaseRepository(deps.redis, keys),
    actionIdempotency: new ActionIdempotencyRepository(deps.redis, keys),
    senders: new SenderRegistry(deps.redis, keys),
    auditLog: new AuditLogRepository(deps.redis, keys),
  };
}

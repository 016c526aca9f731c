export { createStore, type Store } from './store.js';
export { STATS_TTL_S, createKeySchema, type KeySchema, type KeySchemaOptions } from './keys.js';
export { EVENT_SCAN_BUDGET, EventIndexRepository, type EventListQuery } from './event-index-repository.js';
export { StatsRepository, type StatsBucket, type StatsSeries, type StatsWindow } from './stats-repository.js';
export { STATS_HOUR_MS, STATS_MINUTE_MS, attemptStatsIncrements, statsHourStartMs, type CountedAttempt, type StatsIncrement } from './stats-buckets.js';
export { STATS_FLUSH_INTERVAL_MS, STATS_MAX_PENDING_FIELDS, StatsFlusher, type FlushTimers, type StatsFlusherOptions } from './stats-flusher.js';
export { queuePartitionOf } from './queue-partition.js';
export { connectRedis, createRedisConnection, parseClusterNodes, redisAnswers, redisReady, redisTargetOf, redisTargetOfPlan, type RedisClient, type RedisNodeOptions, type RedisTarget } from './redis-connection.js';
export { createDeliveryQueues, DeliveryQueues, type DeliveryJobEntry, type WakeResult } from './delivery-queues.js';
export { migrateKeyLayout, type KeyLayoutMigration } from './migrate-key-layout.js';
export { markEndpointsForClaim, type ClaimMarks } from './claim-marks.js';
export {
  DATA_CHECK_INTERVAL_MS,
  DATA_LOSS_MESSAGE,
  DataLossMonitor,
  type DataCheck,
  type DataLoss,
  type DataLossMonitorOptions,
  type InstanceMarker,
} from './data-loss-monitor.js';
export {
  DELIVERY_QUEUE_NAME,
  createDeliveryQueue,
  deliveryJobData,
  deliveryJobDataSchema,
  deliveryJobOptions,
  deliveryJobOrgId,
  deliveryJobs,
  DELIVERY_WORKER_REMOVE,
  parseDeliveryJob,
  type DeliveryJobData,
  type DeliveryJobIds,
  type ParsedDeliveryJob,
} from './delivery-queue.js';
export { compactId, expandId } from './compact-ids.js';
export { joinSplitValues } from './split-values.js';
export {
  DELIVERY_STATUSES,
  isWaitingForNextAttempt,
  newPendingDelivery,
  type ApiKeyRecord,
  type AttemptRecord,
  type AttemptResponseRecord,
  type DeliveryRecord,
  type DeliveryStatus,
  type EndpointRecord,
  type EndpointSecret,
  type EndpointStatus,
  type EventRecord,
  type OrgAttemptSettings,
  type OrgRecord,
  type NotificationRecord,
} from './records.js';
export { NotificationRepository, type TripInput } from './notification-repository.js';
export { OrgRepository, type OrgSettingsPatch } from './org-repository.js';
export { EventTypeRepository } from './event-type-repository.js';
export { AUDIT_SCAN_BUDGET, AuditLogRepository, isAuditCursor, type AuditLogQuery, type StoredAuditEntry } from './audit-log-repository.js';
export { OrgSnapshotRepository, type OrgSnapshot } from './org-snapshot-repository.js';
export { ApiKeyRepository, type ApiKeyMatch } from './api-key-repository.js';
export { PORTAL_SESSION_KEEP_MS, PortalSessionRepository, type PortalSessionMatch, type PortalSessionMode, type PortalSessionRecord } from './portal-session-repository.js';
export { PlatformKeyRepository, type PlatformKeyRecord } from './platform-key-repository.js';
export { EndpointRepository, type EndpointPatch } from './endpoint-repository.js';
export { OauthTokenRepository, type CachedToken, type CachedTokenRead } from './oauth-token-repository.js';
export { decodeRequestSecrets, decodeSecretValue, encodeRequestSecrets, encodeSecretValue } from './request-secrets.js';
export { EventRepository, IDEMPOTENCY_TTL_S, orderingKeyHash, type CreateEventResult, type NewEvent, type EraseDataResult } from './event-repository.js';
export { DeliveryRepository, TRIM_BATCH, TRIM_WORK_MS } from './delivery-repository.js';
export { UnfinishedDeliveries, type UnfinishedIndex, type UnfinishedStatus } from './unfinished-deliveries.js';
export { LiveFeedRepository, parseLiveFeedEntry, type LiveFeedEntry, type LiveFeedSettings } from './live-feed-repository.js';
export { AttemptRepository, LEASE_GRACE_MS, type AttemptIds, type ClaimResult, type FinishInput, type FinishResult } from './attempt-repository.js';
export { LeaseRepository, type AcquireResult, type LeaseKey } from './lease-repository.js';
export { SenderRegistry, type EndpointRef, type SenderBeat, type SenderBeatInput, type SenderRecord } from './sender-registry.js';
export {
  ACTION_CLAIM_TTL_MS,
  ACTION_IDEMPOTENCY_TTL_MS,
  ActionIdempotencyRepository,
  type ActionClaim,
  type ActionIdempotencyRecord,
} from './action-idempotency-repository.js';
export { checkSecretsKey, checkSecretsKeyAtStart, resealSecrets, SecretsKeyError, verifySecretsKey, type ResealCounts, type SecretsKeyCheck } from './secrets-at-rest.js';
export { SEALED_FIELDS, openSealedField, sealField } from './sealed-fields.js';
export { confirmWrites, markWrites, touchForConfirmation, type WriteMark } from './durability.js';

/**
 * `@postern/shared`: the pure delivery domain (no I/O). Everything public is
 * listed here by name; what is not exported is internal.
 */
export { CROCKFORD_ALPHABET, crockfordDigit, decodeCrockford, encodeCrockford } from './crockford.js';
export { ID_PREFIXES, createIdFactory, isId, newId } from './ids.js';
export { AUDIT_ACTIONS, AUDIT_ACTOR_KINDS, AUDIT_RETENTION_MS, buildAuditEntry, changedFields, isAuditAction } from './audit-entry.js';
export type { AuditAction, AuditActor, AuditActorKind, AuditEntry, AuditTarget, ChangedFieldsOptions } from './audit-entry.js';
export type { IdFactory, IdPrefix, RandomBytes } from './ids.js';

export { buildEnvelope, extractRawArrayElements, extractRawField } from './envelope.js';
export type { EnvelopeInput } from './envelope.js';

export {
  DEFAULT_SIGNATURE_SCHEME,
  DEFAULT_TOLERANCE_S,
  ED25519_PUBLIC_KEY_BYTES,
  ED25519_PUBLIC_KEY_PREFIX,
  ED25519_SECRET_BYTES,
  ED25519_SECRET_PREFIX,
  InvalidSecretError,
  MAX_SECRET_BYTES,
  MIN_SECRET_BYTES,
  SECRET_PREFIX,
  SIGNATURE_SCHEMES,
  createSigningKeyCache,
  generateEd25519Secret,
  generateSecret,
  generateSigningSecret,
  isValidSecret,
  isValidSigningSecret,
  parsePublicKey,
  parseSecret,
  parseSigningSecret,
  publicKeyOf,
  sign,
  signWithKey,
  signatureHeader,
  signatureSchemeOf,
  verify,
} from './signing.js';
export type { InvalidSecretReason, SignInput, SignatureHeaderInput, SignatureScheme, SigningKey, SigningKeyCache, VerifyInput } from './signing.js';

export {
  ERROR_CODES,
  countsAgainstEndpoint,
  errorFamily,
  httpStatusCode,
  isRetried,
  isValidErrorCode,
} from './error-codes.js';
export type { ErrorCode, ErrorCodeInfo, ErrorFamily, ErrorRule, ErrorRuleOptions } from './error-codes.js';

export { issuePath, plainIssue } from './validation-messages.js';
export { escapeNotPrintable, isPrintableText, notPrintableMessage } from './printable-text.js';
export type { InputSource, PlainIssue } from './validation-messages.js';

export { MAX_ATTEMPTS, MAX_WAIT_MS, PRESET_NAMES, isPresetName, policySchema, resolvePolicy } from './policy.js';
export type { BreakerRule, Policy, PolicyIssue, PolicyResolution, PresetName, RateLimit, Schedule } from './policy.js';

export { planPolicyChange } from './policy-change.js';

export { RATE_SEND_LAG_MS, isTurnStale, rateIntervalMs } from './rate-limit.js';
export type { PolicyChangePlan } from './policy-change.js';

export { PRESETS, listPresets } from './presets.js';

export { finishedExpiresAt } from './retention.js';
export type { Retention } from './retention.js';
export type { PresetInfo, PresetListing } from './presets.js';

export { parseRetryAfterMs, policyTimeline, retryDelayMs } from './retry-schedule.js';
export { effectiveLimits, fullPace, nextPace, paceSignalOf } from './pace.js';
export type { EffectiveLimits, Pace, PaceSignal } from './pace.js';
export type { RandomFn, RetryDelayInput, TimelineEntry, WaitBounds } from './retry-schedule.js';

export { MAX_URL_LENGTH, classifyAddress, hostAddress, parseAllowList, validateEndpointUrl } from './url-rules.js';
export type { UrlRejection } from './url-rules.js';

export {
  ALL_EVENT_TYPES,
  DEFAULT_EVENT_TYPE_FILTER,
  MAX_EVENT_TYPE_FILTER_ENTRIES,
  MAX_EVENT_TYPE_LENGTH,
  TEST_EVENT_TYPE,
  OPERATIONAL_EVENT_TYPES,
  eventTypeFilterSchema,
  reservedEventTypeReason,
  eventTypeSchema,
  matchesEventTypes,
} from './event-types.js';

export {
  DEFAULT_CHECK_TIMEOUT_MS,
  MAX_CHECK_ANSWER_BYTES,
  checkRequestBody,
  disabledEventTypesSchema,
  isEventTypeDisabled,
  planAttemptBody,
  planFromCheckAnswer,
  shouldAskCheck,
} from './pre-attempt-check.js';
export type { AttemptBodyPlan, CheckPlan, CheckRequest, CheckResponse, PreAttemptCheckMode } from './pre-attempt-check.js';

export { outcomeOfResponse, planAfterAttempt, planBeforeAttempt, planBreakerTrip, planGoneTrip } from './attempt-plan.js';
export type { AfterAttemptInput, AfterAttemptPlan, AttemptOutcome, BeforeAttemptPlan, BreakerTripPlan, ClaimBlockers } from './attempt-plan.js';
export type { FailureStreak, HealthEffect } from './breaker.js';

export { RESPONSE_HEADER_LIMITS, boundHeaders, isEndpointFailure, keepsResponse, webhookRequestHeaders } from './attempt-detail.js';
export type { KeptHeaders, SentRequestFields } from './attempt-detail.js';

export {
  MASKED,
  MAX_HEADER_VALUE_BYTES,
  MAX_STATIC_HEADER_BYTES,
  MAX_STATIC_HEADERS,
  NO_REQUEST_SETTINGS,
  addedRequestHeaders,
  basicAuthorization,
  clientSecretBasic,
  headerNameProblem,
  isValidHeaderValue,
  parseTokenAnswer,
  proxyForRequest,
  shownRequestHeaders,
  tokenCacheTtlMs,
  tokenRequestForm,
} from './request-settings.js';
export type { AuthSettings, ClientAuthentication, ProxySettings, RequestSecrets, RequestSettings, StaticHeader } from './request-settings.js';

export { API_KEY_SCOPES, isApiKeyScope } from './api-key-scopes.js';
export type { ApiKeyScope } from './api-key-scopes.js';

export { LOG_REDACT_CENSOR, LOG_REDACT_PATHS, loggerOptions } from './log-redaction.js';
export { logProcessOutput } from './console-logging.js';
export type { ConsoleMethods, FieldLogger } from './console-logging.js';
export { commonConfigShape, httpServerOptions, parseEnvConfig } from './env-config.js';
export { describeRedisPlan, parseHostPorts, redisConnectionPlan } from './redis-settings.js';
export type { RedisAuthPlan, RedisConnectionPlan, RedisNodeAddress, RedisSettings, RedisTlsPlan } from './redis-settings.js';
export type { HttpServerTimeoutOptions, HttpTimeoutSettings } from './env-config.js';

export { SecretUnreadableError, createSecretBox, isSealed, sealedKeyId, secretContext } from './secret-box.js';
export type { SecretBox, SecretKey, SecretKeyring, SecretUnreadableReason } from './secret-box.js';
export {
  DEFAULT_TRANSFORM_TIMEOUT_MS,
  MAX_TRANSFORMATION_CODE_BYTES,
  MAX_TRANSFORMED_BODY_BYTES,
  MAX_TRANSFORMED_HEADERS,
  RETRIED_TRANSFORMATION_FAILURES,
  TRANSFORMATION_CANCEL_REASON,
  TRANSFORMATION_FAILURES,
  TRANSFORMED_BODY_EXCERPT_BYTES,
  TRANSFORM_MEMORY_LIMIT_BYTES,
  TRANSFORM_METHODS,
  nextTransformation,
  planTransformedRequest,
  transformationCodeFits,
  transformationInput,
  transformedRequestRecord,
} from './transformation.js';
export type {
  TransformMethod,
  TransformationFailure,
  TransformationInput,
  TransformationSettings,
  TransformedRequest,
  TransformedRequestPlan,
  TransformedRequestRecord,
} from './transformation.js';
export { TRANSFORMATION_TEMPLATES } from './transformation-templates.js';
export type { TransformationTemplate } from './transformation-templates.js';
export { LIVE_DELIVERY_STATUSES, LIVE_STREAM_DEFAULTS, STREAM_ID_PATTERN, compareStreamIds, isLiveEventTypeFilter, matchesLiveFilter, mayOpenStream, resumeFrom } from './live-deliveries.js';
export type { LiveDeliveryChange, LiveDeliveryFilter, LiveDeliveryStatus } from './live-deliveries.js';
export { logPlanOf, prettyLogOptions } from './log-format.js';
export type { LogFormat, LogPlan } from './log-format.js';
export { ACCEPT_DURABILITY_MODES, durabilityVerdict, supportsWaitAof } from './durability.js';
export type { AcceptDurability, DurabilityConfirmation, DurabilityVerdict } from './durability.js';

export {
  EVENT_VALIDATION_MODES,
  MAX_EVENT_TYPE_DOCUMENT_BYTES,
  createEventTypeBody,
  decideEventValidation,
  needsCatalogLookup,
  needsSchemaCheck,
  schemaPatterns,
  updateEventTypeBody,
} from './event-catalog.js';
export type { EventTypeDefinition, EventValidationDecision, EventValidationMode, EventValidationSettings, SchemaIssue } from './event-catalog.js';
export { inPlaceSchemaCycle } from './schema-refs.js';
export { buildAsyncApiDocument } from './asyncapi.js';
export type { AsyncApiInput } from './asyncapi.js';
export { checkAccentColour } from './contrast.js';
export type { AccentCheck } from './contrast.js';
export {
  DEFAULT_PORTAL_POLICIES,
  NO_PORTAL_BRANDING,
  checkPortalPolicyInput,
  endpointStatusSummary,
  policyChoiceLabel,
  portalBrandingSchema,
  portalPoliciesSchema,
} from './portal.js';
export type { EndpointAction, EndpointStateInput, EndpointStatusSummary, PortalBranding, PortalPolicies, PortalPolicyField } from './portal.js';

/**
 * `@postern/shared`: the pure delivery domain (no I/O). Everything public is
 * listed here by name; what is not exported is internal.
 */
export { ID_PREFIXES, createIdFactory, isId, newId } from './ids.js';
export type { IdFactory, IdPrefix, RandomBytes } from './ids.js';

export { buildEnvelope, extractRawField } from './envelope.js';
export type { EnvelopeInput } from './envelope.js';

export {
  DEFAULT_TOLERANCE_S,
  InvalidSecretError,
  MAX_SECRET_BYTES,
  MIN_SECRET_BYTES,
  SECRET_PREFIX,
  generateSecret,
  isValidSecret,
  parseSecret,
  sign,
  signatureHeader,
  verify,
} from './signing.js';
export type { InvalidSecretReason, SignInput, SignatureHeaderInput, VerifyInput } from './signing.js';

export {
  ERROR_CODES,
  countsAgainstEndpoint,
  errorFamily,
  httpStatusCode,
  isRetried,
  isValidErrorCode,
} from './error-codes.js';
export type { ErrorCode, ErrorCodeInfo, ErrorFamily, ErrorRule, ErrorRuleOptions } from './error-codes.js';

export { MAX_ATTEMPTS, MAX_WAIT_MS, PRESET_NAMES, isPresetName, policySchema, resolvePolicy } from './policy.js';
export type { BreakerRule, Policy, PolicyIssue, PolicyResolution, PresetName, Schedule } from './policy.js';

export { PRESETS, listPresets } from './presets.js';

export { finishedExpiresAt } from './retention.js';
export type { Retention } from './retention.js';
export type { PresetInfo, PresetListing } from './presets.js';

export { parseRetryAfterMs, policyTimeline, retryDelayMs } from './retry-schedule.js';
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
  eventTypeSchema,
  matchesEventTypes,
} from './event-types.js';

export { outcomeOfResponse, planAfterAttempt, planBeforeAttempt, planBreakerTrip } from './attempt-plan.js';
export type { AfterAttemptInput, AfterAttemptPlan, AttemptOutcome, BeforeAttemptPlan, BreakerTripPlan, ClaimBlockers } from './attempt-plan.js';
export type { FailureStreak, HealthEffect } from './breaker.js';

export { RESPONSE_HEADER_LIMITS, boundHeaders, isEndpointFailure, keepsResponse, webhookRequestHeaders } from './attempt-detail.js';
export type { KeptHeaders, SentRequestFields } from './attempt-detail.js';

export { API_KEY_SCOPES, isApiKeyScope } from './api-key-scopes.js';
export type { ApiKeyScope } from './api-key-scopes.js';

export { LOG_REDACT_CENSOR, LOG_REDACT_PATHS, loggerOptions } from './log-redaction.js';
export { jsonConsole } from './console-logging.js';
export type { ConsoleMethods, FieldLogger } from './console-logging.js';
export { commonConfigShape, httpServerOptions, parseEnvConfig } from './env-config.js';
export type { HttpServerTimeoutOptions, HttpTimeoutSettings } from './env-config.js';

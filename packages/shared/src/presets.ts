import type { Policy, PresetName } from './policy.js';

/** A named, built-in policy and where its rules come from. */
export interface PresetInfo {
  /** Seed document number (`'000'`..`'004'`) the rules encode, or null for Postern's own default. */
  seed: string | null;
  /** One line for an API listing or a dashboard. */
  summary: string;
  /** Values the reproduced rules do not state, and where the preset's value comes from instead. */
  assumptions: readonly string[];
  /** The policy itself (deep-frozen; {@link resolvePolicy} hands out copies). */
  policy: Policy;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/** Postern's default; also supplies every value a preset's source rules leave open. */
const standard: Policy = {
  maxAttempts: 8,
  schedule: { kind: 'fixed', waitsMs: [5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR] },
  jitterRatio: 0.2,
  retryAfter: 'honour',
  timeout: { ms: 15_000, measures: 'whole-response' },
  redirects: { follow: false },
  unsafeUrl: 'fail-permanently',
  unsafeUrlCountsAgainstEndpoint: false,
  maxPayloadBytes: null,
  maxResponseBytesRead: 4096,
  keepResponseBody: 'failed',
  onEndpointInactive: 'hold',
  breaker: {
    counts: 'attempts',
    of: 'all',
    threshold: 20,
    minStreakMs: 5 * DAY,
    action: 'disable',
    pendingOnTrip: 'hold',
    reenable: 'resume',
    countTestEvents: false,
  },
  retryTestEvents: true,
  goneDisables: true,
  retention: { days: 30 },
  concurrency: { perEndpoint: 4, perOrg: 20 },
  redelivery: { allowed: true, whilePending: false },
  preAttemptCheck: 'none',
  ordering: 'none',
  rateLimit: null,
  pacing: 'none',
};

/**
 * The built-in presets: Postern's `standard` and five that reproduce the
 * documented delivery rules of five webhook senders (custral 000, jitter-45h
 * 001, tourical 002, kestrel 003, vestiarion 004; docs/architecture.md,
 * "Policies and presets"), as data. Values those rules leave open come from
 * `standard` unless `assumptions` says otherwise. They describe exact
 * schedules, so their presets use `jitterRatio: 0` and ignore Retry-After.
 *
 * Deep-frozen: use {@link resolvePolicy} to get a copy to keep or change.
 */
export const PRESETS: Readonly<Record<PresetName, PresetInfo>> = deepFreeze({
  standard: {
    seed: null,
    summary:
      "Postern's default: 8 attempts over about 27.5 hours with ±20% jitter, Retry-After honoured, 15 s timeout, " +
      'disabled after 20 failed attempts spanning 5 days with pending deliveries held.',
    assumptions: [],
    policy: standard,
  },
  custral: {
    seed: '000',
    summary:
      '8 attempts on fixed waits spanning about a day, 10 s timeout, status-only success, unsafe URLs and inactive ' +
      'endpoints fail at once, no auto-disable, no redelivery, log keeps the last 100 per endpoint.',
    assumptions: ['Concurrency is not stated in the rules custral reproduces: standard 4 per endpoint, 20 per org.'],
    policy: {
      ...standard,
      // Its rules treat a 4xx, 410 included, as an ordinary failure: retried, never an instant disable.
      goneDisables: false,
      schedule: { kind: 'fixed', waitsMs: [5 * SECOND, 30 * SECOND, 2 * MINUTE, 10 * MINUTE, HOUR, 5 * HOUR, 18 * HOUR] },
      jitterRatio: 0,
      retryAfter: 'ignore',
      timeout: { ms: 10_000, measures: 'whole-response' },
      maxResponseBytesRead: 0,
      keepResponseBody: 'none',
      onEndpointInactive: 'fail',
      breaker: null,
      retention: { lastPerEndpoint: 100 },
      redelivery: { allowed: false, whilePending: false },
    },
  },
  'jitter-45h': {
    seed: '001',
    summary:
      '8 attempts, each wait random between 30 s and a growing cap (about 45 hours in all), 10 s timeout, ' +
      'inactive endpoints cancel deliveries, disabled after 20 failed attempts over 72 hours, ' +
      "the org's pre-attempt check asked before every attempt.",
    assumptions: [
      'The rules jitter-45h reproduces give no cap table: caps 1m, 5m, 30m, 2h, 6h, 12h, 24h are Postern\'s assumption (docs/architecture.md).',
      'Body reading is not stated beyond success being the status: 0 bytes read.',
    ],
    policy: {
      ...standard,
      // Its rules treat a 4xx, 410 included, as an ordinary failure: retried, never an instant disable.
      goneDisables: false,
      schedule: {
        kind: 'random-up-to',
        floorMs: 30 * SECOND,
        capsMs: [MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR, 12 * HOUR, 24 * HOUR],
      },
      jitterRatio: 0,
      retryAfter: 'ignore',
      timeout: { ms: 10_000, measures: 'whole-response' },
      unsafeUrl: 'retry',
      maxResponseBytesRead: 0,
      keepResponseBody: 'none',
      onEndpointInactive: 'cancel',
      breaker: {
        counts: 'attempts',
        of: 'all',
        threshold: 20,
        minStreakMs: 72 * HOUR,
        action: 'disable',
        pendingOnTrip: 'cancel',
        reenable: 'resume',
        countTestEvents: false,
      },
      // jitter-45h's rules re-check the producer's own state before every attempt, redeliveries included.
      preAttemptCheck: 'every',
    },
  },
  tourical: {
    seed: '002',
    summary:
      '6 attempts on a fixed cascade over about 14.5 hours, 15 s timeout, redirects followed up to 3 hops, ' +
      'payloads over 1 MB refused, paused after 24 consecutive 4xx over 24 hours with deliveries kept pending.',
    assumptions: [
      'The rules tourical reproduces keep finished deliveries indefinitely for auditing: retention 3650 days.',
      'Jitter and Retry-After are not mentioned; the cascade is exact, so neither applies.',
      'The rules tourical reproduces claim one delivery per worker and give no limits: standard 4 per endpoint, 20 per org.',
    ],
    policy: {
      ...standard,
      // Its rules treat a 4xx, 410 included, as an ordinary failure: retried, never an instant disable.
      goneDisables: false,
      maxAttempts: 6,
      schedule: { kind: 'fixed', waitsMs: [MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 12 * HOUR] },
      jitterRatio: 0,
      retryAfter: 'ignore',
      redirects: { follow: true, maxHops: 3 },
      unsafeUrl: 'retry',
      maxPayloadBytes: 1024 * 1024,
      maxResponseBytesRead: 0,
      keepResponseBody: 'none',
      breaker: {
        counts: 'attempts',
        of: '4xx',
        threshold: 24,
        minStreakMs: 24 * HOUR,
        action: 'pause',
        pendingOnTrip: 'hold',
        reenable: 'resume',
        countTestEvents: false,
      },
      retention: { days: 3650 },
      redelivery: { allowed: true, whilePending: true },
    },
  },
  kestrel: {
    seed: '003',
    summary:
      '6 attempts with exponential backoff and full jitter (2 s base, 32 s cap, about a minute in all), ' +
      '10 s to response headers, disabled after 20 consecutive failed deliveries with queued ones held.',
    assumptions: [
      'The rules kestrel reproduces tie retention to a per-plan window they do not size: 30 days.',
      'Concurrency and body reading are not stated in the rules kestrel reproduces: standard values.',
      'Retry-After is not mentioned; the backoff formula alone sets the wait.',
    ],
    policy: {
      ...standard,
      // Its rules treat a 4xx, 410 included, as an ordinary failure: retried, never an instant disable.
      goneDisables: false,
      maxAttempts: 6,
      schedule: { kind: 'exponential-full-jitter', baseMs: 2 * SECOND, capMs: 32 * SECOND },
      jitterRatio: 0,
      retryAfter: 'ignore',
      timeout: { ms: 10_000, measures: 'response-headers' },
      unsafeUrl: 'retry',
      breaker: {
        counts: 'deliveries',
        of: 'all',
        threshold: 20,
        minStreakMs: 0,
        action: 'disable',
        pendingOnTrip: 'hold',
        reenable: 'resume',
        countTestEvents: false,
      },
      redelivery: { allowed: true, whilePending: true },
    },
  },
  vestiarion: {
    seed: '004',
    summary:
      '7 attempts on a fixed schedule over about 20.5 hours, 10 s timeout, at most 1 KB of the body read, test events never retried, ' +
      'disabled after 20 failed attempts (tests and unsafe URLs included) with pending deliveries failed; ' +
      're-create to re-enable.',
    assumptions: [
      'The rules vestiarion reproduces give no wait table: 1m, 5m, 30m, 2h, 6h, 12h are Postern\'s assumption (docs/architecture.md).',
      'Retention and concurrency are not stated in the rules vestiarion reproduces: standard values.',
      'Response headers are not inspected, so Retry-After is ignored; waits are exact (no jitter).',
    ],
    policy: {
      ...standard,
      // Its rules treat a 4xx, 410 included, as an ordinary failure: retried, never an instant disable.
      goneDisables: false,
      maxAttempts: 7,
      schedule: { kind: 'fixed', waitsMs: [MINUTE, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 6 * HOUR, 12 * HOUR] },
      jitterRatio: 0,
      retryAfter: 'ignore',
      timeout: { ms: 10_000, measures: 'whole-response' },
      unsafeUrl: 'retry',
      unsafeUrlCountsAgainstEndpoint: true,
      maxResponseBytesRead: 1024,
      onEndpointInactive: 'fail',
      breaker: {
        counts: 'attempts',
        of: 'all',
        threshold: 20,
        minStreakMs: 0,
        action: 'disable',
        pendingOnTrip: 'fail',
        reenable: 'recreate',
        countTestEvents: true,
      },
      retryTestEvents: false,
      redelivery: { allowed: false, whilePending: false },
    },
  },
});

/** One row of {@link listPresets}: a preset with its name. */
export interface PresetListing extends PresetInfo {
  name: PresetName;
}

/**
 * Every preset in {@link PRESET_NAMES} order, for `GET /v1/policies`. The
 * policies are the frozen originals: serialise them, do not mutate them.
 */
export function listPresets(): PresetListing[] {
  return (Object.keys(PRESETS) as PresetName[]).map((name) => ({ name, ...PRESETS[name] }));
}

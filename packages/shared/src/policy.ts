import { z } from 'zod';
import { PRESETS } from './presets.js';
import type { PreAttemptCheckMode } from './pre-attempt-check.js';
import { keysTaken } from './schema-keys.js';
import { plainIssue } from './validation-messages.js';

/**
 * How long to wait after a failed attempt before the next one.
 *
 * - `fixed`: `waitsMs[i]` is the wait after failed attempt `i + 1`, before
 *   `jitterRatio` is applied (custral, tourical and vestiarion).
 * - `random-up-to`: uniform in `[floorMs, max(floorMs, capsMs[i])]` (jitter-45h).
 * - `exponential-full-jitter`: uniform in `[0, min(capMs, baseMs * 2^(n-1))]`,
 *   `n` the failed attempt number (kestrel).
 *
 * Every wait is whole milliseconds, 0..30 days. Waits of a few milliseconds
 * are allowed so integration tests run fast.
 */
export type Schedule =
  | { kind: 'fixed'; waitsMs: number[] }
  | { kind: 'random-up-to'; capsMs: number[]; floorMs: number }
  | { kind: 'exponential-full-jitter'; baseMs: number; capMs: number };

/**
 * When an endpoint that keeps failing is switched off, and what happens then.
 * A success resets the streak.
 */
export interface BreakerRule {
  /** What a streak is made of: failed attempts (jitter-45h, tourical and vestiarion) or failed deliveries (kestrel). */
  counts: 'attempts' | 'deliveries';
  /** Which failures extend the streak: all, or only HTTP 4xx answers (tourical). */
  of: 'all' | '4xx';
  /** Consecutive failures that trip the breaker, integer 1..10000. */
  threshold: number;
  /** The streak must also span at least this long, ms, 0..365 days (jitter-45h: 72 h; tourical: 24 h). */
  minStreakMs: number;
  /** Endpoint status after a trip: `disabled` or `paused` (tourical). */
  action: 'disable' | 'pause';
  /** Pending deliveries on a trip: cancelled (001), held for later (002, 003) or failed (004). */
  pendingOnTrip: 'cancel' | 'hold' | 'fail';
  /** How an operator brings it back: resume in place, or delete and re-create with a new secret (vestiarion). */
  reenable: 'resume' | 'recreate';
  /** Whether failures of `webhook.test` events extend the streak (vestiarion: they do). */
  countTestEvents: boolean;
}

/**
 * The rules for one endpoint's deliveries (docs/architecture.md, "Policies"). Presets in
 * `presets.ts` encode each preset; {@link resolvePolicy} turns API input into one.
 */
export interface Policy {
  /** Total attempts, the first included, integer 1..100. */
  maxAttempts: number;
  /** Waits between attempts; a fixed list (or caps list) needs at least `maxAttempts - 1` entries. */
  schedule: Schedule;
  /** ± fraction applied to fixed waits only, 0..0.5 (standard: 0.2; 0 = exact waits). */
  jitterRatio: number;
  /** `honour`: on 429/503 with Retry-After, wait = clamp(retryAfter, wait, 2 × wait). */
  retryAfter: 'ignore' | 'honour';
  /**
   * Per-attempt timeout, `ms` integer 1..120000. `whole-response`: until the
   * body is read, across redirect hops; `response-headers`: from the request
   * being written until headers arrive (kestrel).
   */
  timeout: { ms: number; measures: 'whole-response' | 'response-headers' };
  /** 3xx handling: a failure (`redirect_not_followed`), or followed up to `maxHops` 1..10 (tourical: 3). */
  redirects: { follow: false } | { follow: true; maxHops: number };
  /** A URL or resolved address that fails the safety rules: final at once (custral) or retried. */
  unsafeUrl: 'fail-permanently' | 'retry';
  /** Whether an `unsafe_url:*` failure counts toward the breaker (vestiarion: yes). */
  unsafeUrlCountsAgainstEndpoint: boolean;
  /** Envelope bytes above this are never sent (`payload_too_large`, final); integer 1..64 MiB, or null for no limit. */
  maxPayloadBytes: number | null;
  /** Read at most this many response body bytes, then stop; integer 0..1 MiB (0 = do not read). */
  maxResponseBytesRead: number;
  /**
   * Which attempts keep the response's headers (at most `RESPONSE_HEADER_LIMITS`, see `attempt-detail.ts`) and body
   * excerpt (at most `maxResponseBytesRead` bytes) in the delivery log: `failed` (default) only
   * attempts that did not succeed, `all`, or `none` (the status alone; presets whose seed reads no
   * body: custral, jitter-45h, tourical). Kept as long as the attempt (the policy's `retention`).
   */
  keepResponseBody: 'failed' | 'all' | 'none';
  /** An endpoint paused or disabled before an attempt: cancel the delivery, hold it pending, or fail it. */
  onEndpointInactive: 'cancel' | 'hold' | 'fail';
  /** Auto-disable rule, or null for none (custral). */
  breaker: BreakerRule | null;
  /** Whether failed `webhook.test` deliveries are retried (vestiarion: never). */
  retryTestEvents: boolean;
  /**
   * Whether the first `410 Gone` answer disables the endpoint at once, like a breaker trip (a
   * notification and the `endpoint.disabled` operational webhook); its pending deliveries then
   * follow `onEndpointInactive`, and resume brings it back (`recreate` where the breaker says so).
   * `standard`: true. Every seed preset: false (each of their rules treats a 4xx, 410 included,
   * as an ordinary failure that is retried). Absent in policies stored before it existed: false.
   */
  goneDisables: boolean;
  /** How long finished deliveries are kept: `days` 1..3650, or the newest `lastPerEndpoint` 1..100000. */
  retention: { days: number } | { lastPerEndpoint: number };
  /** Attempts in flight at once: `perEndpoint` 1..1000, `perOrg` 1..10000 (jitter-45h: 4 and 20). */
  concurrency: { perEndpoint: number; perOrg: number };
  /** Whether operators may redeliver, and whether a delivery still pending may be redelivered. */
  redelivery: { allowed: boolean; whilePending: boolean };
  /**
   * Whether the org's pre-attempt check URL (`PATCH /v1/org`) is asked before an attempt
   * (issue 16, see `pre-attempt-check.ts`): `none` (default; also when the org has no check URL),
   * `first` (until one answer says send, which freezes the body) or `every` (jitter-45h: before
   * every attempt and redelivery). Absent in policies stored before it existed: `none`.
   */
  preAttemptCheck: PreAttemptCheckMode;
  /**
   * `per-key`: deliveries of events with the same `orderingKey` go to this endpoint one at a time,
   * in acceptance order, each after the one before it succeeded or ended (issue 13); `none`
   * (every preset): no order beyond oldest first. Absent in policies stored before issue 13: `none`.
   */
  ordering?: 'none' | 'per-key';
  /**
   * Requests per second to this endpoint, across every sender (a GCRA in the claim step):
   * `perSecond` 0.1..10000, `burst` 0..10000 extra requests allowed at once (default 0); null (default) = none.
   * A delivery over the limit waits for its turn without spending an attempt.
   */
  rateLimit?: RateLimit | null;
  /**
   * `adaptive`: 429/503 answers and timeouts cut the endpoint's rate and concurrency, successes
   * raise them back to the policy's limits, and a Retry-After pauses the whole endpoint (AIMD,
   * `pace.ts`); `none` (default): the limits stay as written.
   */
  pacing?: 'none' | 'adaptive';
}

/** A policy's `rateLimit`: at most `perSecond` requests a second, plus `burst` at once. */
export interface RateLimit {
  perSecond: number;
  burst: number;
}

/** Names of the built-in presets: Postern's `standard` and the five that reproduce other senders' rules. */
export const PRESET_NAMES = ['standard', 'custral', 'jitter-45h', 'tourical', 'kestrel', 'vestiarion'] as const;

/** One of {@link PRESET_NAMES}. */
export type PresetName = (typeof PRESET_NAMES)[number];

/** Whether `name` is one of {@link PRESET_NAMES}. */
export function isPresetName(name: unknown): name is PresetName {
  return typeof name === 'string' && (PRESET_NAMES as readonly string[]).includes(name);
}

/** Longest single wait any schedule may ask for: 30 days, in ms. */
export const MAX_WAIT_MS = 30 * 24 * 60 * 60 * 1000;
/** Most attempts a policy may allow. */
export const MAX_ATTEMPTS = 100;
const DAY_MS = 24 * 60 * 60 * 1000;
const MIB = 1024 * 1024;

function intIn(name: string, min: number, max: number) {
  const error = `${name} must be an integer from ${min} to ${max}`;
  return z.number({ error }).int({ error }).min(min, { error }).max(max, { error });
}

function oneOf<const T extends readonly [string, ...string[]]>(name: string, values: T) {
  return z.enum(values, { error: `${name} must be one of ${values.join(', ')}` });
}

function flag(name: string) {
  return z.boolean({ error: `${name} must be true or false` });
}

function waitList(name: string) {
  return z
    .array(intIn(`each ${name} entry`, 0, MAX_WAIT_MS), { error: `${name} must be an array of integers` })
    .max(MAX_ATTEMPTS, { error: `${name} must have at most ${MAX_ATTEMPTS} entries` });
}

const scheduleSchema = z.discriminatedUnion(
  'kind',
  [
    z.strictObject({ kind: z.literal('fixed'), waitsMs: waitList('schedule.waitsMs') }),
    z.strictObject({
      kind: z.literal('random-up-to'),
      capsMs: waitList('schedule.capsMs'),
      floorMs: intIn('schedule.floorMs', 0, MAX_WAIT_MS),
    }),
    z.strictObject({
      kind: z.literal('exponential-full-jitter'),
      // A base of 0 would make every wait 0: retries in a tight loop.
      baseMs: intIn('schedule.baseMs', 1, MAX_WAIT_MS),
      capMs: intIn('schedule.capMs', 1, MAX_WAIT_MS),
    }),
  ],
  { error: 'schedule.kind must be one of fixed, random-up-to, exponential-full-jitter' },
);

const breakerSchema = z
  .strictObject(
    {
      counts: oneOf('breaker.counts', ['attempts', 'deliveries']),
      of: oneOf('breaker.of', ['all', '4xx']),
      threshold: intIn('breaker.threshold', 1, 10_000),
      minStreakMs: intIn('breaker.minStreakMs', 0, 365 * DAY_MS),
      action: oneOf('breaker.action', ['disable', 'pause']),
      pendingOnTrip: oneOf('breaker.pendingOnTrip', ['cancel', 'hold', 'fail']),
      reenable: oneOf('breaker.reenable', ['resume', 'recreate']),
      countTestEvents: flag('breaker.countTestEvents'),
    },
    { error: 'breaker must be null or an object' },
  )
  .nullable();

const policyObjectSchema = z.strictObject(
  {
    maxAttempts: intIn('maxAttempts', 1, MAX_ATTEMPTS),
    schedule: scheduleSchema,
    jitterRatio: z
      .number({ error: 'jitterRatio must be a number from 0 to 0.5' })
      .min(0, { error: 'jitterRatio must be a number from 0 to 0.5' })
      .max(0.5, { error: 'jitterRatio must be a number from 0 to 0.5' }),
    retryAfter: oneOf('retryAfter', ['ignore', 'honour']),
    timeout: z.strictObject(
      {
        ms: intIn('timeout.ms', 1, 120_000),
        measures: oneOf('timeout.measures', ['whole-response', 'response-headers']),
      },
      { error: 'timeout must be an object {ms, measures}' },
    ),
    redirects: z.discriminatedUnion(
      'follow',
      [
        z.strictObject({ follow: z.literal(false) }),
        z.strictObject({ follow: z.literal(true), maxHops: intIn('redirects.maxHops', 1, 10) }),
      ],
      { error: 'redirects must be {follow: false} or {follow: true, maxHops}' },
    ),
    unsafeUrl: oneOf('unsafeUrl', ['fail-permanently', 'retry']),
    unsafeUrlCountsAgainstEndpoint: flag('unsafeUrlCountsAgainstEndpoint'),
    maxPayloadBytes: z
      .number({ error: `maxPayloadBytes must be null or an integer from 1 to ${64 * MIB}` })
      .int({ error: `maxPayloadBytes must be null or an integer from 1 to ${64 * MIB}` })
      .min(1, { error: `maxPayloadBytes must be null or an integer from 1 to ${64 * MIB}` })
      .max(64 * MIB, { error: `maxPayloadBytes must be null or an integer from 1 to ${64 * MIB}` })
      .nullable(),
    maxResponseBytesRead: intIn('maxResponseBytesRead', 0, MIB),
    keepResponseBody: oneOf('keepResponseBody', ['failed', 'all', 'none']),
    onEndpointInactive: oneOf('onEndpointInactive', ['cancel', 'hold', 'fail']),
    breaker: breakerSchema,
    retryTestEvents: flag('retryTestEvents'),
    goneDisables: flag('goneDisables'),
    retention: z.union(
      [
        z.strictObject({ days: intIn('retention.days', 1, 3650) }),
        z.strictObject({ lastPerEndpoint: intIn('retention.lastPerEndpoint', 1, 100_000) }),
      ],
      { error: 'retention must be {days} or {lastPerEndpoint}' },
    ),
    concurrency: z.strictObject(
      {
        perEndpoint: intIn('concurrency.perEndpoint', 1, 1000),
        perOrg: intIn('concurrency.perOrg', 1, 10_000),
      },
      { error: 'concurrency must be an object {perEndpoint, perOrg}' },
    ),
    redelivery: z.strictObject(
      { allowed: flag('redelivery.allowed'), whilePending: flag('redelivery.whilePending') },
      { error: 'redelivery must be an object {allowed, whilePending}' },
    ),
    preAttemptCheck: oneOf('preAttemptCheck', ['none', 'first', 'every']),
    ordering: oneOf('ordering', ['none', 'per-key']).optional(),
    rateLimit: z
      .strictObject(
        {
          perSecond: z
            .number({ error: 'rateLimit.perSecond must be a number from 0.1 to 10000' })
            .min(0.1, { error: 'rateLimit.perSecond must be a number from 0.1 to 10000' })
            .max(10_000, { error: 'rateLimit.perSecond must be a number from 0.1 to 10000' }),
          burst: intIn('rateLimit.burst', 0, 10_000).default(0),
        },
        { error: 'rateLimit must be null or an object {perSecond, burst}' },
      )
      .nullable()
      .optional(),
    pacing: oneOf('pacing', ['none', 'adaptive']).optional(),
  },
  { error: 'policy must be an object' },
);

/**
 * zod 4 schema for a complete {@link Policy}. Every object is strict (an
 * unknown key, usually a typo, is an error) and every message names the
 * allowed range, e.g. "maxAttempts must be an integer from 1 to 100".
 * Cross-field rules: a fixed `waitsMs` (or `capsMs`) list needs at least
 * `maxAttempts - 1` entries, the issue path is `schedule.waitsMs` (`capsMs`);
 * an exponential schedule's `capMs` must be at least its `baseMs`.
 */
export const policySchema = policyObjectSchema.superRefine((policy, ctx) => {
  const { schedule } = policy;
  if (schedule.kind === 'exponential-full-jitter') {
    if (schedule.capMs < schedule.baseMs) {
      ctx.addIssue({
        code: 'custom',
        path: ['schedule', 'capMs'],
        message: `schedule.capMs must be an integer from schedule.baseMs (${schedule.baseMs}) to ${MAX_WAIT_MS}, got ${schedule.capMs}`,
      });
    }
    return;
  }
  const [list, length] = schedule.kind === 'fixed' ? ['waitsMs', schedule.waitsMs.length] : ['capsMs', schedule.capsMs.length];
  const needed = policy.maxAttempts - 1;
  if (length < needed) {
    ctx.addIssue({
      code: 'custom',
      path: ['schedule', list],
      message: `schedule.${list} must have at least ${needed} entries (maxAttempts - 1), got ${length}`,
    });
  }
});

type Expect<T extends true> = T;
type MutuallyAssignable<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
// Compile-time guard: the schema and the hand-written interface must describe the same shape.
type _PolicySchemaMatchesPolicy = Expect<MutuallyAssignable<z.infer<typeof policySchema>, Policy>>;

/** One validation problem; `path` starts with `policy`, e.g. `policy.schedule.waitsMs[2]`. */
export interface PolicyIssue {
  path: string;
  message: string;
}

/** Result of {@link resolvePolicy}. */
export type PolicyResolution =
  | {
      ok: true;
      policy: Policy;
      /**
       * The preset this policy is equal to, whatever the input looked like (`{}`, a preset's name,
       * overrides that change nothing, a full copy of a preset): the base preset first; else null.
       */
      presetName: PresetName | null;
      /** The preset the input started from (`standard` when none was named). */
      basePresetName: PresetName;
      /**
       * Rules an override left in place that will surprise (see {@link overrideWarnings}), as
       * sentences naming the field; empty when there are none.
       */
      warnings: string[];
    }
  | { ok: false; issues: PolicyIssue[] };

function formatPath(path: readonly PropertyKey[]): string {
  let out = 'policy';
  for (const part of path) out += typeof part === 'number' ? `[${part}]` : `.${String(part)}`;
  return out;
}

/**
 * `unknown field "max"; redirects takes {follow: false} or {follow: true, maxHops}`: the key, and
 * what the object it was found in takes (`preset` too at the top, which resolvePolicy reads first).
 */
function unknownField(objectPath: readonly PropertyKey[], key: string): PolicyIssue {
  const taken = objectPath.length === 0 ? `preset, ${keysTaken(policyObjectSchema, [])}` : keysTaken(policyObjectSchema, objectPath);
  const name = objectPath.length === 0 ? 'policy' : String(objectPath.at(-1));
  return { path: formatPath([...objectPath, key]), message: `unknown field "${key}"${taken === null ? '' : `; ${name} takes ${taken}`}` };
}

/** Keys every option of a failed union refused: unknown whichever shape was meant (`retention: {day: 3}`). */
function unknownInEveryOption(issue: z.core.$ZodIssueInvalidUnion): string[] {
  const [first, ...rest] = issue.errors.map((option) => option.flatMap((i) => (i.code === 'unrecognized_keys' && i.path.length === 0 ? i.keys : [])));
  return (first ?? []).filter((key) => rest.every((keys) => keys.includes(key)));
}

/**
 * The issues of a failed parse, unknown keys first: a misspelt key usually also leaves the key it
 * meant missing (`redirects: {follow: true, max: 3}`), and "maxHops must be…" would hide the typo.
 */
function toIssues(error: z.ZodError): PolicyIssue[] {
  const unknown: PolicyIssue[] = [];
  const others: PolicyIssue[] = [];
  for (const issue of error.issues) {
    const unknownKeys = issue.code === 'unrecognized_keys' ? issue.keys : issue.code === 'invalid_union' ? unknownInEveryOption(issue) : [];
    if (unknownKeys.length > 0) {
      for (const key of unknownKeys) unknown.push(unknownField(issue.path, key));
    } else {
      const plain = plainIssue(issue);
      others.push({ path: formatPath(plain.path), message: plain.message });
    }
  }
  return [...unknown, ...others];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Fields whose value is one of several shapes: an override that names a
 * different shape replaces the base value instead of merging into it, or the
 * merge would mix keys of two shapes and fail the strict check.
 */
function replacesVariant(field: string, base: Record<string, unknown>, override: Record<string, unknown>): boolean {
  if (field === 'schedule') return 'kind' in override && override.kind !== base.kind;
  if (field === 'redirects') return 'follow' in override && override.follow !== base.follow;
  return field === 'retention';
}

function deepMerge(base: unknown, override: unknown, field = ''): unknown {
  if (!isPlainObject(base) || !isPlainObject(override) || replacesVariant(field, base, override)) {
    return override;
  }
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override)) {
    const merged = value === undefined ? base[key] : deepMerge(base[key], value, field === '' ? key : `${field}.${key}`);
    // defineProperty, not assignment: a "__proto__" key from JSON must stay a field (and fail the
    // strict check) instead of replacing the merged object's prototype.
    Object.defineProperty(out, key, { value: merged, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (isPlainObject(a) && isPlainObject(b)) {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => k in b && deepEqual(a[k], b[k]));
  }
  return false;
}

const UNKNOWN_PRESET = `must name a preset: one of ${PRESET_NAMES.join(', ')}`;

/**
 * Turns the `policy` field of an endpoint request into a validated Policy.
 *
 * - `undefined`: the `standard` preset.
 * - a string: that preset; an unknown name is an issue at path `policy`.
 * - `{preset: name, ...overrides}`: the overrides deep-merged onto the preset.
 * - any other object: deep-merged onto `standard`, so a partial policy such as
 *   `{maxAttempts: 3}` is enough.
 *
 * Merging: objects merge key by key; arrays, numbers and `null` replace. An
 * override of `schedule` with another `kind`, of `redirects` with another
 * `follow`, and any `retention` replace the whole value. The merged result is
 * then checked with {@link policySchema}. A result equal to a preset is
 * reported as that preset (`presetName`), so `{}` is `standard`.
 *
 * @returns `{ok: true, policy, presetName, basePresetName}` with a fresh copy
 *   (never a shared preset object), or `{ok: false, issues}` with paths
 *   starting `policy.` and messages naming the allowed range. Never throws.
 */
export function resolvePolicy(input: unknown): PolicyResolution {
  let baseName: PresetName = 'standard';
  let overrides: Record<string, unknown> = {};
  if (typeof input === 'string') {
    if (!isPresetName(input)) return { ok: false, issues: [{ path: 'policy', message: `policy ${UNKNOWN_PRESET}` }] };
    baseName = input;
  } else if (isPlainObject(input)) {
    const { preset, ...rest } = input;
    if (preset !== undefined) {
      if (!isPresetName(preset)) {
        return { ok: false, issues: [{ path: 'policy.preset', message: `preset ${UNKNOWN_PRESET}` }] };
      }
      baseName = preset;
    }
    overrides = rest;
  } else if (input !== undefined) {
    return { ok: false, issues: [{ path: 'policy', message: 'policy must be a preset name or a policy object' }] };
  }
  const base = PRESETS[baseName].policy;
  // zod builds new objects and arrays, so the result never aliases the frozen preset.
  const parsed = policySchema.safeParse(deepMerge(base, overrides));
  if (!parsed.success) return { ok: false, issues: toIssues(parsed.error) };
  const policy: Policy = parsed.data;
  const presetName = deepEqual(policy, base) ? baseName : (PRESET_NAMES.find((name) => deepEqual(policy, PRESETS[name].policy)) ?? null);
  return { ok: true, policy, presetName, basePresetName: baseName, warnings: overrideWarnings(overrides, policy, baseName) };
}

/** Below this, a streak the breaker waits for is short enough not to warn about, ms. */
const NOTABLE_STREAK_MS = 60 * 60 * 1000;

function formatDurationMs(ms: number): string {
  const hours = ms / 3_600_000;
  return hours >= 48 ? `${Math.round(hours / 24)} days` : `${Math.round(hours)} h`;
}

/**
 * Overrides merge field by field into their base preset (nested objects too: `{"breaker":
 * {"threshold": 3}}` changes the threshold and keeps every other breaker field of the preset).
 * This names the cases where that hides a rule: a breaker override that leaves the preset's
 * `minStreakMs` of an hour or more, so a lowered threshold does not make the breaker trip sooner;
 * and a `perEndpoint` above `perOrg`, which the org's limit caps.
 */
export function overrideWarnings(overrides: Record<string, unknown>, policy: Policy, baseName: PresetName): string[] {
  const warnings: string[] = [];
  const breaker = overrides.breaker;
  if (isPlainObject(breaker) && !('minStreakMs' in breaker) && policy.breaker && policy.breaker.minStreakMs >= NOTABLE_STREAK_MS) {
    warnings.push(
      `breaker.minStreakMs: ${policy.breaker.minStreakMs} (${formatDurationMs(policy.breaker.minStreakMs)}) is kept from the "${baseName}" preset: ` +
        `the breaker trips only after failures have gone on that long, whatever breaker.threshold says; set breaker.minStreakMs too to change it`,
    );
  }
  const { perEndpoint, perOrg } = policy.concurrency;
  if (perEndpoint > perOrg) {
    warnings.push(`concurrency.perEndpoint: ${perEndpoint} is more than concurrency.perOrg (${perOrg}): the org's limit caps this endpoint at ${perOrg} attempts at once`);
  }
  return warnings;
}

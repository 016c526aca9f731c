import type { RedisClient } from './redis-connection.js';
import type { DeliveryRepository } from './delivery-repository.js';
import type { KeySchema } from './keys.js';
import { leaseScriptKeys } from './lease-repository.js';
import { LuaScript } from './lua-script.js';
import { LIVE_STREAM_DEFAULTS, finishedExpiresAt, isEndpointFailure, isEventTypeDisabled, RATE_SEND_LAG_MS, rateIntervalMs, type Pace, type RateLimit, type Retention, type SecretBox, type SentRequestFields } from '@postern/shared';
import { parseDelivery, parseEndpoint, parsePace, parseOrgAttemptSettings, type OrgAttemptSettings, type AttemptResponseRecord, type StoredAttempt, type DeliveryRecord, type DeliveryStatus, type EndpointRecord } from './records.js';
import { encodeAttempt } from './attempt-encoding.js';
import type { LiveFeedSettings } from './live-feed-repository.js';

const claimScript = LuaScript.load('claim-attempt');
const rateTurnScript = LuaScript.load('take-rate-turn');
const finishScript = LuaScript.load('finish-attempt');
const settleScript = LuaScript.load('settle-delivery');

/**
 * A crashed sender's concurrency slot comes back this long after its attempt's timeout at the
 * latest, ms: by then its attempt is surely over.
 */
export const LEASE_GRACE_MS = 30_000;

/** The ids an attempt's keys are built from: all of them travel in the delivery's job. */
export interface AttemptIds {
  deliveryId: string;
  endpointId: string;
  eventId: string;
  orgId: string;
}

/**
 * Result of {@link AttemptRepository.claim}:
 * - `missing`: no such delivery;
 * - `finished`: it already ended (`woken`: parked deliveries a slot it still held lets in);
 * - `not_due`: its next attempt is scheduled at `nextAttemptAt` (epoch ms), later than now: nothing
 *   was taken (a wake-up or promote that reached its job early); the job waits until then;
 * - `blocked`: no attempt was begun because the endpoint is gone or inactive, the org suspended, the
 *   event type switched off by the org or the payload over the policy's limit: `planBeforeAttempt`
 *   says what to do;
 * - `parked`: no slot now; the delivery waits, parked, for a release to wake it (`endpoint`, `org`,
 *   `event_claim`: a slot, or its turn in the endpoint's line, with `ahead` deliveries before it
 *   there); `ordering_key`: an earlier
 *   delivery of its ordering key must end first (`keyLine` names its entry, for the wake-up check);
 *   `pace`: the rate limit or an adaptive pause says wait until `retryAt` (epoch ms);
 * - `claimed`: the attempt is begun (recorded `in_flight` with its number) and its lease taken;
 *   `org` carries the org's settings an attempt needs (its pre-attempt check), read with its status.
 */
export type ClaimResult =
  | { kind: 'missing' }
  | { kind: 'finished'; status: DeliveryStatus; woken: string[] }
  | { kind: 'not_due'; nextAttemptAt: number }
  | {
      kind: 'blocked';
      delivery: DeliveryRecord;
      endpoint: EndpointRecord | null;
      orgSuspended: boolean;
      /** The org switched the delivery's event type off (`disabledEventTypes`). */
      eventTypeDisabled: boolean;
      /** Byte length of the envelope; null when the event is gone. */
      envelopeBytes: number | null;
      woken: string[];
    }
  | { kind: 'parked'; limit: 'endpoint'; ahead: number }
  | { kind: 'parked'; limit: 'org' | 'event_claim' }
  | { kind: 'parked'; limit: 'ordering_key'; keyLine: string }
  | { kind: 'parked'; limit: 'pace'; retryAt: number }
  | { kind: 'claimed'; attemptNumber: number; delivery: DeliveryRecord; endpoint: EndpointRecord; envelope: string | null; org: OrgAttemptSettings };

/** Input of {@link AttemptRepository.finish}: an attempt's outcome as `planAfterAttempt` decided it. */
export interface FinishInput {
  ids: AttemptIds;
  attemptNumber: number;
  /** When the attempt ended, epoch ms. */
  nowMs: number;
  startedAt: number;
  /**
   * `pending` = a retry is scheduled at `nextAttemptAt`; `cancelled` = the org's pre-attempt check
   * cancelled the delivery with `cancelReason` before anything was sent (health untouched).
   */
  nextStatus: 'succeeded' | 'pending' | 'failed' | 'cancelled';
  /** With `cancelled`: `check:<reason>`. */
  cancelReason?: string;
  responseStatus: number | null;
  error: string | null;
  durationMs: number;
  nextAttemptAt: number | null;
  health: 'success' | 'failure' | 'none';
  /**
   * What the request's headers were built from (`webhookRequestHeaders` rebuilds them when read);
   * null when nothing was sent (a fault before the request).
   */
  request: SentRequestFields | null;
  /** What the policy's `keepResponseBody` kept of the answer, else null. */
  response: AttemptResponseRecord | null;
  /** The endpoint transformation's version that ran and sent nothing (failed or cancelled); absent = none ran, or `request.transformed` says. */
  transformationVersion?: number;
  /** The endpoint policy's concurrency limits, to wake as many parked deliveries as have room. */
  concurrency: { perEndpoint: number; perOrg: number };
  /** The endpoint policy's retention, applied if this attempt finishes the delivery. */
  retention: Retention;
  /**
   * Adaptive pacing (`nextPace`): the endpoint's next pace (null = back at the policy's limits),
   * the pace the attempt was claimed under and whether it is a slow-down's. It is written only if
   * the stored pace is still the one claimed under; a slow-down's that is not comes back as
   * {@link FinishResult.paceNow}, for the caller to compute again from it ({@link EndpointRepository.setPace}).
   */
  pace?: { next: Pace | null; claimedUnder: Pace | null; slowDown: boolean };
}

/**
 * Result of {@link AttemptRepository.finish}: `stale` when the attempt was no longer the
 * delivery's current one (nothing recorded); the endpoint's failure streak after it; the parked
 * deliveries the freed slot lets in, for the caller to wake.
 */
export interface FinishResult {
  kind: 'ok' | 'stale';
  /** Finished deliveries of a `{lastPerEndpoint}` endpoint removed after this finish (by it, or 0 when another trim of the endpoint was running). */
  trimmed: number;
  consecutiveFailures: number;
  failureStreakStartedAt: number | null;
  /** A slow-down's pace was not written, because the stored pace changed since the claim: this is it now (null = none). */
  paceNow?: Pace | null;
  woken: string[];
}

/** Builds a record from a Redis hash returned by a script as a field, value, … list. */
function hashOf(flat: unknown): Record<string, string> {
  const h: Record<string, string> = {};
  if (!Array.isArray(flat)) return h;
  for (let i = 0; i + 1 < flat.length; i += 2) h[String(flat[i])] = String(flat[i + 1]);
  return h;
}

/** The org fields the claim reads (status, disabledEventTypes, check URL, check secret); absent ones null. */
function orgFields(raw: unknown): [string | null, string | null, string | null, string | null] {
  const list = Array.isArray(raw) ? raw : [];
  const at = (i: number) => (typeof list[i] === 'string' && list[i] !== '' ? (list[i] as string) : null);
  return [at(0), at(1), at(2), at(3)];
}

const REFUSALS = { '-1': 'org', '-2': 'event_claim' } as const;

/**
 * The two Redis calls of one attempt (docs/architecture.md, "one attempt"): `claim` before the
 * request, `finish` after it; plus `settle` for a delivery that is ended or held without one.
 * Every key the scripts touch is built here and passed in `KEYS`.
 */
export class AttemptRepository {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: KeySchema,
    private readonly deliveries: DeliveryRepository,
    private readonly box: SecretBox,
    private readonly liveFeed: LiveFeedSettings = { maxEntries: LIVE_STREAM_DEFAULTS.feedMaxEntries, ttlS: LIVE_STREAM_DEFAULTS.feedTtlS },
  ) {}

  private leaseKeys(ids: AttemptIds): string[] {
    return leaseScriptKeys(this.keys, ids);
  }

  /**
   * One call before the request: reads the delivery, its endpoint, the org's status and the
   * envelope; refuses a finished delivery; takes the per-endpoint and per-org lease with the event
   * claim (or parks the delivery, oldest first); and begins the attempt (recorded `in_flight` with
   * its number and start time before any byte is sent). A delivery already `in_flight` (its sender
   * died mid-attempt) runs the same attempt number again.
   */
  async claim(ids: AttemptIds, nowMs: number): Promise<ClaimResult> {
    const k = this.keys;
    const r = (await claimScript.run(
      this.redis,
      [
        ...this.leaseKeys(ids),
        k.delivery(ids.orgId, ids.deliveryId),
        k.deliveryAttempts(ids.orgId, ids.deliveryId),
        k.endpoint(ids.orgId, ids.endpointId),
        k.org(ids.orgId),
        k.event(ids.orgId, ids.eventId),
        k.endpointHeld(ids.orgId, ids.endpointId),
        k.endpointKeyLines(ids.orgId, ids.endpointId),
        k.endpointRate(ids.orgId, ids.endpointId),
      ],
      [ids.deliveryId, nowMs, LEASE_GRACE_MS, ids.eventId, RATE_SEND_LAG_MS],
    )) as unknown[];
    switch (r[0]) {
      case 'finished':
        return { kind: 'finished', status: r[1] as DeliveryStatus, woken: r.slice(2) as string[] };
      case 'not_due':
        return { kind: 'not_due', nextAttemptAt: Number(r[1]) };
      case 'blocked': {
        const delivery = parseDelivery(hashOf(r[1]), ids.orgId, ids.deliveryId);
        if (!delivery) return { kind: 'missing' };
        const envelopeBytes = Number(r[4]);
        const [orgStatus, disabledEventTypes] = orgFields(r[3]);
        return {
          kind: 'blocked',
          delivery,
          endpoint: parseEndpoint(hashOf(r[2]), this.box),
          orgSuspended: orgStatus === 'suspended',
          eventTypeDisabled: isEventTypeDisabled(parseOrgAttemptSettings(ids.orgId, disabledEventTypes, null, null, this.box).disabledEventTypes, delivery.eventType),
          envelopeBytes: envelopeBytes < 0 ? null : envelopeBytes,
          woken: r.slice(5) as string[],
        };
      }
      case 'parked':
        if (Number(r[1]) === -3) return { kind: 'parked', limit: 'ordering_key', keyLine: String(r[2]) };
        if (Number(r[1]) === -4) return { kind: 'parked', limit: 'pace', retryAt: Number(r[2]) };
        if (Number(r[1]) === 0) return { kind: 'parked', limit: 'endpoint', ahead: Number(r[2] ?? 0) };
        return { kind: 'parked', limit: REFUSALS[String(r[1]) as keyof typeof REFUSALS] ?? 'endpoint' };
      case 'claimed': {
        const delivery = parseDelivery(hashOf(r[2]), ids.orgId, ids.deliveryId);
        const endpoint = parseEndpoint(hashOf(r[3]), this.box);
        if (!delivery || !endpoint) return { kind: 'missing' };
        const [, disabledEventTypes, checkUrl, checkSecret] = orgFields(r[5]);
        const org = parseOrgAttemptSettings(ids.orgId, disabledEventTypes, checkUrl, checkSecret, this.box);
        return { kind: 'claimed', attemptNumber: Number(r[1]), delivery, endpoint, envelope: typeof r[4] === 'string' ? r[4] : null, org };
      }
      default:
        return { kind: 'missing' };
    }
  }

  /**
   * Takes a new turn under the endpoint's rate limit (`rate`: the limits in force, as
   * `effectiveLimits` gives them) for an attempt about to be sent too long after its claim's turn
   * (`isTurnStale`). Returns null when taken, else when the next turn conforms (epoch ms): the
   * caller waits until then, holding its slot, and asks again.
   */
  async takeRateTurn(ids: Pick<AttemptIds, 'orgId' | 'endpointId'>, rate: RateLimit, nowMs: number): Promise<number | null> {
    const intervalMs = rateIntervalMs(rate);
    const r = Number(await rateTurnScript.run(this.redis, [this.keys.endpointRate(ids.orgId, ids.endpointId)], [nowMs, intervalMs, rate.burst * intervalMs]));
    return r === 0 ? null : r;
  }

  /**
   * One call after the request: records the attempt's outcome, moves the delivery on, updates the
   * endpoint's failure streak and failure counts, appends the change to the org's live feed, gives
   * back the lease and names the parked deliveries to wake. Two things are left to the caller's
   * `StatsFlusher` (the sender's, stats-flusher.ts): counting the attempt in the overview's counters
   * (`StatsRepository`), and renewing the live feed's expiry (set here only when this append
   * created the feed).
   */
  async finish(input: FinishInput): Promise<FinishResult> {
    const { ids } = input;
    const k = this.keys;
    const attempt: StoredAttempt = {
      number: input.attemptNumber,
      startedAt: input.startedAt,
      durationMs: input.durationMs,
      responseStatus: input.responseStatus,
      error: input.error,
      // Left out when null: bytes per attempt matter.
      ...(input.request ? { sent: input.request } : {}),
      ...(input.response ? { response: input.response } : {}),
      ...(input.cancelReason ? { cancelReason: input.cancelReason } : {}),
      ...(input.transformationVersion !== undefined && !input.request?.transformed ? { transformationVersion: input.transformationVersion } : {}),
    };
    const r = (await finishScript.run(
      this.redis,
      [
        ...this.leaseKeys(ids),
        k.delivery(ids.orgId, ids.deliveryId),
        k.deliveryAttempts(ids.orgId, ids.deliveryId),
        k.endpoint(ids.orgId, ids.endpointId),
        k.endpointDeliveriesByStatus(ids.orgId, ids.endpointId, 'pending'),
        k.endpointDeliveriesByStatus(ids.orgId, ids.endpointId, input.nextStatus),
        k.event(ids.orgId, ids.eventId),
        k.endpointDeliveriesByStatus(ids.orgId, ids.endpointId, 'succeeded'),
        k.endpointDeliveriesByStatus(ids.orgId, ids.endpointId, 'failed'),
        k.endpointDeliveriesByStatus(ids.orgId, ids.endpointId, 'cancelled'),
        k.endpointKeyLines(ids.orgId, ids.endpointId),
        k.orgLiveFeed(ids.orgId),
        k.endpointDeliveriesByStatus(ids.orgId, ids.endpointId, 'in_flight'),
      ],
      [
        ids.deliveryId,
        input.nowMs,
        input.attemptNumber,
        input.nextStatus,
        encodeAttempt(attempt),
        input.responseStatus ?? '',
        input.error ?? '',
        input.durationMs,
        input.nextAttemptAt ?? '',
        input.health,
        input.concurrency.perEndpoint,
        input.concurrency.perOrg,
        finishedExpiresAt(input.retention, input.nowMs),
        isEndpointFailure(input.error) ? '1' : '0',
        input.pace ? (input.pace.next ? JSON.stringify(input.pace.next) : '-') : '',
        input.pace?.claimedUnder ? JSON.stringify(input.pace.claimedUnder) : '',
        input.pace?.slowDown ? '1' : '',
        input.cancelReason ?? '',
        ids.endpointId,
        ids.eventId,
        this.liveFeed.maxEntries,
        this.liveFeed.ttlS,
      ],
    )) as [string, number, string, number, ...string[]];
    // `{lastPerEndpoint: N}`: the oldest finished deliveries beyond N go right after the finish that
    // passed N, a bounded few per finish (their keys must be in KEYS, so they are read first).
    const finishedCount = Number(r[3] ?? 0);
    let trimmed = 0;
    if ('lastPerEndpoint' in input.retention && finishedCount > input.retention.lastPerEndpoint) {
      // The attempt is recorded whatever happens here: a trim that fails is done by the next finish.
      trimmed = await this.deliveries.trimOldestFinished(ids.orgId, ids.endpointId, input.retention.lastPerEndpoint, finishedCount - input.retention.lastPerEndpoint, input.nowMs).catch(() => 0);
    }
    return {
      kind: r[0] === 'ok' ? 'ok' : 'stale',
      trimmed,
      consecutiveFailures: Number(r[1] ?? 0),
      failureStreakStartedAt: r[2] ? Number(r[2]) : null,
      ...(r[4] ? { paceNow: r[4] === '-' ? null : parsePace(String(r[4])) } : {}),
      woken: r.slice(5) as string[],
    };
  }

  /**
   * Ends (`cancelled`, `failed`) or holds a delivery without an attempt, with a reason code, as
   * `planBeforeAttempt` decided, with the endpoint policy's `retention` (a deleted endpoint's:
   * `{days: 30}`). Finished deliveries are left untouched. Returns the status after and the
   * deliveries to wake (the next of its ordering key's line, when it ended), or null when the
   * delivery is missing.
   */
  async settle(ids: AttemptIds, outcome: 'cancelled' | 'failed' | 'held', reason: string, nowMs: number, retention: Retention): Promise<{ status: DeliveryStatus; woken: string[] } | null> {
    const k = this.keys;
    const target = outcome === 'held' ? 'pending' : outcome;
    const r = (await settleScript.run(
      this.redis,
      [
        k.delivery(ids.orgId, ids.deliveryId),
        k.endpointDeliveriesByStatus(ids.orgId, ids.endpointId, 'pending'),
        k.endpointDeliveriesByStatus(ids.orgId, ids.endpointId, 'in_flight'),
        k.endpointDeliveriesByStatus(ids.orgId, ids.endpointId, target),
        k.endpointHeld(ids.orgId, ids.endpointId),
        k.deliveryAttempts(ids.orgId, ids.deliveryId),
        k.event(ids.orgId, ids.eventId),
        k.endpointKeyLines(ids.orgId, ids.endpointId),
        k.orgLiveFeed(ids.orgId),
      ],
      [nowMs, outcome, reason, finishedExpiresAt(retention, nowMs), ids.deliveryId, ids.endpointId, ids.eventId, this.liveFeed.maxEntries, this.liveFeed.ttlS],
    )) as [string, string?, ...string[]];
    if (r[0] === 'missing') return null;
    return { status: r[1] as DeliveryStatus, woken: r.slice(2) as string[] };
  }
}

/**
 * The soak's invariants, as a pure function of what a run recorded ({@link SoakRecords}): no I/O,
 * no clock, so `test/soak/check.test.ts` feeds it hand-made violating records. Every violation
 * names its delivery id (or, for a per-endpoint limit, the deliveries in flight at the peak).
 */
import { checkPacing, coveredMs, pauseSpans, type PacingMetrics } from './check-pacing.js';
import { CLIENT_CLOSE_TOLERANCE_MS, crossDeliveryOverlaps, effectiveEnd, groupBy, peakInFlight, peakInWindow, RATE_SLACK, RATE_WINDOW_MS, SCHEDULE_TOLERANCE_MS, SOAK_MAX_RESUME_MS, VIOLATION_KINDS, type Violation, type ViolationKind } from './check-support.js';
import type { AttemptLog, DeliveryLog, EndpointSpec, FaultKind, FaultRecord, ReceiverRecord, SoakRecords } from './records.js';

export { CLIENT_CLOSE_TOLERANCE_MS, RATE_SLACK, RATE_WINDOW_MS, SCHEDULE_TOLERANCE_MS, SOAK_MAX_RESUME_MS, VIOLATION_KINDS, type Violation, type ViolationKind };
export { ADAPTIVE_MAX_FIRST_ATTEMPT_DELAY_MS, PACE_ASSUMED_PER_SECOND_PER_SLOT, PACE_MIN_PER_SECOND, PAUSE_EDGE_MS, PAUSE_GRACE_MS, type PacingMetrics } from './check-pacing.js';

/**
 * Faults that leave an attempt's outcome unrecorded: a repeated 2xx (or a reused attempt number)
 * spanning one is excused. A SIGKILLed sender dies mid-attempt; a Redis restart, failover or killed
 * connection makes the sender's finish fail, and the same attempt runs again (Postern's own faults
 * spend no attempt). Counted apart in the metrics; drop kinds here to make them violations.
 */
export const DUPLICATE_EXCUSING_FAULTS: readonly FaultKind[] = ['sender-sigkill', 'redis-restart', 'redis-primary-stop', 'redis-failover', 'redis-client-kill'];
/** A request the SIGKILLed sender had in flight is seen closed by the client within this of the kill. */
export const KILLED_REQUEST_CLOSE_MS = 1000;
/** How many ids each violation kind lists in the summary. */
export const IDS_PER_KIND = 20;

/** How long an endpoint waited for its next request after a sender's SIGKILL. */
export interface ResumeMeasure {
  faultAtMs: number;
  sender: string;
  endpointKey: string;
  /** First arrival after the kill minus the kill, less the Retry-After pauses the receiver asked for in between; null when none came. */
  resumeMs: number | null;
  /** Whether the endpoint had deliveries due then (only those count against {@link SOAK_MAX_RESUME_MS}). */
  hadWaitingDeliveries: boolean;
}

/** Measurements beside the violations. */
export interface CheckMetrics extends PacingMetrics {
  deliveries: number;
  /** Redeliveries the soak made (each also counted in `deliveries` once the log returned it). */
  redeliveries: number;
  attempts: number;
  requests: number;
  acceptedEvents: number;
  /** Peak requests in flight at each endpoint's receiver, and the limit. */
  endpointPeaks: Record<string, { peak: number; limit: number }>;
  orgPeaks: Record<string, { peak: number; limit: number }>;
  /** Rate-limited endpoints: most arrivals (receiver) and starts (delivery log) in any 1-s window, and perSecond + burst. */
  ratePeaks: Record<string, { arrivals: number; starts: number; limit: number }>;
  /**
   * 2xx answered twice for one event at one endpoint; `excusedBy`: how many each fault kind
   * excused, and `unseen` how many followed a 2xx the sender never got (its attempt timed out).
   */
  duplicates: { total: number; excused: number; unexcused: number; excusedBy: Partial<Record<FaultKind | 'unseen', number>> };
  /** Requests with an attempt number seen before for the same delivery (any answer). */
  repeatedAttemptNumbers: number;
  resume: ResumeMeasure[];
  /** Longest resume among endpoints that had waiting deliveries, ms (`never`: one got no request again; null: none measured). */
  maxResumeMs: number | 'never' | null;
  /**
   * Deliveries whose request a SIGKILLed sender had in flight: how long after the kill the next
   * request of each came (null: none). Reported, not a violation (known bug 2: about a minute).
   */
  stalledDeliveries: { faultAtMs: number; deliveryId: string; endpointKey: string; resumeMs: number | null }[];
  statuses: Record<string, number>;
}

/** What {@link checkSoak} returns. */
export interface CheckResult {
  violations: Violation[];
  /** Per kind: how many, and up to {@link IDS_PER_KIND} distinct ids. */
  byKind: Partial<Record<ViolationKind, { count: number; ids: string[] }>>;
  metrics: CheckMetrics;
}

/**
 * The shortest wait the policy can schedule after failed attempt `failedAttempt` (1-based), ms:
 * a fixed wait less its jitter, a `random-up-to` floor, 0 for full jitter. A `Retry-After` honoured
 * or an adaptive pause only lengthen it.
 */
export function minimumWaitMs(endpoint: Pick<EndpointSpec, 'schedule' | 'jitterRatio'>, failedAttempt: number): number {
  const s = endpoint.schedule;
  if (s.kind === 'fixed') return Math.floor((s.waitsMs[failedAttempt - 1] ?? s.waitsMs[s.waitsMs.length - 1] ?? 0) * (1 - endpoint.jitterRatio));
  if (s.kind === 'random-up-to') return s.floorMs;
  return 0;
}

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);
const is2xx = (a: ReceiverRecord['answer']) => typeof a === 'number' && a >= 200 && a < 300;

/**
 * A fault's effect lasts past its start: a stopped or failed-over primary refuses writes until its
 * replica serves (the cluster's node timeout and a little), a restarted Redis until it has loaded.
 */
export const FAULT_EFFECT_MS = 5000;

/**
 * The fault (one of {@link DUPLICATE_EXCUSING_FAULTS}) whose effect overlaps `fromMs`..`toMs`, if
 * any: it began in that span, or began before and lasted into it (until it was restored, and
 * {@link FAULT_EFFECT_MS} more).
 */
function excusedByFault(faults: readonly FaultRecord[], fromMs: number, toMs: number): FaultRecord | undefined {
  return faults.find((f) => DUPLICATE_EXCUSING_FAULTS.includes(f.kind) && f.atMs <= toMs && (f.restoredAtMs ?? f.atMs) + FAULT_EFFECT_MS >= fromMs - SCHEDULE_TOLERANCE_MS);
}

/** The earliest time `attempt` may start: acceptance for the first, else the previous finish plus the shortest wait. */
function earliestStart(endpoint: EndpointSpec, attempts: readonly AttemptLog[], index: number, acceptedAtMs: number | undefined): number | null {
  const attempt = attempts[index] as AttemptLog;
  if (index === 0) return attempt.number === 1 ? (acceptedAtMs ?? null) : null;
  const prev = attempts[index - 1] as AttemptLog;
  return prev.finishedAtMs + minimumWaitMs(endpoint, prev.number);
}

/**
 * Checks every invariant of the soak over `records` (see the brief in `scripts/soak.ts`): the
 * retry schedule, attempt numbers, per-delivery, per-endpoint, per-org and per-key concurrency,
 * rate limits, Retry-After pauses, ordering sequences, terminal states with reasons, duplicates,
 * one request at a time per event and endpoint across its redeliveries, and resume times after
 * SIGKILLs. Pure.
 */
export function checkSoak(given: SoakRecords): CheckResult {
  const records = { ...given, receiver: withAbandonedTimes(given) };
  const violations: Violation[] = [];
  const add = (kind: ViolationKind, id: string, detail: string) => violations.push({ kind, id, detail });
  const endpoints = new Map(records.endpoints.map((e) => [e.key, e]));
  // The earliest a first attempt may start: when its event was posted.
  const acceptedAt = new Map<string, number>();
  for (const ev of records.accepted) for (const id of ev.deliveryIds) acceptedAt.set(id, ev.postedAtMs);
  // A redelivery's first attempt may start once it was asked for.
  const redelivered = new Map((records.redeliveries ?? []).map((r) => [r.deliveryId, r]));
  for (const r of redelivered.values()) acceptedAt.set(r.deliveryId, r.requestedAtMs);
  const deliveries = [...records.deliveries.values()];
  const byEndpoint = groupBy(records.receiver, (r) => r.endpointKey);

  // 1. The schedule: no attempt before its time (delivery log, then the receiver's view).
  let attemptCount = 0;
  for (const d of deliveries) {
    const endpoint = endpoints.get(d.endpointKey);
    if (!endpoint) continue;
    const attempts = [...d.attempts].sort((a, b) => a.number - b.number || a.startedAtMs - b.startedAtMs);
    attemptCount += attempts.length;
    for (let i = 0; i < attempts.length; i++) {
      const a = attempts[i] as AttemptLog;
      if (i > 0 && (attempts[i - 1] as AttemptLog).number === a.number) {
        add('attempt-reused', d.id, `the delivery log holds attempt ${a.number} twice`);
        continue;
      }
      const earliest = earliestStart(endpoint, attempts, i, acceptedAt.get(d.id));
      if (earliest !== null && a.startedAtMs < earliest - SCHEDULE_TOLERANCE_MS) {
        add('early-attempt', d.id, `attempt ${a.number} started ${earliest - a.startedAtMs} ms before its earliest time (previous finish + ${i > 0 ? minimumWaitMs(endpoint, (attempts[i - 1] as AttemptLog).number) : 0} ms)`);
      }
    }
  }
  const receiverByDelivery = groupBy(records.receiver, (r) => r.deliveryId);
  for (const [deliveryId, requests] of receiverByDelivery) {
    const endpoint = endpoints.get(requests[0]!.endpointKey);
    if (!endpoint) continue;
    const sorted = [...requests].sort((a, b) => a.arrivalMs - b.arrivalMs);
    for (let i = 1; i < sorted.length; i++) {
      const prev = sorted[i - 1] as ReceiverRecord;
      const cur = sorted[i] as ReceiverRecord;
      // 2. No two requests of one delivery at once.
      if (cur.arrivalMs < effectiveEnd(prev)) add('delivery-overlap', deliveryId, `attempt ${cur.attempt} arrived ${effectiveEnd(prev) - cur.arrivalMs} ms before attempt ${prev.attempt} was answered`);
      if (cur.attempt > prev.attempt) {
        const earliest = prev.answerMs + minimumWaitMs(endpoint, prev.attempt);
        if (cur.arrivalMs < earliest - SCHEDULE_TOLERANCE_MS && !records.deliveries.has(deliveryId)) {
          add('early-attempt', deliveryId, `attempt ${cur.attempt} arrived ${earliest - cur.arrivalMs} ms before previous answer + ${minimumWaitMs(endpoint, prev.attempt)} ms`);
        }
      }
    }
  }

  // 2b. One request at a time per event and endpoint, across the event's deliveries there (an
  // original and its redeliveries): a redelivery waits for any attempt of the event in flight.
  for (const requests of byEndpoint.values()) {
    for (const [webhookId, same] of groupBy(requests, (r) => r.webhookId)) {
      if (new Set(same.map((r) => r.deliveryId)).size < 2) continue;
      for (const { request: r, holder } of crossDeliveryOverlaps([...same].sort((a, b) => a.arrivalMs - b.arrivalMs))) {
        add('event-overlap', r.deliveryId, `event ${webhookId}: attempt ${r.attempt} arrived ${effectiveEnd(holder) - r.arrivalMs} ms before attempt ${holder.attempt} of ${holder.deliveryId} was answered`);
      }
    }
  }

  // 3. Attempt numbers: one outcome each; duplicates (a 2xx twice for one event at one endpoint).
  let repeatedAttemptNumbers = 0;
  for (const [deliveryId, requests] of receiverByDelivery) {
    for (const [attempt, same] of groupBy(requests, (r) => r.attempt)) {
      if (same.length < 2) continue;
      repeatedAttemptNumbers += same.length - 1;
      const sorted = [...same].sort((a, b) => a.arrivalMs - b.arrivalMs);
      const answers = new Set(sorted.map((r) => String(r.answer)));
      if (answers.size > 1 && !excusedByFault(records.faults, sorted[0]!.arrivalMs, sorted[sorted.length - 1]!.arrivalMs)) {
        add('attempt-reused', deliveryId, `attempt ${attempt} sent ${same.length} times with answers ${[...answers].join(', ')}, no sender or Redis fault in between`);
      }
    }
  }
  const duplicates: CheckMetrics['duplicates'] = { total: 0, excused: 0, unexcused: 0, excusedBy: {} };
  for (const requests of byEndpoint.values()) {
    // A redelivery is asked to send its event again: its 2xx is counted apart from the original's.
    for (const same of groupBy(requests.filter((r) => is2xx(r.answer)), (r) => (redelivered.has(r.deliveryId) ? `${r.webhookId} ${r.deliveryId}` : r.webhookId)).values()) {
      if (same.length < 2) continue;
      const webhookId = same[0]!.webhookId;
      const sorted = [...same].sort((a, b) => a.arrivalMs - b.arrivalMs);
      for (let i = 1; i < sorted.length; i++) {
        duplicates.total++;
        const prev = sorted[i - 1] as ReceiverRecord;
        // The sender never saw the first 2xx when that attempt's log says otherwise (it timed out,
        // or the connection failed, before the answer reached it): sending again is the promise.
        const unseen = records.deliveries.get(prev.deliveryId)?.attempts.some((a) => a.number === prev.attempt && a.responseStatus !== null && a.responseStatus >= 200 && a.responseStatus < 300) === false && prev.attempt !== (sorted[i] as ReceiverRecord).attempt;
        const excuse = unseen ? undefined : excusedByFault(records.faults, prev.arrivalMs, (sorted[i] as ReceiverRecord).arrivalMs);
        if (unseen) {
          duplicates.excused++;
          duplicates.excusedBy.unseen = (duplicates.excusedBy.unseen ?? 0) + 1;
        } else if (excuse) {
          duplicates.excused++;
          duplicates.excusedBy[excuse.kind] = (duplicates.excusedBy[excuse.kind] ?? 0) + 1;
        } else {
          duplicates.unexcused++;
          add('duplicate', sorted[i]!.deliveryId, `event ${webhookId} answered 2xx ${sorted.length} times (attempts ${sorted.map((r) => r.attempt).join(', ')}) with no sender or Redis fault in between`);
        }
      }
    }
  }

  // 4. Concurrency at the receiver, per endpoint and per org.
  const endpointPeaks: CheckMetrics['endpointPeaks'] = {};
  for (const [key, requests] of byEndpoint) {
    const endpoint = endpoints.get(key);
    if (!endpoint) continue;
    const peak = peakInFlight(requests);
    endpointPeaks[key] = { peak: peak.peak, limit: endpoint.perEndpoint };
    if (peak.peak > endpoint.perEndpoint) {
      add('endpoint-concurrency', `endpoint:${key}`, `${peak.peak} requests in flight at once (perEndpoint ${endpoint.perEndpoint}) at ${new Date(peak.at).toISOString()}: ${peak.ids.join(', ')}`);
    }
  }
  const orgPeaks: CheckMetrics['orgPeaks'] = {};
  for (const [orgKey, specs] of groupBy(records.endpoints, (e) => e.orgKey)) {
    const keys = new Set(specs.map((e) => e.key));
    const limit = Math.min(...specs.map((e) => e.perOrg));
    const peak = peakInFlight(records.receiver.filter((r) => keys.has(r.endpointKey)));
    orgPeaks[orgKey] = { peak: peak.peak, limit };
    if (peak.peak > limit) add('org-concurrency', `org:${orgKey}`, `${peak.peak} requests in flight at once across the org (perOrg ${limit}) at ${new Date(peak.at).toISOString()}: ${peak.ids.join(', ')}`);
  }

  // 5. Rate limits: arrivals at the receiver and starts in the delivery log, per 1-s window.
  const ratePeaks: CheckMetrics['ratePeaks'] = {};
  for (const endpoint of records.endpoints) {
    if (!endpoint.rateLimit) continue;
    const limit = Math.ceil(endpoint.rateLimit.perSecond) + endpoint.rateLimit.burst;
    const reqs = [...(byEndpoint.get(endpoint.key) ?? [])].sort((a, b) => a.arrivalMs - b.arrivalMs);
    const arrivals = peakInWindow(reqs.map((r) => r.arrivalMs));
    const starts = deliveries.filter((d) => d.endpointKey === endpoint.key).flatMap((d) => d.attempts.map((a) => ({ t: a.startedAtMs, id: d.id }))).sort((a, b) => a.t - b.t);
    const startPeak = peakInWindow(starts.map((s) => s.t));
    ratePeaks[endpoint.key] = { arrivals: arrivals.count, starts: startPeak.count, limit };
    const stalled = (records.receiverStalls ?? []).some(([a, b]) => b >= reqs[arrivals.from]!.arrivalMs - RATE_WINDOW_MS && a <= reqs[arrivals.from]!.arrivalMs + RATE_WINDOW_MS);
    if (arrivals.count > limit + RATE_SLACK && !stalled) {
      const ids = reqs.slice(arrivals.from, arrivals.to).map((r) => r.deliveryId);
      add('rate-limit-arrivals', `endpoint:${endpoint.key}`, `${arrivals.count} arrivals in 1 s from ${new Date(reqs[arrivals.from]!.arrivalMs).toISOString()} (perSecond ${endpoint.rateLimit.perSecond} + burst ${endpoint.rateLimit.burst} + slack ${RATE_SLACK}): ${ids.join(', ')}`);
    }
    if (startPeak.count > limit) {
      const ids = starts.slice(startPeak.from, startPeak.to).map((s) => s.id);
      add('rate-limit-starts', `endpoint:${endpoint.key}`, `${startPeak.count} attempt starts in 1 s from ${new Date(starts[startPeak.from]!.t).toISOString()} (perSecond ${endpoint.rateLimit.perSecond} + burst ${endpoint.rateLimit.burst}): ${ids.join(', ')}`);
    }
  }

  // 6. Ordering keys: one delivery of a key in flight at a time; sequences rise among successes.
  // A redelivery goes outside its key's line, with the key and sequence of the delivery it was made from.
  for (const endpoint of records.endpoints) {
    if (endpoint.ordering !== 'per-key') continue;
    const requests = byEndpoint.get(endpoint.key) ?? [];
    const sentAs = new Map<string, ReceiverRecord>();
    for (const r of requests) if (!sentAs.has(r.deliveryId)) sentAs.set(r.deliveryId, r);
    for (const r of requests) {
      const from = sentAs.get(redelivered.get(r.deliveryId)?.redeliveredFromId ?? '');
      if (from && (from.orderingKey !== r.orderingKey || from.sequence !== r.sequence)) {
        add('ordering-sequence', r.deliveryId, `redelivery of ${from.deliveryId} sent with key ${r.orderingKey} and sequence ${r.sequence}; that delivery was sent with ${from.orderingKey} and ${from.sequence}`);
      }
    }
    const keyed = requests.filter((r) => r.orderingKey !== null && !redelivered.has(r.deliveryId));
    for (const [orderingKey, requests] of groupBy(keyed, (r) => r.orderingKey as string)) {
      const sorted = [...requests].sort((a, b) => a.arrivalMs - b.arrivalMs);
      for (const { request: r, holder } of crossDeliveryOverlaps(sorted)) {
        add('ordering-overlap', r.deliveryId, `key ${orderingKey}: arrived while ${holder.deliveryId} (sequence ${holder.sequence}) was in flight`);
      }
      const firstSuccess = new Map<string, ReceiverRecord>();
      for (const r of sorted) if (is2xx(r.answer) && !firstSuccess.has(r.deliveryId)) firstSuccess.set(r.deliveryId, r);
      let prev: ReceiverRecord | null = null;
      for (const r of firstSuccess.values()) {
        if (prev && (r.sequence === null || prev.sequence === null || r.sequence <= prev.sequence)) {
          add('ordering-sequence', r.deliveryId, `key ${orderingKey}: sequence ${r.sequence} succeeded after sequence ${prev.sequence} (${prev.deliveryId})`);
        }
        prev = r;
      }
    }
  }

  // 7. Adaptive pacing: Retry-After pauses kept, no stall behind a collapsed pace, no cut too many.
  const pacing = checkPacing(records, deliveries, byEndpoint, acceptedAt, add);


  // 8. Every accepted event and every redelivery: a delivery per endpoint, terminal, with a reason
  // when it did not succeed.
  const statuses: Record<string, number> = {};
  const ended = (id: string, missing: string) => {
    const d: DeliveryLog | undefined = records.deliveries.get(id);
    if (!d) return add('lost', id, missing);
    statuses[d.status] = (statuses[d.status] ?? 0) + 1;
    if (!TERMINAL.has(d.status)) add('not-terminal', id, `still ${d.status} after ${d.attempts.length} attempt(s) at the drain deadline`);
    else if (d.status !== 'succeeded' && !d.lastError && !d.cancelReason) add('missing-reason', id, `${d.status} with neither lastError nor cancelReason`);
  };
  for (const ev of records.accepted) {
    const endpoint = endpoints.get(ev.endpointKey);
    if (ev.deliveryIds.length === 0 && endpoint && !endpoint.breaker) {
      add('no-delivery', `event:${ev.eventId}`, `accepted for ${ev.endpointKey} with no delivery`);
    }
    for (const id of ev.deliveryIds) ended(id, `event ${ev.eventId} got 202 but the delivery log has no delivery ${id}`);
  }
  for (const r of redelivered.values()) ended(r.deliveryId, `the redelivery of ${r.redeliveredFromId} got 202 but the delivery log has no delivery ${r.deliveryId}`);

  // 9. After each SIGKILL: how soon each endpoint with waiting deliveries gets a request again.
  const resume: ResumeMeasure[] = [];
  const stalledDeliveries: CheckMetrics['stalledDeliveries'] = [];
  for (const fault of records.faults.filter((f) => f.kind === 'sender-sigkill')) {
    for (const endpoint of records.endpoints) {
      const k = fault.atMs;
      const hadDue = deliveries.some((d) => {
        if (d.endpointKey !== endpoint.key) return false;
        const attempts = [...d.attempts].sort((a, b) => a.number - b.number);
        return attempts.some((a, i) => {
          if (a.startedAtMs <= k) return false;
          const earliest = earliestStart(endpoint, attempts, i, acceptedAt.get(d.id));
          return earliest !== null && earliest <= k;
        });
      });
      // A request the dying sender had in flight: closed by the client right at the kill, and run again later.
      const cutOff = (byEndpoint.get(endpoint.key) ?? []).filter((r) => r.answer === 'closed-by-client' && r.arrivalMs < k && r.answerMs >= k - SCHEDULE_TOLERANCE_MS && r.answerMs <= k + KILLED_REQUEST_CLOSE_MS);
      for (const r of cutOff) {
        const again = (receiverByDelivery.get(r.deliveryId) ?? []).reduce<number | null>((min, x) => (x.arrivalMs > k && (min === null || x.arrivalMs < min) ? x.arrivalMs : min), null);
        stalledDeliveries.push({ faultAtMs: k, deliveryId: r.deliveryId, endpointKey: endpoint.key, resumeMs: again === null ? null : again - k });
      }
      const hadWaiting = hadDue || cutOff.length > 0;
      const next = (byEndpoint.get(endpoint.key) ?? []).reduce<number | null>((min, r) => (r.arrivalMs > k && (min === null || r.arrivalMs < min) ? r.arrivalMs : min), null);
      // Time the receiver itself asked for (Retry-After pauses) is not the sender's to make up.
      const paused = next === null ? 0 : coveredMs(pauseSpans(byEndpoint.get(endpoint.key) ?? []), k, next);
      const resumeMs = next === null ? null : next - k - paused;
      resume.push({ faultAtMs: k, sender: fault.target, endpointKey: endpoint.key, resumeMs, hadWaitingDeliveries: hadWaiting });
      if (hadWaiting && (resumeMs === null || resumeMs > SOAK_MAX_RESUME_MS)) {
        add('slow-resume', `endpoint:${endpoint.key}`, `no request for ${resumeMs === null ? 'the rest of the run' : `${resumeMs} ms`} after ${fault.target} was SIGKILLed at ${new Date(k).toISOString()}, with deliveries waiting (limit ${SOAK_MAX_RESUME_MS} ms)`);
      }
    }
  }
  const counted = resume.filter((r) => r.hadWaitingDeliveries).map((r) => r.resumeMs ?? Infinity);
  const maxResumeMs = counted.length === 0 ? null : Math.max(...counted);

  const byKind: CheckResult['byKind'] = {};
  for (const v of violations) {
    const entry = (byKind[v.kind] ??= { count: 0, ids: [] });
    entry.count++;
    if (entry.ids.length < IDS_PER_KIND && !entry.ids.includes(v.id)) entry.ids.push(v.id);
  }
  return {
    violations,
    byKind,
    metrics: {
      deliveries: deliveries.length,
      redeliveries: redelivered.size,
      attempts: attemptCount,
      requests: records.receiver.length,
      acceptedEvents: records.accepted.length,
      endpointPeaks,
      orgPeaks,
      ratePeaks,
      duplicates,
      repeatedAttemptNumbers,
      resume,
      maxResumeMs: maxResumeMs === Infinity ? 'never' : maxResumeMs,
      stalledDeliveries,
      ...pacing,
      statuses,
    },
  };
}

/**
 * The receiver's records, each request the sender closed (`closed-by-client`) with when the sender
 * gave it up: the end of that attempt in the delivery log, the first one of its number that ended
 * after the request arrived.
 */
function withAbandonedTimes(records: SoakRecords): ReceiverRecord[] {
  return records.receiver.map((r) => {
    if (r.answer !== 'closed-by-client') return r;
    const ends = (records.deliveries.get(r.deliveryId)?.attempts ?? []).filter((a) => a.number === r.attempt && a.finishedAtMs >= r.arrivalMs).map((a) => a.finishedAtMs);
    return ends.length > 0 ? { ...r, abandonedAtMs: Math.min(...ends) } : r;
  });
}

import { checkSoak, minimumWaitMs, SCHEDULE_TOLERANCE_MS, SOAK_MAX_RESUME_MS, type ViolationKind } from '../../scripts/soak/check.js';
import type { AttemptLog, DeliveryLog, EndpointSpec, FaultRecord, ReceiverRecord, RedeliveryRecord, SoakRecords } from '../../scripts/soak/records.js';

/**
 * The soak's checker (scripts/soak/check.ts) on hand-made records: clean records give no
 * violation, and each broken promise is named with its kind and delivery id.
 */

const T0 = 1_800_000_000_000;

function endpoint(key: string, extra: Partial<EndpointSpec> = {}): EndpointSpec {
  return {
    key, id: `ep_${key}`, orgKey: 'main', maxAttempts: 3, schedule: { kind: 'fixed', waitsMs: [1000, 2000] }, jitterRatio: 0,
    perEndpoint: 4, perOrg: 100, rateLimit: null, ordering: 'none', pacing: 'none', timeoutMs: 5000, breaker: false, ...extra,
  };
}

function req(deliveryId: string, attempt: number, arrival: number, answer: ReceiverRecord['answer'], extra: Partial<ReceiverRecord> = {}): ReceiverRecord {
  return { endpointKey: 'ep', deliveryId, webhookId: `evt_${deliveryId}`, attempt, orderingKey: null, sequence: null, arrivalMs: T0 + arrival, answerMs: T0 + arrival + 10, answer, retryAfterS: null, ...extra };
}

function attempt(number: number, start: number, durationMs = 10, status: number | null = 500): AttemptLog {
  return { number, startedAtMs: T0 + start, finishedAtMs: T0 + start + durationMs, responseStatus: status, error: status === 200 ? null : `http_${status}` };
}

function delivery(id: string, attempts: AttemptLog[], status: DeliveryLog['status'] = 'succeeded', extra: Partial<DeliveryLog> = {}): DeliveryLog {
  return { id, endpointKey: 'ep', status, lastError: status === 'failed' ? 'http_500' : null, cancelReason: null, attempts, ...extra };
}

function records(parts: Partial<SoakRecords> & { deliveriesList?: DeliveryLog[] }): SoakRecords {
  const list = parts.deliveriesList ?? [];
  return {
    endpoints: parts.endpoints ?? [endpoint('ep')],
    accepted: parts.accepted ?? list.map((d) => ({ eventId: `evt_${d.id}`, endpointKey: d.endpointKey, deliveryIds: [d.id], acceptedAtMs: T0 - 5, postedAtMs: T0 - 10 })),
    deliveries: parts.deliveries ?? new Map(list.map((d) => [d.id, d])),
    receiver: parts.receiver ?? [],
    faults: parts.faults ?? [],
    paceSamples: parts.paceSamples ?? [],
    producedUntilMs: T0 + 60_000,
    ...(parts.redeliveries ? { redeliveries: parts.redeliveries } : {}),
    ...(parts.outcomeRecordedAt ? { outcomeRecordedAt: parts.outcomeRecordedAt } : {}),
  };
}

const kinds = (r: SoakRecords): ViolationKind[] => [...new Set(checkSoak(r).violations.map((v) => v.kind))].sort();
const idsOf = (r: SoakRecords, kind: ViolationKind) => checkSoak(r).violations.filter((v) => v.kind === kind).map((v) => v.id);

test('clean records: a retried delivery on schedule, a first-time success, no violation', () => {
  const r = records({
    deliveriesList: [delivery('dlv_a', [attempt(1, 0), attempt(2, 1010 + 1000)]), delivery('dlv_b', [attempt(1, 5, 10, 200)])],
    receiver: [req('dlv_a', 1, 1, 500), req('dlv_a', 2, 2011, 200), req('dlv_b', 1, 6, 200)],
  });
  expect(checkSoak(r).violations).toEqual([]);
  expect(checkSoak(r).metrics.attempts).toBe(3);
});

test('an attempt 2 a few ms after attempt 1 (known bug 1) is early-attempt, with its delivery id; within the tolerance it is not', () => {
  const early = records({ deliveriesList: [delivery('dlv_early', [attempt(1, 0), attempt(2, 15)])] });
  expect(idsOf(early, 'early-attempt')).toEqual(['dlv_early']);
  const justInside = records({ deliveriesList: [delivery('dlv_ok', [attempt(1, 0), attempt(2, 10 + 1000 - SCHEDULE_TOLERANCE_MS + 1)])] });
  expect(kinds(justInside)).toEqual([]);
});

test('jittered and random-up-to schedules: the lower bound is the wait less its jitter, or the floor', () => {
  expect(minimumWaitMs({ schedule: { kind: 'fixed', waitsMs: [2000] }, jitterRatio: 0.3 }, 1)).toBe(1400);
  expect(minimumWaitMs({ schedule: { kind: 'random-up-to', capsMs: [5000], floorMs: 1000 }, jitterRatio: 0 }, 1)).toBe(1000);
  const jittered = endpoint('ep', { schedule: { kind: 'fixed', waitsMs: [2000] }, jitterRatio: 0.3 });
  expect(kinds(records({ endpoints: [jittered], deliveriesList: [delivery('dlv_j', [attempt(1, 0), attempt(2, 10 + 1450)])] }))).toEqual([]);
  expect(idsOf(records({ endpoints: [jittered], deliveriesList: [delivery('dlv_j', [attempt(1, 0), attempt(2, 10 + 1200)])] }), 'early-attempt')).toEqual(['dlv_j']);
});

test('one attempt number with two outcomes is attempt-reused unless a sender was SIGKILLed in between', () => {
  const receiver = [req('dlv_r', 1, 0, 500), req('dlv_r', 1, 3000, 200)];
  expect(idsOf(records({ deliveriesList: [delivery('dlv_r', [attempt(1, 3000, 10, 200)])], receiver }), 'attempt-reused')).toEqual(['dlv_r']);
  const faults: FaultRecord[] = [{ kind: 'sender-sigkill', target: 'sender-1', atMs: T0 + 5, restoredAtMs: T0 + 1000 }];
  expect(kinds(records({ deliveriesList: [delivery('dlv_r', [attempt(1, 3000, 10, 200)])], receiver, faults }))).not.toContain('attempt-reused');
});

test('two requests of one delivery at once: delivery-overlap', () => {
  const receiver = [req('dlv_o', 1, 0, 500, { answerMs: T0 + 3000 }), req('dlv_o', 2, 1500, 200)];
  expect(idsOf(records({ deliveriesList: [delivery('dlv_o', [attempt(1, 0, 3000), attempt(2, 5000)])], receiver }), 'delivery-overlap')).toEqual(['dlv_o']);
});

test('more in flight than perEndpoint, or across the org than perOrg, names the deliveries at the peak', () => {
  const ep = endpoint('ep', { perEndpoint: 2, perOrg: 2 });
  const receiver = ['d1', 'd2', 'd3'].map((id, i) => req(id, 1, i, 200, { answerMs: T0 + 100 }));
  const result = checkSoak(records({ endpoints: [ep], receiver }));
  const v = result.violations.find((x) => x.kind === 'endpoint-concurrency')!;
  expect(v.id).toBe('endpoint:ep');
  expect(v.detail).toContain('d1, d2, d3');
  expect(result.violations.map((x) => x.kind)).toContain('org-concurrency');
  expect(result.metrics.endpointPeaks.ep).toEqual({ peak: 3, limit: 2 });
  // Back to back (one ends as the next arrives) is not an overlap.
  const serial = ['d1', 'd2', 'd3'].map((id, i) => req(id, 1, i * 10, 200, { answerMs: T0 + i * 10 + 10 }));
  expect(kinds(records({ endpoints: [endpoint('ep', { perEndpoint: 1, perOrg: 1 })], receiver: serial }))).toEqual([]);
});

test('at {perSecond: 20, burst: 5}: 27 arrivals in one second is rate-limit-arrivals, 26 (one over, the receiver\'s slack) is not', () => {
  const ep = endpoint('ep', { rateLimit: { perSecond: 20, burst: 5 }, perEndpoint: 100 });
  const arrivals = (n: number) => Array.from({ length: n }, (_, i) => req(`d${i}`, 1, i * 36, 200, { answerMs: T0 + i * 36 + 1 }));
  const over = checkSoak(records({ endpoints: [ep], receiver: arrivals(27) }));
  expect(over.violations.map((v) => v.kind)).toEqual(['rate-limit-arrivals']);
  expect(over.metrics.ratePeaks.ep).toEqual({ arrivals: 27, starts: 0, limit: 25 });
  expect(kinds(records({ endpoints: [ep], receiver: arrivals(26) }))).toEqual([]);
});

test('per ordering key: two deliveries of a key at once, and a sequence going backwards among successes', () => {
  const ep = endpoint('ep', { ordering: 'per-key' });
  const receiver = [
    req('dlv_1', 1, 0, 200, { orderingKey: 'k', sequence: 1, answerMs: T0 + 500 }),
    req('dlv_2', 1, 100, 200, { orderingKey: 'k', sequence: 3 }),
    req('dlv_3', 1, 1000, 200, { orderingKey: 'k', sequence: 2 }),
  ];
  const r = records({ endpoints: [ep], receiver });
  expect(idsOf(r, 'ordering-overlap')).toEqual(['dlv_2']);
  expect(idsOf(r, 'ordering-sequence')).toEqual(['dlv_3']);
});

test('an accepted event with no delivery in the log is lost; pending at the end is not-terminal; failed without a reason is missing-reason', () => {
  const r = records({
    accepted: [
      { eventId: 'evt_1', endpointKey: 'ep', deliveryIds: ['dlv_gone'], acceptedAtMs: T0, postedAtMs: T0 },
      { eventId: 'evt_2', endpointKey: 'ep', deliveryIds: ['dlv_stuck'], acceptedAtMs: T0, postedAtMs: T0 },
      { eventId: 'evt_3', endpointKey: 'ep', deliveryIds: ['dlv_mute'], acceptedAtMs: T0, postedAtMs: T0 },
      { eventId: 'evt_4', endpointKey: 'ep', deliveryIds: [], acceptedAtMs: T0, postedAtMs: T0 },
    ],
    deliveries: new Map([
      ['dlv_stuck', delivery('dlv_stuck', [attempt(1, 0)], 'pending')],
      ['dlv_mute', delivery('dlv_mute', [attempt(1, 0)], 'failed', { lastError: null })],
    ]),
  });
  expect(idsOf(r, 'lost')).toEqual(['dlv_gone']);
  expect(idsOf(r, 'not-terminal')).toEqual(['dlv_stuck']);
  expect(idsOf(r, 'missing-reason')).toEqual(['dlv_mute']);
  expect(idsOf(r, 'no-delivery')).toEqual(['event:evt_4']);
});

/** A redelivery of `from` (same event) as the soak records it, asked for at `at`. */
function redelivery(deliveryId: string, from: string, at: number): RedeliveryRecord {
  return { deliveryId, redeliveredFromId: from, eventId: `evt_${from}`, endpointKey: 'ep', requestedAtMs: T0 + at };
}

test('a redelivery: its 2xx after the original\'s is no duplicate, and it waits for the event\'s request in flight or it is event-overlap', () => {
  const original = delivery('dlv_o', [attempt(1, 0, 500, 500), attempt(2, 1500, 10, 200)]);
  const again = delivery('dlv_r', [attempt(1, 200, 10, 200)]);
  const clean = records({
    deliveriesList: [original, again],
    accepted: [{ eventId: 'evt_dlv_o', endpointKey: 'ep', deliveryIds: ['dlv_o'], acceptedAtMs: T0 - 5, postedAtMs: T0 - 10 }],
    redeliveries: [redelivery('dlv_r', 'dlv_o', 100)],
    // The redelivery's request comes after the original's attempt 1 was answered, before its attempt 2.
    receiver: [req('dlv_o', 1, 0, 500, { answerMs: T0 + 500 }), req('dlv_r', 1, 600, 200, { webhookId: 'evt_dlv_o' }), req('dlv_o', 2, 1500, 200)],
  });
  expect(checkSoak(clean).violations).toEqual([]);
  expect(checkSoak(clean).metrics.redeliveries).toBe(1);
  // Sent while attempt 1 of the original was still open at the receiver.
  const overlapping = records({ ...clean, deliveries: clean.deliveries, receiver: [req('dlv_o', 1, 0, 500, { answerMs: T0 + 500 }), req('dlv_r', 1, 300, 200, { webhookId: 'evt_dlv_o' }), req('dlv_o', 2, 1500, 200)] });
  expect(idsOf(overlapping, 'event-overlap')).toEqual(['dlv_r']);
  // The same event answered 2xx twice by the original itself is still a duplicate.
  const twice = records({ ...clean, deliveries: clean.deliveries, receiver: [...clean.receiver, req('dlv_o', 3, 40_000, 200)] });
  expect(idsOf(twice, 'duplicate')).toEqual(['dlv_o']);
  // A redelivery's attempt before it was asked for is early.
  const early = records({ ...clean, redeliveries: [redelivery('dlv_r', 'dlv_o', 400)] });
  expect(idsOf(early, 'early-attempt')).toEqual(['dlv_r']);
});

test('a redelivery the log lacks is lost; one still pending at the end is not-terminal', () => {
  const original = delivery('dlv_o', [attempt(1, 0, 10, 200)]);
  const r = records({
    deliveries: new Map([['dlv_o', original], ['dlv_stuck', delivery('dlv_stuck', [], 'pending')]]),
    accepted: [{ eventId: 'evt_dlv_o', endpointKey: 'ep', deliveryIds: ['dlv_o'], acceptedAtMs: T0 - 5, postedAtMs: T0 - 10 }],
    redeliveries: [redelivery('dlv_gone', 'dlv_o', 100), redelivery('dlv_stuck', 'dlv_o', 200)],
  });
  expect(idsOf(r, 'lost')).toEqual(['dlv_gone']);
  expect(idsOf(r, 'not-terminal')).toEqual(['dlv_stuck']);
});

test('per ordering key: a redelivery goes outside the line with the key and sequence of the delivery it was made from', () => {
  const ep = endpoint('ep', { ordering: 'per-key' });
  const line = [
    req('dlv_1', 1, 0, 200, { orderingKey: 'k', sequence: 1 }),
    req('dlv_2', 1, 100, 200, { orderingKey: 'k', sequence: 2, answerMs: T0 + 600 }),
  ];
  // The redelivery of dlv_1 is sent while dlv_2 holds the key, and succeeds after it: neither breaks the line.
  const outside = req('dlv_r', 1, 300, 200, { orderingKey: 'k', sequence: 1, webhookId: 'evt_dlv_1', answerMs: T0 + 700 });
  const logged = { accepted: [], deliveries: new Map([['dlv_r', delivery('dlv_r', [attempt(1, 300, 400, 200)])]]), redeliveries: [redelivery('dlv_r', 'dlv_1', 250)] };
  const r = records({ endpoints: [ep], receiver: [...line, outside], ...logged });
  expect(kinds(r)).toEqual([]);
  const renumbered = records({ endpoints: [ep], receiver: [...line, { ...outside, sequence: 3 }], ...logged });
  expect(idsOf(renumbered, 'ordering-sequence')).toEqual(['dlv_r']);
});

test('an event answered 2xx twice is a duplicate unless a sender was SIGKILLed between the two', () => {
  const receiver = [req('dlv_d', 1, 0, 200), req('dlv_d', 2, 40_000, 200)];
  const d = delivery('dlv_d', [attempt(1, 0, 10, 200)]);
  const plain = checkSoak(records({ deliveriesList: [d], receiver }));
  expect(plain.violations.filter((v) => v.kind === 'duplicate').map((v) => v.id)).toEqual(['dlv_d']);
  expect(plain.metrics.duplicates).toEqual({ total: 1, excused: 0, unexcused: 1, excusedBy: {} });
  const killed = checkSoak(records({ deliveriesList: [d], receiver, faults: [{ kind: 'sender-sigkill', target: 'sender-2', atMs: T0 + 5, restoredAtMs: T0 + 2000 }] }));
  expect(killed.violations.filter((v) => v.kind === 'duplicate')).toEqual([]);
  expect(killed.metrics.duplicates).toEqual({ total: 1, excused: 1, unexcused: 0, excusedBy: { 'sender-sigkill': 1 } });
});

test('after a SIGKILL, an endpoint with a delivery waiting gets no request for 60 s (known bug 2): slow-resume; the stall is reported', () => {
  const kill: FaultRecord = { kind: 'sender-sigkill', target: 'sender-1', atMs: T0 + 1000, restoredAtMs: T0 + 3000 };
  const ep = endpoint('ep', { perEndpoint: 1 });
  const receiver = [
    // In flight on the killed sender: closed by the client at the kill, run again 60 s later.
    req('dlv_k', 1, 900, 'closed-by-client', { answerMs: T0 + 1002 }),
    req('dlv_k', 1, 61_000, 200),
  ];
  const r = records({ endpoints: [ep], deliveriesList: [delivery('dlv_k', [attempt(1, 61_000, 10, 200)])], receiver, faults: [kill] });
  const result = checkSoak(r);
  expect(result.violations.map((v) => v.kind)).toEqual(['slow-resume']);
  expect(result.metrics.maxResumeMs).toBe(60_000);
  expect(result.metrics.stalledDeliveries).toEqual([{ faultAtMs: T0 + 1000, deliveryId: 'dlv_k', endpointKey: 'ep', resumeMs: 60_000 }]);
  // Back within the limit: measured, no violation.
  const quick = [receiver[0]!, req('dlv_k', 1, 1000 + SOAK_MAX_RESUME_MS - 1, 200)];
  expect(kinds(records({ endpoints: [ep], deliveriesList: [delivery('dlv_k', [attempt(1, 1000 + SOAK_MAX_RESUME_MS - 1, 10, 200)])], receiver: quick, faults: [kill] }))).toEqual([]);
});

test('adaptive pacing: a start inside a Retry-After pause is pause-ignored; a first attempt long after acceptance with no fault is pacing-stall', () => {
  const ep = endpoint('ep', { pacing: 'adaptive' });
  const receiver = [req('dlv_429', 1, 0, 429, { retryAfterS: 2 })];
  const r = records({ endpoints: [ep], deliveriesList: [delivery('dlv_429', [attempt(1, 0, 10, 429), attempt(2, 2100, 10, 200)]), delivery('dlv_in', [attempt(1, 600, 10, 200)])], receiver });
  expect(idsOf(r, 'pause-ignored')).toEqual(['dlv_in']);
  const slow = records({ endpoints: [ep], deliveriesList: [delivery('dlv_slow', [attempt(1, 45_000, 10, 200)])] });
  expect(idsOf(slow, 'pacing-stall')).toEqual(['dlv_slow']);
});

test('adaptive pacing: a pace cut again by answers inside a Retry-After pause (known bug 3) is pace-over-cut; one cut per pause is not', () => {
  const ep = endpoint('ep', { pacing: 'adaptive', perEndpoint: 4 });
  // Four 429s with Retry-After: 1 answered within 30 ms: one pause, so one cut: 40/s × 4 → 20/s × 2.
  const storm = [0, 10, 20, 30].map((t, i) => req(`dlv_${i}`, 1, t, 429, { retryAfterS: 1, answerMs: T0 + t + 2 }));
  const full = { endpointKey: 'ep', atMs: T0 - 100, perSecond: null, concurrency: 4 };
  const at = (ms: number, perSecond: number, concurrency: number) => ({ endpointKey: 'ep', atMs: T0 + ms, perSecond, concurrency });
  expect(kinds(records({ endpoints: [ep], receiver: storm, paceSamples: [full, at(500, 20, 2)] }))).toEqual([]);
  const collapsed = checkSoak(records({ endpoints: [ep], receiver: storm, paceSamples: [full, at(500, 2.5, 1)] }));
  expect(collapsed.violations.map((v) => v.kind)).toEqual(['pace-over-cut']);
  expect(collapsed.metrics.allowedCuts.ep).toBe(1);
  // A 429 after the pause ended starts a new pause, and may cut once more.
  const second = [...storm, req('dlv_late', 1, 1200, 429, { retryAfterS: 1 })];
  expect(kinds(records({ endpoints: [ep], receiver: second, paceSamples: [full, at(500, 20, 2), at(800, 20, 2), at(1500, 10, 1)] }))).toEqual([]);
  expect(kinds(records({ endpoints: [ep], receiver: second, paceSamples: [full, at(500, 20, 2), at(800, 20, 2), at(1500, 5, 1)] }))).toEqual(['pace-over-cut']);
});

test('adaptive pacing: 429s to requests sent together, answered after the pause ended, allow one cut only', () => {
  const ep = endpoint('ep', { pacing: 'adaptive', perEndpoint: 4 });
  // Sent together at 0, answered at 300 ms and 1800 ms (after the 1-s pause of the first).
  const batch = [req('dlv_a', 1, 0, 429, { retryAfterS: 1, answerMs: T0 + 300 }), req('dlv_b', 1, 5, 429, { retryAfterS: 1, answerMs: T0 + 1800 })];
  const full = { endpointKey: 'ep', atMs: T0 - 100, perSecond: null, concurrency: 4 };
  const at = (ms: number, perSecond: number, concurrency: number) => ({ endpointKey: 'ep', atMs: T0 + ms, perSecond, concurrency });
  expect(kinds(records({ endpoints: [ep], receiver: batch, paceSamples: [full, at(2000, 20, 2)] }))).toEqual([]);
  expect(kinds(records({ endpoints: [ep], receiver: batch, paceSamples: [full, at(2000, 10, 1)] }))).toEqual(['pace-over-cut']);
});

test('adaptive pacing: a 429 to a request sent a window or more after the cut is a new signal and may cut again, inside the same pause', () => {
  const ep = endpoint('ep', { pacing: 'adaptive', perEndpoint: 4 });
  const full = { endpointKey: 'ep', atMs: T0 - 100, perSecond: null, concurrency: 4 };
  const at = (ms: number, perSecond: number, concurrency: number) => ({ endpointKey: 'ep', atMs: T0 + ms, perSecond, concurrency });
  // The first 429 at 0 pauses; one in flight then answers 429 at 600 and extends the pause to
  // 1600. One sent at 1050, a window after the first cut, is refused too: a new signal, so the
  // second cut (seen at 1300, inside the pause) is the law's, not one too many.
  const refusedAgain = [req('dlv_a', 1, 0, 429, { retryAfterS: 1, answerMs: T0 + 2 }), req('dlv_b', 1, 100, 429, { retryAfterS: 1, answerMs: T0 + 600 }), req('dlv_c', 1, 1050, 429, { retryAfterS: 1, answerMs: T0 + 1100 })];
  expect(kinds(records({ endpoints: [ep], receiver: refusedAgain, paceSamples: [full, at(500, 20, 2), at(1300, 10, 1)] }))).toEqual([]);
  // Without the late one, the same second cut is one too many.
  expect(kinds(records({ endpoints: [ep], receiver: refusedAgain.slice(0, 2), paceSamples: [full, at(500, 20, 2), at(1300, 10, 1)] }))).toEqual(['pace-over-cut']);
});

test('a request the sender abandoned at its timeout ends when the delivery log says, even when the receiver sees the close late', () => {
  const ep = endpoint('ep', { perEndpoint: 1, perOrg: 1 });
  // dlv_a's attempt times out at 100 (log); the receiver notices the close 40 ms later; dlv_b arrives at 110.
  const receiver = [req('dlv_a', 1, 0, 'closed-by-client', { answerMs: T0 + 140 }), req('dlv_b', 1, 110, 200, { answerMs: T0 + 120 })];
  const deliveriesList = [delivery('dlv_a', [attempt(1, 0, 100, null)], 'pending'), delivery('dlv_b', [attempt(1, 105, 15, 200)])];
  expect(kinds(records({ endpoints: [ep], receiver, deliveriesList })).filter((k) => k === 'endpoint-concurrency' || k === 'org-concurrency')).toEqual([]);
  // Without the log's end of dlv_a's attempt, the overlap is seen.
  expect(kinds(records({ endpoints: [ep], receiver, deliveriesList: [delivery('dlv_b', [attempt(1, 105, 15, 200)])] }))).toContain('endpoint-concurrency');
});

test('a duplicate whose first answer came while a stopped primary was still failing over is excused by that fault', () => {
  const receiver = [req('dlv_d', 1, 100, 200), req('dlv_d', 1, 4000, 200)];
  const deliveriesList = [delivery('dlv_d', [attempt(1, 3990, 20, 200)])];
  const stop: FaultRecord = { kind: 'redis-primary-stop', target: '127.0.0.1:7401', atMs: T0 + 50, restoredAtMs: T0 + 9000 };
  expect(kinds(records({ receiver, deliveriesList, faults: [stop] }))).toEqual([]);
  expect(kinds(records({ receiver, deliveriesList, faults: [{ ...stop, atMs: T0 - 60_000, restoredAtMs: T0 - 50_000 }] }))).toEqual(['duplicate']);
});

test('a second 2xx after an attempt whose answer the sender never got (it timed out first) is excused; the receivers\' stalls excuse a window of arrivals', () => {
  const receiver = [req('dlv_t', 1, 0, 200, { answerMs: T0 + 1600 }), req('dlv_t', 2, 3000, 200)];
  const deliveriesList = [delivery('dlv_t', [{ ...attempt(1, 0, 1500, null), error: 'timeout' }, attempt(2, 2990, 20, 200)])];
  expect(kinds(records({ receiver, deliveriesList }))).toEqual([]);
  // Recorded as a success, the same second request is a duplicate.
  expect(kinds(records({ receiver, deliveriesList: [delivery('dlv_t', [attempt(1, 0, 1600, 200), attempt(2, 2990, 20, 200)])] }))).toContain('duplicate');
  const ep = endpoint('ep', { rateLimit: { perSecond: 20, burst: 5 }, perEndpoint: 100 });
  const burst = Array.from({ length: 30 }, (_, i) => req(`d${i}`, 1, 500 + i, 200));
  expect(kinds(records({ endpoints: [ep], receiver: burst }))).toEqual(['rate-limit-arrivals']);
  expect(kinds({ ...records({ endpoints: [ep], receiver: burst }), receiverStalls: [[T0 + 200, T0 + 500]] })).toEqual([]);
});

test('a start inside a Retry-After pause is excused by a Redis fault that may have delayed storing the pause, and counted apart', () => {
  const ep = endpoint('ep', { pacing: 'adaptive' });
  const receiver = [req('dlv_429', 1, 0, 429, { retryAfterS: 2 })];
  const list = [delivery('dlv_429', [attempt(1, 0, 10, 429), attempt(2, 2100, 10, 200)]), delivery('dlv_in', [attempt(1, 600, 10, 200)])];
  const clientKill: FaultRecord = { kind: 'redis-client-kill', target: 'sender-1', atMs: T0 + 5, restoredAtMs: T0 + 5 };
  const excused = checkSoak(records({ endpoints: [ep], deliveriesList: list, receiver, faults: [clientKill] }));
  expect(excused.violations.map((v) => v.kind)).toEqual([]);
  expect(excused.metrics.pausesStoredLate).toEqual({ ep: 1 });
  // A fault long over before the answer excuses nothing.
  const earlier: FaultRecord = { ...clientKill, atMs: T0 - 20_000, restoredAtMs: T0 - 20_000 };
  expect(idsOf(records({ endpoints: [ep], deliveriesList: list, receiver, faults: [earlier] }), 'pause-ignored')).toEqual(['dlv_in']);
});

test('a Retry-After pause starts when its outcome was stored in Redis (the live feed), not when the sender read the answer', () => {
  const ep = endpoint('ep', { pacing: 'adaptive' });
  const receiver = [req('dlv_429', 1, 0, 429, { retryAfterS: 2 })];
  const list = [delivery('dlv_429', [attempt(1, 0, 10, 429), attempt(2, 2100, 10, 200)]), delivery('dlv_in', [attempt(1, 600, 10, 200)])];
  // The sender read the 429 at 10 ms but its finish reached Redis at 700 ms: a claim at 600 ms could not see the pause.
  expect(kinds(records({ endpoints: [ep], deliveriesList: list, receiver, outcomeRecordedAt: { 'dlv_429.1': T0 + 700 } }))).toEqual([]);
  // Stored at 300 ms: the claim at 600 ms ran after it, and started inside the pause.
  expect(idsOf(records({ endpoints: [ep], deliveriesList: list, receiver, outcomeRecordedAt: { 'dlv_429.1': T0 + 300 } }), 'pause-ignored')).toEqual(['dlv_in']);
  // Its storing time known, a Redis fault nearby excuses nothing.
  const clientKill: FaultRecord = { kind: 'redis-client-kill', target: 'sender-1', atMs: T0 + 5, restoredAtMs: T0 + 5 };
  expect(idsOf(records({ endpoints: [ep], deliveriesList: list, receiver, faults: [clientKill], outcomeRecordedAt: { 'dlv_429.1': T0 + 300 } }), 'pause-ignored')).toEqual(['dlv_in']);
});

test('resume after a SIGKILL does not count the Retry-After pauses the receiver asked for meanwhile', () => {
  const kill: FaultRecord = { kind: 'sender-sigkill', target: 'sender-1', atMs: T0 + 1000, restoredAtMs: T0 + 3000 };
  const ep = endpoint('ep', { perEndpoint: 1, pacing: 'adaptive' });
  const receiver = [
    req('dlv_k', 1, 900, 'closed-by-client', { answerMs: T0 + 1002 }),
    // Another delivery's 429 asked for 15 s just before the kill; the endpoint's next request came after it.
    req('dlv_p', 1, 500, 429, { answerMs: T0 + 990, retryAfterS: 15 }),
    req('dlv_k', 1, 18_000, 200),
  ];
  const list = [delivery('dlv_k', [attempt(1, 18_000, 10, 200)]), delivery('dlv_p', [attempt(1, 500, 490, 429), attempt(2, 16_100, 10, 200)])];
  const result = checkSoak(records({ endpoints: [ep], deliveriesList: list, receiver, faults: [kill] }));
  expect(result.violations.filter((v) => v.kind === 'slow-resume')).toEqual([]);
  expect(result.metrics.maxResumeMs).toBe(18_000 - 1000 - (15_990 - 1000));
});

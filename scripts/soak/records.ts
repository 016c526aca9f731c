/**
 * What a soak run records, as plain data: the checker (`check.ts`) takes exactly this, so it can
 * be tested with hand-made records. Times are epoch ms of this machine's clock (`Date.now()`).
 */

/** The schedule part of a policy, as the checker needs it (see `packages/shared/src/policy.ts`). */
export type ScheduleSpec =
  | { kind: 'fixed'; waitsMs: number[] }
  | { kind: 'random-up-to'; capsMs: number[]; floorMs: number }
  | { kind: 'exponential-full-jitter'; baseMs: number; capMs: number };

/** One endpoint of the run, with the policy fields the invariants are about. */
export interface EndpointSpec {
  /** The soak's name for it, e.g. `fixed-flaky`. */
  key: string;
  /** Postern's id (`ep_…`), once created. */
  id: string;
  /** The soak's name of its org. */
  orgKey: string;
  maxAttempts: number;
  schedule: ScheduleSpec;
  /** ± fraction on fixed waits (0..0.5). */
  jitterRatio: number;
  perEndpoint: number;
  perOrg: number;
  rateLimit: { perSecond: number; burst: number } | null;
  ordering: 'none' | 'per-key';
  pacing: 'none' | 'adaptive';
  timeoutMs: number;
  /** Whether a breaker may switch it off (then an event may get no delivery to it). */
  breaker: boolean;
}

/** How the receiver ended a request: an HTTP status, it dropped the connection, or the client went away first. */
export type ReceiverAnswer = number | 'closed-by-receiver' | 'closed-by-client';

/** One request as the endpoint's receiver saw it. */
export interface ReceiverRecord {
  endpointKey: string;
  /** `webhook-delivery-id`. */
  deliveryId: string;
  /** `webhook-id` (the event id). */
  webhookId: string;
  /** `webhook-attempt`. */
  attempt: number;
  /** `webhook-ordering-key`, or null. */
  orderingKey: string | null;
  /** `webhook-sequence`, or null. */
  sequence: number | null;
  /** When the request's headers arrived. */
  arrivalMs: number;
  /** When the answer was written, or the connection closed (whichever ended the request). */
  answerMs: number;
  answer: ReceiverAnswer;
  /** Seconds of a `Retry-After` header sent with the answer, or null. */
  retryAfterS: number | null;
  /**
   * For a request the sender closed (its timeout): when the sender gave it up, its attempt's end
   * in the delivery log (the checker fills it in; the socket was closed before that). The
   * receiver's own view of the close can lag behind it on a busy machine.
   */
  abandonedAtMs?: number;
}

/** One attempt from the delivery log (`GET /v1/deliveries/:id`). */
export interface AttemptLog {
  number: number;
  startedAtMs: number;
  /** `startedAt + durationMs`. */
  finishedAtMs: number;
  responseStatus: number | null;
  error: string | null;
}

/** One delivery from the delivery log, with its attempts. */
export interface DeliveryLog {
  id: string;
  endpointKey: string;
  status: 'pending' | 'in_flight' | 'succeeded' | 'failed' | 'cancelled';
  lastError: string | null;
  cancelReason: string | null;
  attempts: AttemptLog[];
  /** The delivery it was redelivered from (`redeliveredFromId`); null or absent for an original. */
  redeliveredFromId?: string | null;
}

/** One event the producer got a 202 for. */
export interface AcceptedEvent {
  eventId: string;
  endpointKey: string;
  deliveryIds: string[];
  /** When the 202 arrived. */
  acceptedAtMs: number;
  /** When the `POST /v1/events` was sent: no attempt of it can start before (a sender may start before the 202 is back). */
  postedAtMs: number;
}

/**
 * One redelivery the soak asked for (`POST /v1/deliveries/:id/redeliver`, answered 202): a new
 * delivery of the same event to the same endpoint, sent outside its ordering key's line with the
 * original's key and sequence.
 */
export interface RedeliveryRecord {
  /** The new delivery's id. */
  deliveryId: string;
  /** The delivery it was made from (`redeliveredFromId`): an original, or an earlier redelivery. */
  redeliveredFromId: string;
  eventId: string;
  endpointKey: string;
  /** When the request was sent: no attempt of the redelivery can start before. */
  requestedAtMs: number;
}

/** Every kind of fault the soak injects. */
export const FAULT_KINDS = ['sender-sigkill', 'sender-sigterm', 'redis-client-kill', 'redis-restart', 'redis-failover', 'redis-primary-stop'] as const;

/** One of {@link FAULT_KINDS}. */
export type FaultKind = (typeof FAULT_KINDS)[number];

/** One injected fault: when it hit and, for a stopped process, when it was back. */
export interface FaultRecord {
  kind: FaultKind;
  /** What it hit: a sender's name or a Redis node (`127.0.0.1:P`). */
  target: string;
  atMs: number;
  /** When the stopped process was running again (null: nothing to restart, or never back). */
  restoredAtMs: number | null;
}

/** An adaptive endpoint's pace as `GET /v1/endpoints/:id` showed it at `atMs`. */
export interface PaceSample {
  endpointKey: string;
  atMs: number;
  /** Requests per second allowed (null: no rate bound). */
  perSecond: number | null;
  concurrency: number;
}

/** Everything one soak run recorded. */
export interface SoakRecords {
  endpoints: EndpointSpec[];
  accepted: AcceptedEvent[];
  /** Redeliveries the soak made during production (absent in records of runs that made none). */
  redeliveries?: RedeliveryRecord[];
  /** By delivery id; a delivery the API did not return is missing here. */
  deliveries: Map<string, DeliveryLog>;
  receiver: ReceiverRecord[];
  faults: FaultRecord[];
  /** Adaptive endpoints' pace, sampled every 200 ms (empty: not sampled). */
  paceSamples: PaceSample[];
  /**
   * When the receivers' own process was held up (event-loop delays over
   * `RECEIVER_STALL_MS`, as `[fromMs, toMs]`): arrival times inside are late by up to that much,
   * so a window of arrivals that overlaps one cannot be counted to the request.
   */
  receiverStalls?: [number, number][];
  /** When production stopped (the drain began). */
  producedUntilMs: number;
  /**
   * `<delivery id>.<attempt>` → when Postern recorded that attempt's outcome (Redis's clock, read
   * from the orgs' live feeds; `outcome-feed.ts`). An attempt missing here (its feed entry lost to a
   * Redis restart, or a run recorded before this was kept) is dated by its end in the delivery log.
   */
  outcomeRecordedAt?: Record<string, number>;
}

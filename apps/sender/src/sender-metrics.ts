import { errorFamily, isValidErrorCode, type Pace } from '@postern/shared';
import type { Queue } from 'bullmq';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import { RecentFailures } from './recent-failures.js';

/** How many endpoints `postern_endpoint_recent_failed_attempts` names at most, per sender. */
export const TOP_FAILING_ENDPOINTS = 10;

/**
 * What the delivery code reports as it works; the sender's metrics implement it. Every method is
 * synchronous and never throws, so reporting cannot fail an attempt.
 */
export interface DeliveryObserver {
  /**
   * An attempt's request is about to be sent (in-flight + 1): its number, and how long after the
   * event's acceptance (the delivery's `createdAt`) it starts, ms.
   */
  attemptStarted(attempt: { attemptNumber: number; sinceAcceptedMs: number }): void;
  /**
   * That attempt is over (in-flight − 1): how long it took, its error code (null on success), its
   * endpoint and org, and when it ended (epoch ms).
   */
  attemptFinished(attempt: { durationMs: number; error: string | null; orgId: string; endpointId: string; nowMs: number }): void;
  /**
   * A delivery reached a final status; `error` is the error code (failed) or the reason
   * (cancelled), null on success. `latencyMs` (succeeded only) is from the event's acceptance
   * (the delivery's `createdAt`) to the end of the successful attempt.
   */
  deliveryFinished(delivery: { outcome: 'succeeded' | 'failed' | 'cancelled'; error: string | null; latencyMs?: number }): void;
  /** An endpoint's breaker paused or disabled it. */
  breakerTripped(action: 'pause' | 'disable'): void;
  /**
   * The org's pre-attempt check answered (issue 16): `send`, `cancel`, or `fault` with its
   * `internal:check_…` code; how long it took. Optional: observers that do not count checks omit it.
   */
  checkFinished?(check: { result: 'send' | 'cancel' | 'fault'; error: string | null; durationMs: number }): void;
  /** An endpoint's transformation ran in its sandbox this long, ms. Optional. */
  transformed?(durationMs: number): void;
  /** Adaptive pacing changed an endpoint's pace (`nextPace`); `cut` when it slowed down. */
  paceChanged(change: { endpointId: string; pace: Pace; cut: boolean }): void;
  /**
   * An OAuth 2.0 token fetch ended: `result` is `ok` or its failure reason (`token_http_500`,
   * `token_timeout`, …; see {@link tokenFetchLabel}). Optional: observers that do not count fetches omit it.
   */
  tokenFetched?(fetch: { result: string }): void;
}

/** An observer that records nothing: the default when no metrics are wired. */
export const NO_DELIVERY_OBSERVER: DeliveryObserver = Object.freeze({
  attemptStarted() {},
  attemptFinished() {},
  deliveryFinished() {},
  breakerTripped() {},
  checkFinished() {},
  paceChanged() {},
  tokenFetched() {},
});

const SYSTEM_DETAIL = /^[A-Z][A-Z0-9_]{0,39}$/;
const REASON_DETAIL = /^[a-z][a-z0-9_]{0,39}$/;

/**
 * An error code as a metric label with a bounded set of values: `none` for success; `http_<status>`
 * as it is (a 3-digit status); `connection_failed`, `tls_error` and `dns_lookup_failed` keep a
 * system code (`connection_failed:ECONNREFUSED`) and `unsafe_url`, `internal` a reason
 * (`unsafe_url:loopback`), since those come from closed sets in Node and Postern; anything else
 * (or a detail of another shape) is the family alone. Never an address, a message or an id.
 */
export function errorLabel(code: string | null): string {
  if (code === null) return 'none';
  if (!isValidErrorCode(code)) return 'delivery_failed';
  const family = errorFamily(code);
  if (family === 'http') return code;
  const colon = code.indexOf(':');
  if (colon < 0) return family;
  const detail = code.slice(colon + 1);
  if ((family === 'unsafe_url' || family === 'internal') && REASON_DETAIL.test(detail)) return code;
  if ((family === 'connection_failed' || family === 'tls_error' || family === 'dns_lookup_failed') && SYSTEM_DETAIL.test(detail)) return code;
  return family;
}

const TOKEN_FETCH_REASONS = new Set(['token_timeout', 'token_bad_answer', 'token_bad_url']);
const TOKEN_FETCH_FAMILIES = ['token_connection_failed', 'token_tls_error', 'token_dns_lookup_failed', 'token_unsafe_url'];

/**
 * An OAuth 2.0 token fetch's outcome as a metric label with a bounded set of values: `ok`;
 * `token_http_<status>` (a 3-digit status); `token_timeout`, `token_bad_answer`, `token_bad_url`;
 * `token_connection_failed`, `token_tls_error`, `token_dns_lookup_failed` and `token_unsafe_url`
 * without their detail (the reasons `oauth-tokens.ts` gives carry a system code or an address
 * class after them); anything else `token_other`.
 */
export function tokenFetchLabel(result: string): string {
  if (result === 'ok' || TOKEN_FETCH_REASONS.has(result) || /^token_http_[1-5][0-9]{2}$/.test(result)) return result;
  return TOKEN_FETCH_FAMILIES.find((family) => result === family || result.startsWith(`${family}_`)) ?? 'token_other';
}

/** Queue states reported by `postern_queue_jobs`. */
export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'waiting-children', 'failed'] as const;

/** The sender's Prometheus metrics, on one per-app registry. */
export interface SenderMetrics extends DeliveryObserver {
  readonly registry: Registry;
}

/**
 * Registers the sender's metrics on `registry` (a fresh `new Registry()` per app, never
 * prom-client's global one; `main.ts` adds the default process metrics to it):
 * - `postern_deliveries_finished_total{outcome, error}`: deliveries that reached a final status;
 * - `postern_attempts_total{result, error}` and `postern_attempt_duration_seconds{result}`;
 * - `postern_delivery_latency_seconds`: event accepted → delivered, successful deliveries;
 * - `postern_first_attempt_latency_seconds`: event accepted → its delivery's first attempt starts;
 * - `postern_attempts_in_flight`: attempts this process is sending now;
 * - `postern_breaker_trips_total{action}`;
 * - `postern_pre_attempt_checks_total{result, error}` and `postern_pre_attempt_check_duration_seconds`: the org
 *   check URL's answers (send, cancel, fault with its `internal:check_…` code);
 * - `postern_oauth_token_fetches_total{result}`: requests to OAuth 2.0 token endpoints, by
 *   {@link tokenFetchLabel} (`ok` or the failure reason);
 * - `postern_endpoint_recent_failed_attempts{org_id, endpoint_id}`: failed attempts of the
 *   {@link TOP_FAILING_ENDPOINTS} endpoints failing most in this process over the last 15 minutes;
 * - adaptive pacing (issue 13): `postern_pace_cuts_total`, and per endpoint whose pace this process
 *   last changed `postern_endpoint_pace_per_second{endpoint}` (absent while no rate bound),
 *   `postern_endpoint_pace_concurrency{endpoint}`, `postern_endpoint_paused_until_seconds{endpoint}`
 *   (0 = not paused);
 * - `postern_queue_jobs{state}`: the deliveries queue's jobs by state, summed over its partitions, read from Redis at scrape
 *   time (at most `queueTimeoutMs`, default 1000; a slow or unreachable Redis leaves the last values);
 * - `postern_queue_oldest_pending_seconds`: how long the delivery waiting longest past its due time
 *   has waited (`longestOverdueMs`, read at scrape time like the job counts; absent: not reported).
 * Throws when `registry` already holds these metrics.
 */
export function createSenderMetrics(opts: {
  registry: Registry;
  queues: readonly Queue[];
  queueTimeoutMs?: number;
  /** Reads how long the most overdue delivery has waited, ms (`DeliveryQueues.longestOverdueMs`). */
  longestOverdueMs?: () => Promise<number>;
  clock?: { now(): number };
}): SenderMetrics {
  const { registry, queues } = opts;
  const clock = opts.clock ?? { now: () => Date.now() };
  const queueTimeoutMs = opts.queueTimeoutMs ?? 1000;
  const registers = [registry];
  const finished = new Counter({
    name: 'postern_deliveries_finished_total',
    help: 'Deliveries that reached a final status, by outcome (succeeded, failed, cancelled) and error code (bounded; none on success).',
    labelNames: ['outcome', 'error'] as const,
    registers,
  });
  const attempts = new Counter({
    name: 'postern_attempts_total',
    help: 'Attempts (HTTP requests) finished, by result (success, failure) and error code (bounded; none on success).',
    labelNames: ['result', 'error'] as const,
    registers,
  });
  const attemptDuration = new Histogram({
    name: 'postern_attempt_duration_seconds',
    help: 'Duration of one attempt, from the request to the answer or error, by result.',
    labelNames: ['result'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30],
    registers,
  });
  const latency = new Histogram({
    name: 'postern_delivery_latency_seconds',
    help: 'From the event being accepted (202) to the end of the successful attempt of a delivery.',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21600, 86400],
    registers,
  });
  const firstAttempt = new Histogram({
    name: 'postern_first_attempt_latency_seconds',
    help: 'From the event being accepted (202) to the start of its delivery’s first attempt (queueing and waiting for a concurrency slot included).',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800],
    registers,
  });
  const inFlight = new Gauge({ name: 'postern_attempts_in_flight', help: 'Attempts this sender process is sending right now.', registers });
  const recentFailures = new RecentFailures();
  new Gauge({
    name: 'postern_endpoint_recent_failed_attempts',
    help: `Failed attempts over the last 15 minutes of the ${TOP_FAILING_ENDPOINTS} endpoints failing most at this sender (the only metric naming endpoints; at most ${TOP_FAILING_ENDPOINTS} series per sender). Sum over senders by endpoint_id.`,
    labelNames: ['org_id', 'endpoint_id'] as const,
    registers,
    collect() {
      this.reset();
      for (const top of recentFailures.top(TOP_FAILING_ENDPOINTS, clock.now())) this.set({ org_id: top.orgId, endpoint_id: top.endpointId }, top.failedAttempts);
    },
  });
  const trips = new Counter({
    name: 'postern_breaker_trips_total',
    help: 'Endpoints switched off by their breaker, by action (pause, disable).',
    labelNames: ['action'] as const,
    registers,
  });
  const checks = new Counter({
    name: 'postern_pre_attempt_checks_total',
    help: "Answers of orgs' pre-attempt check URLs, by result (send, cancel, fault) and error code (bounded; none unless fault).",
    labelNames: ['result', 'error'] as const,
    registers,
  });
  const checkDuration = new Histogram({
    name: 'postern_pre_attempt_check_duration_seconds',
    help: "Duration of one call to an org's pre-attempt check URL.",
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers,
  });
  const transformDuration = new Histogram({
    name: 'postern_transformation_duration_seconds',
    help: "Duration of one call of an endpoint's transformation in its sandbox thread (docs/transformations.md).",
    // Fine below 2 ms (a transformation's usual time is a fraction of a millisecond; its goal is p99 ≤ 1 ms), coarse up to the cap.
    buckets: [0.00005, 0.0001, 0.00015, 0.0002, 0.0003, 0.0004, 0.0005, 0.0006, 0.0007, 0.0008, 0.0009, 0.001, 0.0015, 0.002, 0.003, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers,
  });
  const tokenFetches = new Counter({
    name: 'postern_oauth_token_fetches_total',
    help: 'OAuth 2.0 client-credentials token fetches (one per token, not per attempt), by result: ok, or the failure reason (token_http_<status>, token_timeout, token_bad_answer, token_connection_failed, …).',
    labelNames: ['result'] as const,
    registers,
  });
  const paceCuts = new Counter({ name: 'postern_pace_cuts_total', help: 'Adaptive pacing cuts: a 429, 503 or timeout halved an endpoint\'s rate and concurrency.', registers });
  const paceRate = new Gauge({
    name: 'postern_endpoint_pace_per_second',
    help: 'Requests per second an adaptively paced endpoint is allowed now (absent while it has no rate bound).',
    labelNames: ['endpoint'] as const,
    registers,
  });
  const paceConcurrency = new Gauge({
    name: 'postern_endpoint_pace_concurrency',
    help: 'Attempts in flight an adaptively paced endpoint is allowed now.',
    labelNames: ['endpoint'] as const,
    registers,
  });
  const pausedUntil = new Gauge({
    name: 'postern_endpoint_paused_until_seconds',
    help: 'Until when (unix seconds) adaptive pacing pauses an endpoint after a Retry-After; 0 = not paused.',
    labelNames: ['endpoint'] as const,
    registers,
  });
  new Gauge({
    name: 'postern_queue_jobs',
    help: 'Jobs in the deliveries queue by state (one job per unfinished delivery). The same for every sender: aggregate with max.',
    labelNames: ['state'] as const,
    registers,
    async collect() {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<null>((resolve) => {
        timer = setTimeout(() => resolve(null), queueTimeoutMs);
      });
      const all = Promise.all(queues.map((q) => q.getJobCounts(...QUEUE_STATES))).catch(() => null);
      const counts = await Promise.race([all, timeout]);
      clearTimeout(timer);
      if (!counts) return;
      for (const state of QUEUE_STATES) this.set({ state }, counts.reduce((sum, c) => sum + (c[state] ?? 0), 0));
    },
  });

  const readOverdue = opts.longestOverdueMs;
  if (readOverdue) {
    new Gauge({
      name: 'postern_queue_oldest_pending_seconds',
      help: 'How long the delivery waiting longest past its due time (first attempt or retry) has waited; 0 when every due delivery has started. The same for every sender: aggregate with max.',
      registers,
      async collect() {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<null>((resolve) => {
          timer = setTimeout(() => resolve(null), queueTimeoutMs);
        });
        const ms = await Promise.race([readOverdue().catch(() => null), timeout]);
        clearTimeout(timer);
        if (ms !== null) this.set(ms / 1000);
      },
    });
  }

  return {
    registry,
    attemptStarted({ attemptNumber, sinceAcceptedMs }) {
      inFlight.inc();
      if (attemptNumber === 1) firstAttempt.observe(Math.max(0, sinceAcceptedMs) / 1000);
    },
    attemptFinished({ durationMs, error, orgId, endpointId, nowMs }) {
      inFlight.dec();
      if (error !== null) recentFailures.record(orgId, endpointId, nowMs);
      const result = error === null ? 'success' : 'failure';
      attempts.inc({ result, error: errorLabel(error) });
      attemptDuration.observe({ result }, Math.max(0, durationMs) / 1000);
    },
    deliveryFinished({ outcome, error, latencyMs }) {
      // A cancellation carries Postern's reason (endpoint_deleted, breaker_tripped, …), not an error code.
      const label =
        outcome === 'succeeded'
          ? 'none'
          : outcome === 'cancelled'
            ? error !== null && REASON_DETAIL.test(error)
              ? error
              : error?.startsWith('check:') === true
                ? 'check'
                : 'other'
            : errorLabel(error);
      finished.inc({ outcome, error: label });
      if (outcome === 'succeeded' && latencyMs !== undefined) latency.observe(Math.max(0, latencyMs) / 1000);
    },
    breakerTripped(action) {
      trips.inc({ action });
    },
    checkFinished({ result, error, durationMs }) {
      checks.inc({ result, error: errorLabel(error) });
      checkDuration.observe(Math.max(0, durationMs) / 1000);
    },
    transformed(durationMs) {
      transformDuration.observe(Math.max(0, durationMs) / 1000);
    },
    tokenFetched({ result }) {
      tokenFetches.inc({ result: tokenFetchLabel(result) });
    },
    paceChanged({ endpointId, pace, cut }) {
      if (cut) paceCuts.inc();
      const endpoint = { endpoint: endpointId };
      if (pace.perSecond === null) paceRate.remove(endpoint);
      else paceRate.set(endpoint, pace.perSecond);
      paceConcurrency.set(endpoint, Math.floor(pace.concurrency));
      pausedUntil.set(endpoint, pace.pausedUntil === null ? 0 : pace.pausedUntil / 1000);
    },
  };
}

/**
 * The soak's endpoints: one per promise under test, each with its policy, its receiver's
 * behaviour and its share of the producer's events. Two orgs: `main` (a high perOrg) and
 * `limited` (perOrg 3 over three endpoints of perEndpoint 2).
 */
import { hashUnit } from './prng.js';
import type { ReceiverBehaviour } from './receivers.js';
import type { EndpointSpec, ScheduleSpec } from './records.js';

/** The endpoint whose in-flight request decides which sender a SIGKILL hits (see `run-soak.ts`). */
export const SLOW_SERIAL_ENDPOINT = 'slow-serial';

/** One endpoint as the soak sets it up. */
export interface EndpointPlan {
  spec: Omit<EndpointSpec, 'id'>;
  /** The `policy` of `POST /v1/endpoints` (overrides of the `standard` preset). */
  policy: Record<string, unknown>;
  behaviour: ReceiverBehaviour;
  /** Share of the steady producer's events (relative weight; 0 = bursts only). */
  weight: number;
  /** Ordering keys its events carry (empty: none). */
  orderingKeys: string[];
  /** Every `everyMs`, `count` events to it at once (null: none). */
  burst: { everyMs: number; count: number } | null;
  /** Whether the soak redelivers its deliveries during production (its policy then offers redelivery while pending). */
  redelivered?: boolean;
}

/** Knobs that differ between the full soak and the CI variant. */
export interface TopologyOptions {
  seed: number;
  /** The long fixed wait of the `burst-retry` endpoint (known bug 1 needs a wait well above the run's pace; 60 s in the full soak). */
  longWaitMs: number;
}

interface PolicyShape {
  maxAttempts: number;
  schedule: ScheduleSpec;
  jitterRatio?: number;
  perEndpoint: number;
  perOrg?: number;
  timeoutMs?: number;
  rateLimit?: { perSecond: number; burst: number } | null;
  ordering?: 'none' | 'per-key';
  pacing?: 'none' | 'adaptive';
  breaker?: Record<string, unknown> | null;
  /** Redelivery offered for any delivery but one in flight (`{allowed: true, whilePending: true}`); default the standard preset's (finished ones only). */
  redeliverWhilePending?: boolean;
}

function plan(key: string, orgKey: string, p: PolicyShape, rest: Omit<EndpointPlan, 'spec' | 'policy'>): EndpointPlan {
  const spec: Omit<EndpointSpec, 'id'> = {
    key,
    orgKey,
    maxAttempts: p.maxAttempts,
    schedule: p.schedule,
    jitterRatio: p.jitterRatio ?? 0,
    perEndpoint: p.perEndpoint,
    perOrg: p.perOrg ?? 100,
    rateLimit: p.rateLimit ?? null,
    ordering: p.ordering ?? 'none',
    pacing: p.pacing ?? 'none',
    timeoutMs: p.timeoutMs ?? 5000,
    breaker: Boolean(p.breaker),
  };
  const policy = {
    maxAttempts: spec.maxAttempts,
    schedule: spec.schedule,
    jitterRatio: spec.jitterRatio,
    retryAfter: 'honour',
    timeout: { ms: spec.timeoutMs, measures: 'whole-response' },
    concurrency: { perEndpoint: spec.perEndpoint, perOrg: spec.perOrg },
    breaker: p.breaker ?? null,
    onEndpointInactive: 'cancel',
    rateLimit: spec.rateLimit,
    ordering: spec.ordering,
    pacing: spec.pacing,
    ...(p.redeliverWhilePending ? { redelivery: { allowed: true, whilePending: true } } : {}),
  };
  return { spec, policy, ...rest, ...(p.redeliverWhilePending ? { redelivered: true } : {}) };
}

const answer = (status: number, delayMs: number, retryAfterS?: number) => ({ kind: 'answer' as const, status, delayMs, ...(retryAfterS === undefined ? {} : { retryAfterS }) });

/** The endpoints of a run with `opts.seed`. */
export function soakTopology(opts: TopologyOptions): EndpointPlan[] {
  const { seed } = opts;
  const u = (key: string, n: number, attempt: number, salt = 0) => hashUnit(seed, key, n, attempt, salt);
  return [
    // Redelivered during production too (`redeliverer.ts`): redeliveries of deliveries still
    // waiting for a retry, of finished ones, and of redeliveries, next to the originals' attempts.
    plan('fixed-flaky', 'main', { maxAttempts: 5, schedule: { kind: 'fixed', waitsMs: [1000, 2000, 3000, 4000] }, perEndpoint: 4, redeliverWhilePending: true }, {
      weight: 4, orderingKeys: [], burst: null,
      behaviour: ({ n, attempt }) => {
        const x = u('fixed-flaky', n, attempt);
        if (x < 0.05) return { kind: 'close', delayMs: Math.floor(u('fixed-flaky', n, attempt, 1) * 50) };
        return answer(x < 0.35 ? 500 : 200, 5 + Math.floor(u('fixed-flaky', n, attempt, 2) * 40));
      },
    }),
    plan('jitter-stall', 'main', { maxAttempts: 4, schedule: { kind: 'fixed', waitsMs: [2000, 3000, 5000] }, jitterRatio: 0.3, perEndpoint: 1, timeoutMs: 1500, redeliverWhilePending: true }, {
      weight: 1, orderingKeys: [], burst: null,
      behaviour: ({ n, attempt }) => {
        const x = u('jitter-stall', n, attempt);
        // Late but in time, or later than the 1.5-s timeout.
        if (x < 0.1) return answer(200, 1800 + Math.floor(u('jitter-stall', n, attempt, 1) * 1200));
        if (x < 0.25) return answer(200, 600 + Math.floor(u('jitter-stall', n, attempt, 1) * 700));
        return answer(x < 0.4 ? 500 : 200, 10 + Math.floor(u('jitter-stall', n, attempt, 2) * 60));
      },
    }),
    plan('random-wait', 'main', { maxAttempts: 4, schedule: { kind: 'random-up-to', capsMs: [2000, 4000, 5000], floorMs: 1000 }, perEndpoint: 4 }, {
      weight: 3, orderingKeys: [], burst: null,
      behaviour: ({ n, attempt }) => answer(u('random-wait', n, attempt) < 0.3 ? 500 : 200, 5 + Math.floor(u('random-wait', n, attempt, 1) * 30)),
    }),
    plan('rate-limited', 'main', { maxAttempts: 3, schedule: { kind: 'fixed', waitsMs: [1000, 2000] }, perEndpoint: 10, rateLimit: { perSecond: 20, burst: 5 } }, {
      weight: 3, orderingKeys: [], burst: { everyMs: 10_000, count: 40 },
      behaviour: ({ n, attempt }) => answer(u('rate-limited', n, attempt) < 0.05 ? 500 : 200, 2 + Math.floor(u('rate-limited', n, attempt, 1) * 10)),
    }),
    plan('ordered', 'main', { maxAttempts: 4, schedule: { kind: 'fixed', waitsMs: [1000, 1500, 2000] }, perEndpoint: 4, ordering: 'per-key', redeliverWhilePending: true }, {
      weight: 4, orderingKeys: ['k0', 'k1', 'k2', 'k3', 'k4', 'k5', 'k6', 'k7'], burst: null,
      behaviour: ({ n, attempt }) => {
        const x = u('ordered', n, attempt);
        if (x < 0.03) return { kind: 'close', delayMs: 5 };
        return answer(x < 0.2 ? 500 : 200, 5 + Math.floor(u('ordered', n, attempt, 1) * 30));
      },
    }),
    plan('adaptive', 'main', { maxAttempts: 8, schedule: { kind: 'fixed', waitsMs: [1000, 2000, 3000, 4000, 5000, 5000, 5000] }, perEndpoint: 4, pacing: 'adaptive' }, {
      // A 429 burst: every 15 s, 8 events at once whose first attempts get 429 + Retry-After: 1,
      // answered 0.2–2.5 s late: answers to requests sent together before the pause come back
      // after it ended, and must not cut again (README).
      weight: 3, orderingKeys: [], burst: { everyMs: 15_000, count: 8 },
      behaviour: ({ n, burst, attempt }) => (burst && attempt === 1 ? answer(429, 200 + Math.floor(u('adaptive', n, attempt, 1) * 2300), 1) : answer(200, 5 + Math.floor(u('adaptive', n, attempt) * 20))),
    }),
    plan('burst-retry', 'main', { maxAttempts: 2, schedule: { kind: 'fixed', waitsMs: [opts.longWaitMs] }, perEndpoint: 4 }, {
      // Bursts closer together than the wait: the next burst's releases run while retries wait.
      weight: 0, orderingKeys: [], burst: { everyMs: Math.min(20_000, Math.max(3000, Math.round(opts.longWaitMs / 3))), count: 8 },
      // Known bug 1's shape: 500 to every attempt 1, 200 after.
      behaviour: ({ attempt }) => answer(attempt === 1 ? 500 : 200, attempt === 1 ? 0 : 5),
    }),
    // Slow answers, one at a time: a sender SIGKILLed while it sends here holds the endpoint's only slot.
    plan(SLOW_SERIAL_ENDPOINT, 'main', { maxAttempts: 3, schedule: { kind: 'fixed', waitsMs: [1000, 2000] }, perEndpoint: 1 }, {
      weight: 1, orderingKeys: [], burst: null,
      behaviour: ({ n, attempt }) => answer(u(SLOW_SERIAL_ENDPOINT, n, attempt) < 0.1 ? 500 : 200, 300 + Math.floor(u(SLOW_SERIAL_ENDPOINT, n, attempt, 1) * 600)),
    }),
    plan('breaker', 'main', {
      maxAttempts: 3, schedule: { kind: 'fixed', waitsMs: [1000, 1000] }, perEndpoint: 2,
      breaker: { counts: 'attempts', of: 'all', threshold: 12, minStreakMs: 0, action: 'disable', pendingOnTrip: 'cancel', reenable: 'resume', countTestEvents: false },
    }, {
      weight: 0.5, orderingKeys: [], burst: null,
      behaviour: () => answer(500, 5),
    }),
    ...['org-a', 'org-b', 'org-c'].map((key) =>
      plan(key, 'limited', { maxAttempts: 3, schedule: { kind: 'fixed', waitsMs: [1000, 2000] }, perEndpoint: 2, perOrg: 3 }, {
        weight: 1.5, orderingKeys: [], burst: null,
        behaviour: ({ n, attempt }) => answer(u(key, n, attempt) < 0.1 ? 500 : 200, 50 + Math.floor(u(key, n, attempt, 1) * 250)),
      }),
    ),
  ];
}

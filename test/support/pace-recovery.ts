import { fastPolicy, type TestPostern } from './postern.js';
import { startReceiver, type TestReceiver } from './receiver.js';
import { waitUntil } from './wait-until.js';

/**
 * Adaptive pacing through an outage and back, as `test/fairness/pace-recovery.test.ts` checks it
 * and `npm run bench:pace` measures it: a receiver that answers 429 (no Retry-After) to every
 * request for the first `outageMs`, then takes `acceptedPerSecond` in any second (429 above that),
 * while a producer posts `events` at `postedPerSecond` to one endpoint with `pacing: "adaptive"`
 * and 4 slots.
 */
export interface PaceRecoveryOptions {
  events: number;
  postedPerSecond: number;
  outageMs: number;
  acceptedPerSecond: number;
  /** How long every delivery may take to succeed, ms. */
  deadlineMs: number;
}

/** One answer of the receiver: when (its clock, epoch ms) and with what status. */
export interface PaceAnswer {
  at: number;
  status: number;
}

/** The endpoint's stored pace as sampled during the run (`perSecond` null: no rate bound, the policy's limits). */
export interface PaceSampleAt {
  at: number;
  perSecond: number | null;
  concurrency: number;
}

/** What one run saw: every answer, the pace over time, and the figures derived from them. */
export interface PaceRecoveryRun {
  answers: PaceAnswer[];
  paces: PaceSampleAt[];
  /** When the outage ended (the receiver's clock). */
  recoveredAt: number;
  /** Share of answers after the outage that were 429. */
  share429: number;
  /** Share of answers from 3 s after the outage on that were 429. */
  share429After3s: number;
  /** ms after the outage at which the receiver first accepted 95 % (and 60 %) of its rate in one second; null: never. */
  backAt95: number | null;
  backAt60: number | null;
  /** Most requests in any second after the outage. */
  maxPerSecond: number;
  /** 429s after the rate was back at 60 %: a relapse shows here. */
  total429Later: number;
  /** The stored pace's lowest rate after the outage (null: unbounded throughout). */
  lowestPaceAfter: number | null;
  /** The stored pace's lowest rate once the receiver had seen 95 % of its rate in a second (a relapse shows here; null: unbounded, or never back). */
  lowestPaceAfterBack: number | null;
  /** ms after the outage at which the stored pace first stood at or above `acceptedPerSecond` × 0.6 again (or had no bound); null: never. */
  paceBackAt60: number | null;
  line: string;
}

/** Posts the producer keeps open at most. */
const PRODUCER_IN_FLIGHT = 16;

/** The most answers (of `status`, or any) in a 1-s window starting at one of them, from `from` on. */
export function maxInSecond(answers: readonly PaceAnswer[], from: number, status?: number): number {
  const times = answers.filter((a) => a.at >= from && (status === undefined || a.status === status)).map((a) => a.at);
  let max = 0;
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[j]! <= times[i]! - 1000) j++;
    max = Math.max(max, i - j + 1);
  }
  return max;
}

/** The first time (ms after `from`) at which `atLeast` requests were accepted in the second before. */
export function firstSecondWith(answers: readonly PaceAnswer[], from: number, atLeast: number): number | null {
  const times = answers.filter((a) => a.at >= from && a.status === 200).map((a) => a.at);
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[j]! <= times[i]! - 1000) j++;
    if (i - j + 1 >= atLeast) return times[i]! - from;
  }
  return null;
}

/** Runs the scenario on `postern` (a sender running in it); the receiver is closed before it returns. */
export async function runPaceRecovery(postern: TestPostern, o: PaceRecoveryOptions): Promise<PaceRecoveryRun> {
  const answers: PaceAnswer[] = [];
  const accepted: number[] = [];
  let firstAt: number | null = null;
  const receiver: TestReceiver = await startReceiver((_req, _n, res) => {
    const now = Date.now();
    firstAt ??= now;
    let status = 200;
    if (now - firstAt < o.outageMs) status = 429;
    else {
      while (accepted.length > 0 && accepted[0]! <= now - 1000) accepted.shift();
      if (accepted.length >= o.acceptedPerSecond) status = 429;
      else accepted.push(now);
    }
    answers.push({ at: now, status });
    if (status === 200) return 200;
    res.statusCode = 429;
    res.end('slow down');
    return 'handled';
  });
  const paces: PaceSampleAt[] = [];
  let sampling = true;
  try {
    const { apiKey, id: orgId } = await postern.createOrg();
    const endpoint = await postern.createEndpoint(apiKey, {
      url: receiver.url,
      policy: fastPolicy(60, 500, { pacing: 'adaptive', retryAfter: 'ignore', concurrency: { perEndpoint: 4, perOrg: 20 } }),
    });
    const sampler = (async () => {
      while (sampling) {
        const e = await postern.store.endpoints.get(orgId, endpoint.id);
        paces.push({ at: Date.now(), perSecond: e?.pace?.perSecond ?? null, concurrency: e?.pace?.concurrency ?? 4 });
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    // The producer posts at its rate: each event is due at its own time (the load of the scenario,
    // not a wait for something to happen), with at most PRODUCER_IN_FLIGHT posts open at once, so a
    // busy machine that cannot keep the rate posts later rather than piling up connections.
    const ids: string[] = [];
    const postStart = Date.now();
    const inFlight = new Set<Promise<void>>();
    for (let i = 0; i < o.events; i++) {
      const dueAt = postStart + (i * 1000) / o.postedPerSecond;
      if (dueAt > Date.now()) await new Promise((r) => setTimeout(r, dueAt - Date.now()));
      while (inFlight.size >= PRODUCER_IN_FLIGHT) await Promise.race(inFlight);
      // As a producer should: each event with an idempotency key, sent again when the connection
      // broke before an answer (a loaded machine can reset a keep-alive socket), never twice.
      const post: Promise<void> = postOnce(() => postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'pace.recovery', data: { i }, idempotencyKey: `pace-${i}` } }), postern.baseUrl).then((r) => {
        if (r.status !== 202) throw new Error(`event ${i}: ${r.status} ${JSON.stringify(r.body)}`);
        ids.push(r.body.deliveries[0].id as string);
      }).finally(() => inFlight.delete(post));
      inFlight.add(post);
    }
    await Promise.all(inFlight);
    await waitUntil('every delivery succeeded', async () => (await postern.store.deliveries.getMany(orgId, ids)).every((d) => d.status === 'succeeded'), o.deadlineMs, 200);
    sampling = false;
    await sampler;
  } finally {
    sampling = false;
    await receiver.close();
  }

  const recoveredAt = firstAt! + o.outageMs;
  const after = answers.filter((a) => a.at >= recoveredAt);
  const share429 = after.filter((a) => a.status === 429).length / Math.max(1, after.length);
  const after3s = answers.filter((a) => a.at >= recoveredAt + 3000);
  const share429After3s = after3s.filter((a) => a.status === 429).length / Math.max(1, after3s.length);
  const backAt95 = firstSecondWith(answers, recoveredAt, Math.round(o.acceptedPerSecond * 0.95));
  const backAt60 = firstSecondWith(answers, recoveredAt, Math.round(o.acceptedPerSecond * 0.6));
  const maxPerSecond = maxInSecond(answers, recoveredAt);
  const total429Later = backAt60 === null ? Infinity : answers.filter((a) => a.at >= recoveredAt + backAt60 && a.status === 429).length;
  const pacesAfter = paces.filter((p) => p.at >= recoveredAt);
  const lowest = (ps: readonly PaceSampleAt[]) => {
    const r = Math.min(...ps.map((p) => p.perSecond ?? Infinity));
    return r === Infinity ? null : r;
  };
  const lowestPaceAfter = lowest(pacesAfter);
  const lowestPaceAfterBack = backAt95 === null ? null : lowest(paces.filter((p) => p.at >= recoveredAt + backAt95));
  const back = pacesAfter.find((p) => p.perSecond === null || p.perSecond >= o.acceptedPerSecond * 0.6);
  const paceBackAt60 = back ? back.at - recoveredAt : null;
  const s = (ms: number | null) => (ms === null ? 'never' : `${(ms / 1000).toFixed(1)} s`);
  const line =
    `pace recovery — ${answers.length} requests in ${((answers[answers.length - 1]!.at - firstAt!) / 1000).toFixed(1)} s; after the ${o.outageMs / 1000}-s outage: ` +
    `429 share ${(100 * share429).toFixed(1)} % (${(100 * share429After3s).toFixed(1)} % from 3 s on), back at 95 % of the receiver's rate after ${s(backAt95)}, at 60 % after ${s(backAt60)} (stored pace at 60 % after ${s(paceBackAt60)}), ` +
    `max ${maxPerSecond} requests in a second, then ${total429Later} 429s in all; lowest stored pace once back ${lowestPaceAfterBack ?? 'unbounded'}/s`;
  return { answers, paces, recoveredAt, share429, share429After3s, lowestPaceAfterBack, backAt95, backAt60, maxPerSecond, total429Later, lowestPaceAfter, paceBackAt60, line };
}

/**
 * Whether `fetch` failed without an answer (`TypeError: fetch failed`, e.g. a kept-alive socket
 * the server closed as it was reused). By name, with no `instanceof` at all: fetch throws an error
 * of Node's own realm, which in a Jest test is neither the test realm's TypeError nor its Object.
 */
export function noAnswer(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as Error).name === 'TypeError' && (err as Error).message === 'fetch failed';
}

/**
 * Calls `send` again (up to 10 times) while it fails without an answer (a reset connection, not an
 * HTTP error), each time once ingest answers its readiness check again on a new connection.
 */
async function postOnce<T>(send: () => Promise<T>, baseUrl: string): Promise<T> {
  for (let tries = 1; ; tries++) {
    try {
      return await send();
    } catch (err) {
      if (tries >= 10 || !noAnswer(err)) throw err;
      await waitUntil('ingest ready again', () => fetch(`${baseUrl}/readyz`, { headers: { connection: 'close' } }).then((r) => r.ok, () => false), 10_000);
    }
  }
}

/**
 * Fairness benchmark (issue 5, "no head-of-line blocking"): `npm run bench:fairness`.
 *
 * Run A: FAST_ENDPOINTS endpoints of one org receive a steady stream of events (RATE_PER_S for
 * DURATION_S, through ingest's API), each answering 200 at once. Run B: the same, plus one endpoint
 * of the same org that never answers (every attempt ends at its policy's 2 s timeout) with
 * SLOW_BACKLOG deliveries queued for it before the stream starts. Measured per run: first-attempt
 * latency of the fast endpoints' deliveries, from the event's acceptance (the envelope's
 * `timestamp`, set by ingest) to the request's arrival at the receiver: p50, p99, max. Pass: run
 * B's p99 within 2× of run A's, and every fast delivery arrived.
 *
 * Run L (issue 13): the same as A, plus one endpoint of the same org limited to 20 requests a
 * second (`rateLimit: {perSecond: 20}`, answering 200 at once) with LIMITED_BACKLOG deliveries
 * queued for it before the stream starts, so it stays at its limit throughout: its deliveries wait
 * for their turn, and must not hold up the unlimited ones. Pass: run L's p99 within 2× of run A's.
 *
 * Run B queues its backlog with ingest's own `acceptEvent` (in this process, so 5,000 events take
 * seconds, not minutes through HTTP) and starts the stream once the sender has taken every backlog
 * job off the wait list (parked them). Run C (`TRANSIENT=1`, off by default) starts the stream
 * the moment the backlog is queued, so the sender's first pass over it is measured too.
 *
 * Ingest and one sender run as child processes against the local Redis (REDIS_URL), each run on its
 * own key prefix, removed afterwards. Results are printed and written to bench-results/fairness.json.
 * Settings come from the environment: RATE_PER_S (60), DURATION_S (20), ROUNDS (2: A and B run
 * alternately, twice, and are pooled), FAST_ENDPOINTS (20), SLOW_BACKLOG (5000), LIMITED_BACKLOG (1000),
 * LIMITED_PER_S (20), SENDER_CONCURRENCY (50),
 * PARK_SAFETY_DELAY_MS (15000, see below).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import { createIdFactory } from '@postern/shared';
import { createDeliveryQueues, createRedisConnection, createStore } from '@postern/store';
import { acceptEvent, type AppDeps } from '@postern/ingest';
import { apiClient, type ApiClient } from '../test/support/api-client.js';
import { deleteByPrefix, TEST_ADMIN_TOKEN } from '../test/support/postern.js';
import { killAllApps, spawnIngest, spawnSender, waitForSenders, type AppProcess } from '../test/faults/support/app-process.js';
import { Postern, type PolicyInput } from '@postern/client';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const RATE_PER_S = Number(process.env.RATE_PER_S ?? 60);
const DURATION_S = Number(process.env.DURATION_S ?? 20);
const ROUNDS = Number(process.env.ROUNDS ?? 2);
const FAST_ENDPOINTS = Number(process.env.FAST_ENDPOINTS ?? 20);
const SLOW_BACKLOG = Number(process.env.SLOW_BACKLOG ?? 5000);
const LIMITED_BACKLOG = Number(process.env.LIMITED_BACKLOG ?? 1000);
const LIMITED_PER_S = Number(process.env.LIMITED_PER_S ?? 20);
const SENDER_CONCURRENCY = Number(process.env.SENDER_CONCURRENCY ?? 50);
const TRANSIENT = process.env.TRANSIENT === '1';
const SLOW_TIMEOUT_MS = 2000;
/**
 * The sender's safety delay for parked deliveries. The default (60 s) would first bring the backlog
 * back after the stream has ended; 15 s makes the whole backlog cycle through the sender during
 * the stream, at about 4× the rate of a long-parked backlog under the default.
 */
const PARK_SAFETY_DELAY_MS = Number(process.env.PARK_SAFETY_DELAY_MS ?? 15_000);
/** Parallel requests of the steady stream at most; ingest's queueing then shows as producer lag, not as errors. */
const STREAM_LANES = 16;

/** Both kinds of endpoint: 4 per endpoint, 20 per org; the fast ones never fail, the slow one always times out. */
const policy = (timeoutMs: number, extra: { rateLimit?: { perSecond: number } } = {}): PolicyInput => ({
  maxAttempts: 3,
  schedule: { kind: 'fixed', waitsMs: [1000, 1000] },
  jitterRatio: 0,
  timeout: { ms: timeoutMs, measures: 'whole-response' },
  breaker: null,
  concurrency: { perEndpoint: 4, perOrg: 20 },
  ...extra,
});

/** The backlog endpoint of a run: `slow` never answers; `limited` answers at once but takes LIMITED_PER_S a second. */
type BacklogKind = 'slow' | 'limited';

interface Receivers {
  base: string;
  /** First-attempt latencies of fast deliveries, ms. */
  latencies: number[];
  readonly slowRequests: number;
  /** Arrival times at `/limited`, ms. */
  limitedArrivals: number[];
  close(): Promise<void>;
}

/** One HTTP server: `/fast/<n>` answers 200 at once and records latency; `/slow` never answers. */
async function startReceivers(): Promise<Receivers> {
  const latencies: number[] = [];
  const limitedArrivals: number[] = [];
  let slowRequests = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const arrivedAt = Date.now();
    if (req.url?.startsWith('/slow')) {
      // Held until Postern gives up and closes the connection.
      slowRequests += 1;
      req.resume();
      return;
    }
    if (req.url?.startsWith('/limited')) {
      limitedArrivals.push(arrivedAt);
      req.resume();
      req.on('end', () => res.end('ok'));
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.headers['webhook-attempt'] === '1') {
        const { timestamp } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { timestamp: string };
        latencies.push(arrivedAt - Date.parse(timestamp));
      }
      res.end('ok');
    });
  });
  server.keepAliveTimeout = 60_000;
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    latencies,
    limitedArrivals,
    get slowRequests() {
      return slowRequests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

async function must(api: ApiClient, method: string, path: string, key: string, body: unknown, status: number): Promise<any> {
  const r = await api(method, path, { key, body }).catch((err: Error) => {
    throw new Error(`${method} ${path}: ${err.message} (${String((err.cause as Error | undefined)?.message)})`);
  });
  if (r.status !== status) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body;
}

/**
 * Posts RATE_PER_S events a second for DURATION_S, round robin over the fast endpoints' types.
 * Returns the achieved rate and the API's answer times (202), sorted.
 */
async function steadyStream(api: ApiClient, key: string): Promise<{ total: number; achievedPerS: number; answerMs: number[] }> {
  const total = RATE_PER_S * DURATION_S;
  const started = Date.now();
  const answerMs: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: STREAM_LANES }, async () => {
      while (next < total) {
        const i = next++;
        const wait = started + (i * 1000) / RATE_PER_S - Date.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const sentAt = Date.now();
        await must(api, 'POST', '/v1/events', key, { type: `fast.${i % FAST_ENDPOINTS}`, data: { i } }, 202);
        answerMs.push(Date.now() - sentAt);
      }
    }),
  );
  return { total, achievedPerS: Math.round(total / ((Date.now() - started) / 1000)), answerMs: answerMs.sort((x, y) => x - y) };
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

interface RunResult {
  name: string;
  slowBacklog: number;
  fastDeliveries: number;
  streamPerS: number;
  /** How long ingest took to answer 202, p50 and p99: the part of the latency before the sender. */
  acceptP50Ms: number;
  acceptP99Ms: number;
  /** Load average over the last minute when the stream ended (the machine may be shared). */
  loadAverage1m: number;
  firstAttemptsMeasured: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  slowRequestsDuringStream: number;
  /** Run L: requests the limited endpoint got during the stream, and the most in any 1-s window. */
  limitedRequestsDuringStream: number | null;
  limitedMaxPerSecond: number | null;
  /** Time to queue the backlog, and then for the sender to take all of it off the wait list. */
  backlogQueuedMs: number | null;
  backlogParkedMs: number | null;
}

/** The most of `times` (ms) in any window [t, t + 1000). */
function maxInOneSecond(times: readonly number[]): number {
  const sorted = [...times].sort((a, b) => a - b);
  let max = 0;
  for (let start = 0, end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! >= 1000) start++;
    max = Math.max(max, end - start + 1);
  }
  return max;
}

async function run(name: string, slowBacklog: number, waitForParking: boolean, kind: BacklogKind = 'slow'): Promise<{ result: RunResult; latencies: number[] }> {
  const prefix = `bench:${randomBytes(4).toString('hex')}`;
  const receivers = await startReceivers();
  const redis = createRedisConnection(REDIS_URL, 'worker');
  const store = createStore({ redis, prefix });
  const queues = createDeliveryQueues(redis, store.keys);
  const queue = queues.partitions[0]!;
  const apps: AppProcess[] = [];
  try {
    const env = {
      REDIS_URL,
      REDIS_PREFIX: prefix,
      SENDER_CONCURRENCY: String(SENDER_CONCURRENCY),
      RECONCILE_INTERVAL_MS: '0',
      JANITOR_INTERVAL_MS: '0',
      PARK_SAFETY_DELAY_MS: String(PARK_SAFETY_DELAY_MS),
    };
    const ingest = await spawnIngest(env);
    apps.push(ingest);
    const api = apiClient(ingest.baseUrl);
    const org = await new Postern({ baseUrl: ingest.baseUrl, adminToken: TEST_ADMIN_TOKEN }).orgs.create({ name: 'bench' });
    const key = org.apiKey;
    const client = new Postern({ baseUrl: ingest.baseUrl, apiKey: key });
    for (let i = 0; i < FAST_ENDPOINTS; i++) {
      await client.endpoints.create({ url: `${receivers.base}/fast/${i}`, eventTypes: [`fast.${i}`], policy: policy(10_000) });
    }
    if (slowBacklog > 0 && kind === 'slow') await client.endpoints.create({ url: `${receivers.base}/slow`, eventTypes: ['slow.backlog'], policy: policy(SLOW_TIMEOUT_MS) });
    if (slowBacklog > 0 && kind === 'limited') {
      await client.endpoints.create({ url: `${receivers.base}/limited`, eventTypes: ['slow.backlog'], policy: policy(10_000, { rateLimit: { perSecond: LIMITED_PER_S } }) });
    }

    const sender = spawnSender(env);
    apps.push(sender);
    await waitForSenders(queue, 1, [sender]);

    let backlogQueuedMs: number | null = null;
    let backlogParkedMs: number | null = null;
    if (slowBacklog > 0) {
      const deps = { store, queues, clock: { now: () => Date.now() }, ids: createIdFactory(), logger: pino({ level: 'silent' }) } as unknown as AppDeps;
      const t = Date.now();
      let n = 0;
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          while (n < slowBacklog) {
            n += 1;
            await acceptEvent(deps, { orgId: org.id, type: 'slow.backlog', dataJson: `{"n":${n}}`, idempotencyKey: null });
          }
        }),
      );
      backlogQueuedMs = Date.now() - t;
      if (waitForParking) {
        while ((await queue.getWaitingCount()) > 0) await new Promise((r) => setTimeout(r, 100));
        backlogParkedMs = Date.now() - t - backlogQueuedMs;
      }
    }
    const slowBefore = receivers.slowRequests;
    const streamStart = Date.now();
    const { total, achievedPerS, answerMs } = await steadyStream(api, key);
    const streamEnd = Date.now();
    const loadAverage1m = Number(loadavg()[0]!.toFixed(2));
    const drainBy = Date.now() + 30_000;
    while (receivers.latencies.length < total && Date.now() < drainBy) await new Promise((r) => setTimeout(r, 50));
    const slowRequestsDuringStream = receivers.slowRequests - slowBefore;
    const sorted = [...receivers.latencies].sort((a, b) => a - b);
    if (sorted.length < total) console.error(`${name}: only ${sorted.length} of ${total} fast deliveries arrived within 30 s of the stream's end`);
    const result: RunResult = {
      name,
      slowBacklog,
      fastDeliveries: total,
      streamPerS: achievedPerS,
      acceptP50Ms: percentile(answerMs, 50),
      acceptP99Ms: percentile(answerMs, 99),
      loadAverage1m,
      firstAttemptsMeasured: sorted.length,
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      maxMs: sorted[sorted.length - 1] ?? NaN,
      slowRequestsDuringStream,
      limitedRequestsDuringStream: kind === 'limited' ? receivers.limitedArrivals.filter((t) => t >= streamStart && t <= streamEnd).length : null,
      limitedMaxPerSecond: kind === 'limited' ? maxInOneSecond(receivers.limitedArrivals) : null,
      backlogQueuedMs,
      backlogParkedMs,
    };
    return { result, latencies: sorted };
  } catch (err) {
    for (const app of apps) console.error(app.output());
    throw err;
  } finally {
    await killAllApps();
    await receivers.close();
    await queue.obliterate({ force: true }).catch(() => undefined);
    await queue.close();
    await deleteByPrefix(redis, prefix);
    await redis.quit();
  }
}

function report({ result: r }: { result: RunResult }): void {
  const reached =
    r.limitedRequestsDuringStream !== null
      ? `${r.limitedRequestsDuringStream} requests reached the limited endpoint during the stream (at most ${r.limitedMaxPerSecond} in any second)`
      : `${r.slowRequestsDuringStream} requests reached the slow endpoint during the stream`;
  const backlog = r.slowBacklog > 0 ? `; backlog of ${r.slowBacklog} queued in ${r.backlogQueuedMs} ms${r.backlogParkedMs !== null ? `, parked ${r.backlogParkedMs} ms later` : ''}, ${reached}` : '';
  console.log(`${r.name}: p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms, max ${r.maxMs} ms (${r.firstAttemptsMeasured}/${r.fastDeliveries} at ${r.streamPerS}/s; ingest answered in p50 ${r.acceptP50Ms} ms, p99 ${r.acceptP99Ms} ms; load ${r.loadAverage1m})${backlog}`);
}

const settings = { RATE_PER_S, DURATION_S, ROUNDS, FAST_ENDPOINTS, SLOW_BACKLOG, LIMITED_BACKLOG, LIMITED_PER_S, SENDER_CONCURRENCY, SLOW_TIMEOUT_MS, PARK_SAFETY_DELAY_MS };
console.log(`fairness benchmark: ${JSON.stringify(settings)}`);
// A and B alternate, so a machine whose load changes during the benchmark weighs on both alike.
const runs: RunResult[] = [];
const pooled = { a: [] as number[], b: [] as number[], l: [] as number[] };
for (let round = 1; round <= ROUNDS; round++) {
  const a = await run(`A${round}: fast endpoints only`, 0, true);
  report(a);
  const b = await run(`B${round}: plus one slow endpoint with a parked backlog`, SLOW_BACKLOG, true);
  report(b);
  const l = await run(`L${round}: plus one endpoint limited to ${LIMITED_PER_S}/s with a backlog`, LIMITED_BACKLOG, true, 'limited');
  report(l);
  runs.push(a.result, b.result, l.result);
  pooled.a.push(...a.latencies);
  pooled.b.push(...b.latencies);
  pooled.l.push(...l.latencies);
}
if (TRANSIENT) {
  const c = await run('C: plus one slow endpoint, stream starts as the backlog is queued', SLOW_BACKLOG, false);
  report(c);
  runs.push(c.result);
}
const summary = (latencies: number[]) => {
  const sorted = [...latencies].sort((x, y) => x - y);
  return { deliveries: sorted.length, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), maxMs: sorted[sorted.length - 1] ?? NaN };
};
const all = { a: summary(pooled.a), b: summary(pooled.b), l: summary(pooled.l) };
const p99Ratio = all.b.p99Ms / all.a.p99Ms;
const limitedP99Ratio = all.l.p99Ms / all.a.p99Ms;
const allArrived = runs.every((r) => r.firstAttemptsMeasured === r.fastDeliveries);
const pass = p99Ratio <= 2 && limitedP99Ratio <= 2 && allArrived;
console.log(
  `all A runs: p50 ${all.a.p50Ms} ms, p99 ${all.a.p99Ms} ms (${all.a.deliveries} deliveries); all B runs: p50 ${all.b.p50Ms} ms, p99 ${all.b.p99Ms} ms (${all.b.deliveries}); ` +
    `all L runs: p50 ${all.l.p50Ms} ms, p99 ${all.l.p99Ms} ms (${all.l.deliveries})`,
);
console.log(`p99 ratio B/A: ${p99Ratio.toFixed(2)}, L/A: ${limitedP99Ratio.toFixed(2)} (bound 2.00 each)${allArrived ? '' : '; some fast deliveries never arrived'}: ${pass ? 'PASS' : 'FAIL'}`);
mkdirSync('bench-results', { recursive: true });
writeFileSync('bench-results/fairness.json', `${JSON.stringify({ at: new Date().toISOString(), settings, runs, pooled: all, p99Ratio, limitedP99Ratio, pass }, null, 2)}\n`);
console.log('written: bench-results/fairness.json');
process.exit(pass ? 0 : 1);

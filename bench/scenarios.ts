/**
 * The measurements of `npm run bench` (bench/run.ts). Each takes what it runs against and returns
 * plain numbers; none prints.
 */
import { randomBytes } from 'node:crypto';
import { commandCalls } from './resource-cost.js';
import { Agent } from 'node:http';
import { Queue, Worker } from 'bullmq';
import { got } from 'got';
import { pino } from 'pino';
import { createIdFactory } from '@postern/shared';
import { createDeliveryQueue, createRedisConnection, createStore, deliveryJobOptions, DELIVERY_QUEUE_NAME, type KeySchema } from '@postern/store';
import { acceptEvent, type AppDeps } from '@postern/ingest';
import { Postern, type CreateEndpointBody, type PolicyInput } from '@postern/client';
import { BENCH_ADMIN_TOKEN, jsonClient, percentile, pollUntil, sampleRss, type BenchRedis, type PosternProcesses, type ReceiverProcess } from './bench-support.js';

/** An envelope like the ones Postern sends, for the bare clients. */
const SAMPLE_BODY = JSON.stringify({ id: 'evt_01BENCH00000000000000000000', type: 'bench.event', timestamp: new Date().toISOString(), data: { n: 12345, note: 'benchmark' } });

/** Throughput of one run. */
export interface Throughput {
  count: number;
  seconds: number;
  perSecond: number;
}

/**
 * (1) Bare BullMQ: `addBulk` of `jobs` jobs (Postern's job options) and a no-op worker at
 * `concurrency`. Also counts the Redis commands BullMQ itself spends per job (adding it, then
 * fetching and completing it; inside its Lua scripts included): the floor under Postern's own
 * commands per delivery.
 */
export async function bareBullmq(redisUrl: string, opts: { jobs: number; concurrency: number }): Promise<Throughput & { redisCommandsPerJob: number }> {
  const prefix = `bench-bare:${randomBytes(4).toString('hex')}`;
  const connection = createRedisConnection(redisUrl, 'worker');
  const queue = new Queue(DELIVERY_QUEUE_NAME, { connection, prefix });
  let done = 0;
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const worker = new Worker(DELIVERY_QUEUE_NAME, async () => 'done', { connection, prefix, concurrency: opts.concurrency });
  worker.on('completed', () => {
    if (++done === opts.jobs) finish();
  });
  await worker.waitUntilReady();
  const callsBefore = await commandCalls(connection);
  const started = performance.now();
  for (let i = 0; i < opts.jobs; i += 1000) {
    const chunk = Array.from({ length: Math.min(1000, opts.jobs - i) }, (_, j) => {
      const deliveryId = `dlv_bench${String(i + j).padStart(8, '0')}`;
      return { name: 'deliver', data: { v: 1 as const, deliveryId }, opts: deliveryJobOptions(deliveryId) };
    });
    await queue.addBulk(chunk);
  }
  await finished;
  const seconds = (performance.now() - started) / 1000;
  const callsAfter = await commandCalls(connection);
  // Less the two INFO calls of this count.
  let commands = -2;
  for (const [name, calls] of callsAfter) commands += calls - (callsBefore.get(name) ?? 0);
  await worker.close();
  await queue.obliterate({ force: true });
  await queue.close();
  await connection.quit();
  return { count: opts.jobs, seconds, perSecond: opts.jobs / seconds, redisCommandsPerJob: Math.round((commands / opts.jobs) * 10) / 10 };
}

/** (2) Bare got: `requests` POSTs of an envelope-sized body to the receiver, `concurrency` at once, one keep-alive agent. */
export async function bareGot(receiver: ReceiverProcess, opts: { requests: number; concurrency: number }): Promise<Throughput> {
  const agent = new Agent({ keepAlive: true, maxSockets: opts.concurrency });
  const client = got.extend({ agent: { http: agent }, retry: { limit: 0 }, throwHttpErrors: false, decompress: false, followRedirect: false, timeout: { request: 15_000 } });
  const headers = { 'content-type': 'application/json', 'user-agent': 'Postern/bench', 'webhook-id': 'evt_01BENCH', 'webhook-timestamp': '1796000000', 'webhook-signature': `v1,${randomBytes(32).toString('base64')}` };
  await receiver.reset();
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (next < opts.requests) {
        next++;
        const res = await client.post(`${receiver.base}/ok`, { body: SAMPLE_BODY, headers });
        if (res.statusCode !== 200) throw new Error(`receiver answered ${res.statusCode}`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  agent.destroy();
  return { count: opts.requests, seconds, perSecond: opts.requests / seconds };
}

/** An org with its API key and endpoints, created through the API. */
export interface BenchOrg {
  orgId: string;
  apiKey: string;
  endpointIds: string[];
}

/**
 * Creates `orgs` orgs with `endpointsPerOrg` endpoints each, all pointing at `url`, each with
 * `request` (static headers, auth, proxy; README "Request settings") when given.
 */
export async function createOrgs(apiBase: string, opts: { orgs: number; endpointsPerOrg: number; url: string; policy: PolicyInput; request?: Pick<CreateEndpointBody, 'headers' | 'auth' | 'proxy' | 'transformation'> }): Promise<BenchOrg[]> {
  // Set-up goes through @postern/client; the producers below keep their own lighter keep-alive client.
  const admin = new Postern({ baseUrl: apiBase, adminToken: BENCH_ADMIN_TOKEN });
  const out: BenchOrg[] = [];
  for (let o = 0; o < opts.orgs; o++) {
    const org = await admin.orgs.create({ name: `bench-${o}` });
    const client = new Postern({ baseUrl: apiBase, apiKey: org.apiKey });
    const endpointIds: string[] = [];
    for (let e = 0; e < opts.endpointsPerOrg; e++) endpointIds.push((await client.endpoints.create({ url: opts.url, policy: opts.policy, ...opts.request })).id);
    out.push({ orgId: org.id, apiKey: org.apiKey, endpointIds });
  }
  return out;
}

/** Postern end to end, as the receiver saw it. */
export interface EndToEnd {
  events: number;
  deliveries: number;
  seconds: number;
  deliveriesPerSecond: number;
  eventsAcceptedPerSecond: number;
  latencyMs: { p50: number; p99: number; max: number };
  peakRssBytes: { ingest: number; sender: number };
  /** Deliveries that had not arrived when the run gave up waiting (0 in a good run). */
  missing: number;
}

async function finishRun(p: PosternProcesses, receiver: ReceiverProcess, run: { started: number; events: number; deliveries: number; producingSeconds: number; rss: ReturnType<typeof sampleRss> }, drainTimeoutMs: number): Promise<EndToEnd> {
  await pollUntil(async () => (await receiver.stats()).count >= run.deliveries, drainTimeoutMs, 100);
  const stats = await receiver.stats();
  const peak = run.rss.stop();
  const seconds = Math.max(0.001, (stats.lastAtMs - run.started) / 1000);
  void p;
  return {
    events: run.events,
    deliveries: stats.count,
    seconds,
    deliveriesPerSecond: stats.count / seconds,
    eventsAcceptedPerSecond: run.events / run.producingSeconds,
    latencyMs: { p50: percentile(stats.latenciesMs, 50), p99: percentile(stats.latenciesMs, 99), max: percentile(stats.latenciesMs, 100) },
    peakRssBytes: { ingest: peak.ingest ?? 0, sender: peak.sender ?? 0 },
    missing: Math.max(0, run.deliveries - stats.count),
  };
}

/**
 * Warms ingest and the sender up (V8's optimiser, tsx's first compiles, connection pools): POSTs
 * `events` events to `org` with `producers` clients, then waits until the receiver has them all.
 * Counted, not timed, so a busy machine warms up as much as a quiet one.
 */
export async function warmUp(p: PosternProcesses, receiver: ReceiverProcess, org: BenchOrg, opts: { events: number; producers: number }): Promise<void> {
  const api = jsonClient(p.apiBase, opts.producers);
  await receiver.reset();
  let next = 0;
  await Promise.all(
    Array.from({ length: opts.producers }, async () => {
      while (next < opts.events) {
        next++;
        const r = await api.post('/v1/events', { type: 'bench.event', data: { n: next, note: 'warm-up' } }, org.apiKey);
        if (r.status !== 202) throw new Error(`POST /v1/events: ${r.status}`);
      }
    }),
  );
  api.close();
  if (!(await pollUntil(async () => (await receiver.stats()).count >= opts.events, 120_000, 100))) throw new Error('warm-up deliveries did not all arrive within 120 s');
}

/**
 * (3) Postern end to end at full speed: `producers` clients POST events to the orgs in turn for
 * `durationS`, holding back while more than `maxBacklog` accepted deliveries have not arrived
 * (so the figure is the pipeline's pace, not a queue filling up); then the run drains.
 */
export async function posternThroughput(p: PosternProcesses, receiver: ReceiverProcess, orgs: BenchOrg[], opts: { durationS: number; producers: number; maxBacklog: number }): Promise<EndToEnd> {
  const api = jsonClient(p.apiBase, opts.producers);
  await receiver.reset();
  let received = 0;
  const poller = setInterval(() => {
    void receiver.stats().then((s) => (received = s.count), () => undefined);
  }, 50);
  const rss = sampleRss({ ingest: p.ingest.child.pid, sender: p.sender?.child.pid });
  const started = Date.now();
  const until = started + opts.durationS * 1000;
  let events = 0;
  let deliveries = 0;
  let turn = 0;
  await Promise.all(
    Array.from({ length: opts.producers }, async () => {
      while (Date.now() < until) {
        if (deliveries - received > opts.maxBacklog) {
          await new Promise((r) => setTimeout(r, 5));
          continue;
        }
        const org = orgs[turn++ % orgs.length]!;
        const r = await api.post('/v1/events', { type: 'bench.event', data: { n: events, note: 'benchmark' } }, org.apiKey);
        if (r.status !== 202) throw new Error(`POST /v1/events: ${r.status} ${JSON.stringify(r.body)}`);
        events++;
        deliveries += (r.body.deliveries as unknown[]).length;
      }
    }),
  );
  const producingSeconds = (Date.now() - started) / 1000;
  clearInterval(poller);
  api.close();
  return finishRun(p, receiver, { started, events, deliveries, producingSeconds, rss }, 120_000);
}

/**
 * (3) Postern end to end at a fixed offered rate (open loop): latency when not saturated.
 * `offeredPerSecond` is the rate the events actually went out at: below the target when ingest
 * could not keep up (requests then wait in the client's queue).
 */
export async function posternAtRate(p: PosternProcesses, receiver: ReceiverProcess, org: BenchOrg, opts: { eventsPerSecond: number; durationS: number }): Promise<EndToEnd & { offeredPerSecond: number }> {
  const api = jsonClient(p.apiBase, 256);
  await receiver.reset();
  const rss = sampleRss({ ingest: p.ingest.child.pid, sender: p.sender?.child.pid });
  const started = Date.now();
  const total = Math.round(opts.eventsPerSecond * opts.durationS);
  let sent = 0;
  let deliveries = 0;
  let failures = 0;
  // Why events were refused: an HTTP status, or the client's error code.
  const refusals = new Map<string, number>();
  const refused = (reason: string) => {
    failures++;
    refusals.set(reason, (refusals.get(reason) ?? 0) + 1);
  };
  // A kept-alive connection that ingest closed as it was being reused fails before any answer: the
  // producer sends once more (the event carries an idempotency key, so that is safe), as any HTTP
  // client with retries would.
  const post = (body: unknown) =>
    api.post('/v1/events', body, org.apiKey).catch((err: { code?: string }) => {
      if (err.code === 'ECONNRESET' || err.code === 'EPIPE') return api.post('/v1/events', body, org.apiKey);
      throw err;
    });
  const inFlight = new Set<Promise<void>>();
  // Every 10 ms, whatever is due by now: the offered rate does not depend on answers.
  while (sent < total) {
    const due = Math.min(total, Math.floor(((Date.now() - started) / 1000) * opts.eventsPerSecond));
    while (sent < due) {
      sent++;
      const req = post({ type: 'bench.event', data: { n: sent, note: 'benchmark' }, idempotencyKey: `bench-${started}-${sent}` })
        .then((r) => {
          if (r.status === 202) deliveries += (r.body.deliveries as unknown[]).length;
          else refused(`HTTP ${r.status}`);
        }, (err: { code?: string }) => refused(err.code ?? 'error'));
      inFlight.add(req);
      void req.finally(() => inFlight.delete(req));
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  await Promise.all(inFlight);
  const producingSeconds = (Date.now() - started) / 1000;
  api.close();
  if (failures > 0) throw new Error(`${failures} events were refused at ${opts.eventsPerSecond}/s (${[...refusals].map(([why, n]) => `${why}: ${n}`).join(', ')})`);
  const result = await finishRun(p, receiver, { started, events: sent, deliveries, producingSeconds, rss }, 120_000);
  return { ...result, offeredPerSecond: sent / producingSeconds };
}

/** Redis memory held per pending delivery. */
export interface PendingMemory {
  deliveries: number;
  /** `used_memory` growth per delivery, bytes. */
  usedMemoryPerDelivery: number;
  /** Sum of `MEMORY USAGE` of the prefix's keys, per delivery, bytes (robust to other Redis users). */
  keyBytesPerDelivery: number;
  /** The envelope (the payload as sent) of each event, bytes: subtracted below. */
  envelopeBytes: number;
  /** `usedMemoryPerDelivery` minus the envelope: what Postern itself keeps per pending delivery. */
  perDeliveryExcludingPayload: number;
}

function envelopeSize(dataJson: string): number {
  return Buffer.byteLength(JSON.stringify({ id: 'evt_01M8MWTT35T7KNKQ9GMQVFSE1D', type: 'bench.event', timestamp: new Date().toISOString(), data: JSON.parse(dataJson) }));
}

/**
 * Redis memory per pending delivery: ingest (no sender running) accepts `events` events for one
 * endpoint over HTTP, each a queued delivery; memory is read before and after.
 */
export async function pendingMemoryViaApi(redis: BenchRedis, p: PosternProcesses, org: BenchOrg, opts: { events: number; producers: number; keySum: () => Promise<number> }): Promise<PendingMemory> {
  const api = jsonClient(p.apiBase, opts.producers);
  const before = await redis.usedMemory();
  const keysBefore = await opts.keySum();
  let next = 0;
  const dataJson = '{"n":12345,"note":"benchmark"}';
  await Promise.all(
    Array.from({ length: opts.producers }, async () => {
      while (next < opts.events) {
        next++;
        const r = await api.post('/v1/events', { type: 'bench.event', data: JSON.parse(dataJson) }, org.apiKey);
        if (r.status !== 202) throw new Error(`POST /v1/events: ${r.status}`);
      }
    }),
  );
  api.close();
  const after = await redis.usedMemory();
  const keysAfter = await opts.keySum();
  const envelopeBytes = envelopeSize(dataJson);
  const usedMemoryPerDelivery = (after - before) / opts.events;
  return { deliveries: opts.events, usedMemoryPerDelivery, keyBytesPerDelivery: (keysAfter - keysBefore) / opts.events, envelopeBytes, perDeliveryExcludingPayload: usedMemoryPerDelivery - envelopeBytes };
}

/** The 100k scale point. */
export interface ScalePoint extends PendingMemory {
  delayedJobs: number;
  writeSeconds: number;
  /** How late retries fired while the deliveries above were pending, ms after their due time. */
  retryLatenessMs: { samples: number; p50: number; max: number };
  /** Where the bytes of one pending delivery are, by key (MEMORY USAGE; shared sets per member), largest first. */
  breakdownBytesPerDelivery: Record<string, number>;
}

/**
 * Scale point: `pending` deliveries waiting for a retry an hour away (written through ingest's own
 * `acceptEvent`, with the job delayed as a retry would be), then short retries (a receiver that
 * answers 503 to attempt 1, a 2 s wait) whose second attempts are timed against their due time.
 */
export async function scalePoint(redis: BenchRedis, p: PosternProcesses, receiver: ReceiverProcess, opts: { pending: number; probes: number; keySum: () => Promise<number> }): Promise<ScalePoint> {
  const [parked] = await createOrgs(p.apiBase, { orgs: 1, endpointsPerOrg: 1, url: `${receiver.base}/ok`, policy: 'standard' });
  const [flaky] = await createOrgs(p.apiBase, {
    orgs: 1,
    endpointsPerOrg: 1,
    url: `${receiver.base}/flaky`,
    policy: { maxAttempts: 2, schedule: { kind: 'fixed', waitsMs: [2000] }, jitterRatio: 0, concurrency: { perEndpoint: 50, perOrg: 50 } },
  });
  const connection = createRedisConnection(redis.url, 'worker');
  await connection.ping();
  const store = createStore({ redis: connection, prefix: p.prefix });
  const queue = createDeliveryQueue(connection, store.keys.queuePrefix(store.keys.partitionOf(parked!.orgId)));
  const HOUR_MS = 3_600_000;
  // acceptEvent queues through deps.queue.add (one job) or addBulk; here each job waits an hour, like a pending retry.
  const delayedQueue = {
    add: (name: string, data: unknown, opts?: object) => queue.add(name, data as never, { ...opts, delay: HOUR_MS }),
    addBulk: (jobs: { name: string; data: unknown; opts?: object }[]) => queue.addBulk(jobs.map((j) => ({ ...j, opts: { ...j.opts, delay: HOUR_MS } })) as never),
  };
  const deps = {
    redis: connection,
    store,
    queues: { forOrg: () => delayedQueue, partitions: [queue] } as unknown as AppDeps['queues'],
    clock: { now: () => Date.now() },
    ids: createIdFactory(),
    logger: pino({ level: 'silent' }),
    config: { adminToken: BENCH_ADMIN_TOKEN, maxBodyBytes: 1 << 20, allowList: [], secretRotationGraceMs: 0 },
  } satisfies AppDeps;
  const dataJson = '{"n":12345,"note":"benchmark"}';
  const before = await redis.usedMemory();
  const keysBefore = await opts.keySum();
  const started = performance.now();
  let next = 0;
  let sample: { eventId: string; deliveryId: string } | undefined;
  await Promise.all(
    Array.from({ length: 200 }, async () => {
      while (next < opts.pending) {
        next++;
        const { answer } = await acceptEvent(deps, { orgId: parked!.orgId, type: 'bench.event', dataJson, idempotencyKey: null });
        sample ??= { eventId: answer.id, deliveryId: answer.deliveries[0]!.id };
      }
    }),
  );
  const writeSeconds = (performance.now() - started) / 1000;
  const after = await redis.usedMemory();
  const keysAfter = await opts.keySum();
  const delayedJobs = (await queue.getJobCounts('delayed')).delayed ?? 0;
  const breakdown = await memoryBreakdown(redis, store.keys, parked!.orgId, parked!.endpointIds[0]!, sample!, opts.pending);

  // Retries that must fire among them.
  await receiver.reset();
  const api = jsonClient(p.apiBase, 4);
  const ids: string[] = [];
  for (let i = 0; i < opts.probes; i++) {
    const r = await api.post('/v1/events', { type: 'bench.probe', data: { i } }, flaky!.apiKey);
    ids.push(r.body.deliveries[0].id as string);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await pollUntil(async () => (await receiver.stats()).count >= opts.probes * 2, 30_000, 100);
  const lateness: number[] = [];
  const reader = new Postern({ baseUrl: p.apiBase, apiKey: flaky!.apiKey });
  for (const id of ids) {
    const [first, second] = await reader.deliveries.attempts(id);
    if (!first || !second || first.durationMs === null) continue;
    const due = Date.parse(first.startedAt) + first.durationMs + 2000;
    lateness.push(Date.parse(second.startedAt) - due);
  }
  api.close();
  await queue.close();
  await connection.quit();
  const envelopeBytes = envelopeSize(dataJson);
  const usedMemoryPerDelivery = (after - before) / opts.pending;
  return {
    deliveries: opts.pending,
    delayedJobs,
    writeSeconds,
    usedMemoryPerDelivery,
    keyBytesPerDelivery: (keysAfter - keysBefore) / opts.pending,
    envelopeBytes,
    perDeliveryExcludingPayload: usedMemoryPerDelivery - envelopeBytes,
    retryLatenessMs: { samples: lateness.length, p50: percentile(lateness, 50), max: percentile(lateness, 100) },
    breakdownBytesPerDelivery: breakdown,
  };
}

/**
 * What one pending delivery keeps in Redis, by key (MEMORY USAGE): its own hashes as they are, the
 * sets and streams it shares with the others divided by their size. Largest first.
 */
async function memoryBreakdown(redis: BenchRedis, k: KeySchema, orgId: string, endpointId: string, sample: { eventId: string; deliveryId: string }, pending: number): Promise<Record<string, number>> {
  const c = redis.client;
  const usage = async (key: string) => Number((await c.memory('USAGE', key, 'SAMPLES', '0')) ?? 0);
  const perMember = async (key: string, size: Promise<number>) => Math.round((await usage(key)) / Math.max(1, await size));
  const q = `${k.queuePrefix(k.partitionOf(orgId))}:${DELIVERY_QUEUE_NAME}`;
  const parts: Record<string, number> = {
    'delivery hash': await usage(k.delivery(orgId, sample.deliveryId)),
    'event hash (holds the envelope)': await usage(k.event(orgId, sample.eventId)),
    'BullMQ job hash': await usage(`${q}:${sample.deliveryId}`),
    'BullMQ delayed set, per member': await perMember(`${q}:delayed`, c.zcard(`${q}:delayed`)),
    "endpoint's delivery log index, per member": await perMember(k.endpointDeliveries(orgId, endpointId), c.zcard(k.endpointDeliveries(orgId, endpointId))),
    "endpoint's pending index, per member": await perMember(k.endpointDeliveriesByStatus(orgId, endpointId, 'pending'), c.zcard(k.endpointDeliveriesByStatus(orgId, endpointId, 'pending'))),
    'BullMQ events stream, per delivery (capped stream)': Math.round((await usage(`${q}:events`)) / pending),
  };
  return Object.fromEntries(Object.entries(parts).sort((a, b) => b[1] - a[1]));
}

/**
 * What an endpoint's transformation (docs/transformations.md) costs, measured by `npm run bench` in
 * the same run as the plain 1-endpoint full-speed run:
 *
 * - `pickFields`: the same endpoint set-up with a 20-line field-picking transformation, as a ratio
 *   of CPU ms per delivery (ingest + sender + Redis) to the plain run, against {@link TRANSFORM_CPU_RATIO_TARGET};
 *   and the transformation's own time in its sandbox thread, p99, from the sender's
 *   `postern_transformation_duration_seconds` histogram (a bucket's upper bound: 0.1 ms steps up
 *   to 1 ms), against
 *   {@link TRANSFORM_P99_TARGET_MS};
 * - `calls`: the same transformation called 5,000 times in a pool like the sender's (2 threads, 8
 *   calls in flight) inside the bench process: every call's exact time in its sandbox thread
 *   (p50, p99, max; the same span the histogram counts), and CPU ms per call of the whole process
 *   (sandbox threads, the message round trip and the check of the answer), against
 *   {@link TRANSFORM_P99_TARGET_MS};
 * - `memory`: a sandbox pool like the sender's running 100 endpoints' transformations (one compiled
 *   runtime each per thread): what its threads hold, QuickJS heaps and WebAssembly memory.
 */
import { createSandboxPool, runTransformation } from '@postern/sandbox';
import type { DeliveryCost } from './resource-cost.js';
import type { EndToEnd } from './scenarios.js';

/** The most CPU per delivery the transformation run may cost, as a multiple of the plain run's. */
export const TRANSFORM_CPU_RATIO_TARGET = 1.25;
/** The transformation's own p99 in its sandbox, ms. */
export const TRANSFORM_P99_TARGET_MS = 1;

/** A 20-line field-picking transformation: the bench's endpoint sends only these paths. */
export const PICK_FIELDS_CODE = `const FIELDS = ['id', 'amount', 'currency', 'customer.id', 'customer.email', 'status'];

function pick(value, path) {
  let v = value;
  for (const key of path.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = v[key];
  }
  return v;
}

function handler(webhook) {
  const data = {};
  for (const path of FIELDS) {
    const value = pick(webhook.payload, path);
    if (value !== undefined) data[path] = value;
  }
  webhook.payload = { type: webhook.eventType, id: webhook.eventId, timestamp: webhook.timestamp, data };
  return webhook;
}
`;

/** `transformation` in bench.json. */
export interface TransformationCost {
  pickFields: {
    deliveriesPerSecond: number;
    deliveries: number;
    cpuMsPerDelivery: DeliveryCost['cpuMsPerDelivery'];
    redisCommandsPerDelivery: number;
    /** Calls the sender's histogram counted in the run, and their p99 (a bucket's upper bound), ms. */
    calls: number;
    p99Ms: number | null;
    /** Requests at the receiver whose body was the picked shape (all of them in a good run). */
    transformedBodies: number;
  };
  plainCpuMsPerDelivery: DeliveryCost['cpuMsPerDelivery'];
  plainDeliveriesPerSecond: number;
  ratio: Record<'ingest' | 'sender' | 'redis' | 'total', number | null>;
  calls: SandboxCallTimes;
  memory: { endpoints: number; threads: number; cached: number; quickjsBytes: number; wasmBytes: number; heapAndExternalBytesDelta: number };
  /** `p99Met`: the histogram's bound in the end-to-end run and the exact p99 of `calls` both within the target. */
  target: { ratio: number; ratioMet: boolean; p99Ms: number; p99Met: boolean };
}

/** Exact times of {@link sandboxCallTimes}' calls in their sandbox thread, ms, and the process's CPU per call. */
export interface SandboxCallTimes {
  calls: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  cpuMsPerCall: number;
}

/** An envelope like the bench's events (bench/scenarios.ts): the fields the transformation picks and some it drops. */
const SAMPLE_ENVELOPE = JSON.stringify({
  id: 'evt_1',
  type: 'invoice.paid',
  timestamp: '2026-12-01T00:00:00.000Z',
  data: { id: 'in_1', amount: 4200, currency: 'EUR', customer: { id: 'cus_1', email: 'a@example.com', name: 'Ada' }, status: 'paid', lines: Array.from({ length: 5 }, (_, i) => ({ i, sku: `sku_${i}`, qty: 1 })) },
});

/**
 * Calls {@link PICK_FIELDS_CODE} `calls` times (after 500 unmeasured) through a pool like the
 * sender's, `inFlight` at a time, and keeps every call's exact `durationMs`.
 */
export async function sandboxCallTimes(calls = 5000, inFlight = 8): Promise<SandboxCallTimes> {
  const pool = createSandboxPool({ threads: 2, timeoutMs: 1000 });
  const durations: number[] = [];
  const one = async () => {
    const v = await runTransformation(pool, { key: 'ep_bench:1', code: PICK_FIELDS_CODE, envelope: SAMPLE_ENVELOPE, url: 'https://receiver.example/hook', nowMs: 0 });
    if (!v.ok) throw new Error(`the bench transformation failed: ${v.message}`);
    durations.push(v.durationMs);
  };
  try {
    for (let i = 0; i < 500; i++) await one();
    durations.length = 0;
    const cpuBefore = process.cpuUsage();
    let left = calls;
    await Promise.all(Array.from({ length: inFlight }, async () => {
      while (left-- > 0) await one();
    }));
    const cpu = process.cpuUsage(cpuBefore);
    durations.sort((a, b) => a - b);
    const at = (q: number) => Math.round(durations[Math.min(durations.length - 1, Math.floor(q * durations.length))]! * 1000) / 1000;
    return { calls: durations.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: at(1), cpuMsPerCall: Math.round(((cpu.user + cpu.system) / 1000 / calls) * 1000) / 1000 };
  } finally {
    await pool.close();
  }
}

const r2 = (n: number) => Math.round(n * 100) / 100;

/** A histogram's cumulative bucket counts in a Prometheus scrape: upper bound (s) → count. */
function bucketsOf(scrape: string, name: string): Map<number, number> {
  const out = new Map<number, number>();
  for (const line of scrape.split('\n')) {
    const m = new RegExp(`^${name}_bucket\\{le="([^"]+)"\\} (\\d+)`).exec(line);
    if (m) out.set(m[1] === '+Inf' ? Infinity : Number(m[1]), Number(m[2]));
  }
  return out;
}

/**
 * The p99 of a Prometheus histogram between two scrapes (`since` absent = since the start), as the
 * upper bound of its bucket, ms; null when no call was counted or it is past the last bound.
 */
export function histogramP99Ms(scrape: string, name: string, since?: string): { count: number; p99Ms: number | null } {
  const after = bucketsOf(scrape, name);
  const before = since === undefined ? new Map<number, number>() : bucketsOf(since, name);
  const buckets = [...after.entries()].map(([le, count]) => ({ le, count: count - (before.get(le) ?? 0) })).sort((a, b) => a.le - b.le);
  const total = buckets.at(-1)?.count ?? 0;
  if (total === 0) return { count: 0, p99Ms: null };
  const bound = buckets.find((b) => b.count >= 0.99 * total)!;
  return { count: total, p99Ms: bound.le === Infinity ? null : bound.le * 1000 };
}

/** The sandbox memory a sender holds with 100 endpoints each having a transformation (2 threads, each compiled once per thread). */
export async function sandboxMemoryFor100(): Promise<TransformationCost['memory']> {
  const before = process.memoryUsage();
  const pool = createSandboxPool({ threads: 2, timeoutMs: 1000 });
  try {
    const envelope = JSON.stringify({ id: 'evt_1', type: 'invoice.paid', timestamp: '', data: { id: 'in_1', amount: 4200, currency: 'EUR', customer: { id: 'cus_1', email: 'a@example.com' }, status: 'paid' } });
    // Every thread runs every endpoint's code (calls go to any free thread): the worst case, each compiled on each thread.
    for (let round = 0; round < 3; round++) {
      await Promise.all(Array.from({ length: 100 }, (_, i) => pool.run({ key: `ep_${i}:1`, code: `${PICK_FIELDS_CODE}\n// endpoint ${i}\n`, envelope, url: 'https://r.example/', nowMs: 0 })));
    }
    const m = await pool.memory();
    const after = process.memoryUsage();
    return { endpoints: 100, ...m, heapAndExternalBytesDelta: after.heapUsed + after.external - before.heapUsed - before.external };
  } finally {
    await pool.close();
  }
}

/** Puts the transformation run beside the plain one. */
export function transformationCost(plain: EndToEnd & { cost: DeliveryCost }, run: EndToEnd & { cost: DeliveryCost }, histogram: { count: number; p99Ms: number | null }, transformedBodies: number, calls: SandboxCallTimes, memory: TransformationCost['memory']): TransformationCost {
  const ratioOf = (k: 'ingest' | 'sender' | 'redis' | 'total') => {
    const a = run.cost.cpuMsPerDelivery[k];
    const b = plain.cost.cpuMsPerDelivery[k];
    return a === null || b === null || b === 0 ? null : r2(a / b);
  };
  const ratio = { ingest: ratioOf('ingest'), sender: ratioOf('sender'), redis: ratioOf('redis'), total: ratioOf('total') };
  return {
    pickFields: {
      deliveriesPerSecond: Math.round(run.deliveriesPerSecond),
      deliveries: run.deliveries,
      cpuMsPerDelivery: run.cost.cpuMsPerDelivery,
      redisCommandsPerDelivery: run.cost.redisCommandsPerDelivery,
      calls: histogram.count,
      p99Ms: histogram.p99Ms,
      transformedBodies,
    },
    plainCpuMsPerDelivery: plain.cost.cpuMsPerDelivery,
    plainDeliveriesPerSecond: Math.round(plain.deliveriesPerSecond),
    ratio,
    calls,
    memory,
    target: {
      ratio: TRANSFORM_CPU_RATIO_TARGET,
      ratioMet: ratio.total !== null && ratio.total <= TRANSFORM_CPU_RATIO_TARGET,
      p99Ms: TRANSFORM_P99_TARGET_MS,
      p99Met: histogram.p99Ms !== null && histogram.p99Ms <= TRANSFORM_P99_TARGET_MS && calls.p99Ms <= TRANSFORM_P99_TARGET_MS,
    },
  };
}

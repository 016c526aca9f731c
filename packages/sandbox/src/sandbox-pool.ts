import { Worker } from 'node:worker_threads';
import { DEFAULT_TRANSFORM_TIMEOUT_MS, TRANSFORM_MEMORY_LIMIT_BYTES, type TransformationFailure } from '@postern/shared';

/** What one handler call gave: its answer (as JSON text), its `console.log` lines and how long it ran in its thread, ms. */
export type SandboxRun =
  | { ok: true; outputJson: string; logs: string[]; durationMs: number }
  | {
      ok: false;
      /** The `transformation_failed:<reason>` it ends an attempt with (never `unsafe_url`: that is the sender's check). */
      reason: Exclude<TransformationFailure, 'unsafe_url'>;
      /** A finer code for people and the API: `syntax_error`, `handler_missing`, `error`, `timeout`, `memory`, `bad_result`. */
      code: string;
      message: string;
      /** The line of the code the error points at (1-based), or null. */
      line: number | null;
      logs: string[];
      durationMs: number;
    };

/** What a pool's sandboxes hold, summed over its threads. */
export interface SandboxMemory {
  threads: number;
  /** Compiled transformations kept (one per endpoint version each thread has run). */
  cached: number;
  /** Bytes the QuickJS runtimes of the cached transformations use. */
  quickjsBytes: number;
  /** Bytes of the threads' WebAssembly memories (grown, never shrunk). */
  wasmBytes: number;
}

/** Options of {@link createSandboxPool}; every field has a default. */
export interface SandboxPoolOptions {
  /** Threads running sandboxes (`TRANSFORM_THREADS`); default 2. */
  threads?: number;
  /** Wall-clock cap of one call, ms (`TRANSFORM_TIMEOUT_MS`); default 50. */
  timeoutMs?: number;
  /** Memory cap of each transformation's runtime, bytes; default 16 MiB. */
  memoryLimitBytes?: number;
  /** Compiled transformations each thread keeps (least recently used dropped); default 1000. */
  maxCached?: number;
  /**
   * After `timeoutMs` plus this, a call QuickJS did not interrupt (a long native call) has its
   * thread terminated and answers `timeout`; ms, default 200.
   */
  killGraceMs?: number;
}

/**
 * A call as the pool takes it: `key` names the compiled code to reuse (null = compile, run once,
 * drop). The handler's argument is built inside the sandbox from `envelope` and `url`, as
 * `transformationInput` (@postern/shared) does: only these two strings cross to the thread.
 */
export interface SandboxCall {
  key: string | null;
  code: string;
  /** The envelope the attempt would send (`{"id","type","timestamp","data"}` JSON text). */
  envelope: string;
  /** The endpoint's URL: the handler's `url` to start with. */
  url: string;
  /** What `Date.now()` and `new Date()` say inside the sandbox, epoch ms. */
  nowMs: number;
}

/**
 * Runs transformations off the main thread. Each call goes to an idle sandbox thread (or waits in
 * line for one), so a slow or looping transformation never holds up the process's event loop: the
 * deliveries of other endpoints go on. A call that overruns its deadline past what QuickJS can
 * interrupt has its thread terminated and replaced.
 */
export interface SandboxPool {
  /** Runs `handler(input)`; never rejects for the code's faults (they are `ok: false`). */
  run(call: SandboxCall): Promise<SandboxRun>;
  /** Compiles `code` and checks it defines `handler`: `ok: true`, or the syntax error and its line. */
  compile(code: string): Promise<SandboxRun | { ok: true }>;
  /** What the threads' sandboxes hold now. */
  memory(): Promise<SandboxMemory>;
  /** Terminates the threads; calls still in line answer `error`. */
  close(): Promise<void>;
}

type Answer = Record<string, unknown> & { id: number; durationMs: number };
interface Pending {
  id: number;
  message: Record<string, unknown>;
  /** Cap of this call, ms; memory reports have none. */
  timeoutMs: number | null;
  resolve(answer: Answer): void;
}
interface Thread {
  worker: Worker;
  ready: boolean;
  busy: Pending | null;
  timer: NodeJS.Timeout | null;
}

const WORKER_URL = new URL('./sandbox-worker.mjs', import.meta.url);

/**
 * A pool of sandbox threads (see {@link SandboxPool}). Threads start with the first call and
 * load QuickJS (about 1 MB of WebAssembly) each, warmed up before they take calls; calls made
 * before they are ready wait.
 */
export function createSandboxPool(options: SandboxPoolOptions = {}): SandboxPool {
  const size = Math.max(1, options.threads ?? 2);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TRANSFORM_TIMEOUT_MS;
  const killGraceMs = options.killGraceMs ?? 200;
  const workerData = {
    memoryLimitBytes: options.memoryLimitBytes ?? TRANSFORM_MEMORY_LIMIT_BYTES,
    maxStackBytes: 256 * 1024,
    maxCached: options.maxCached ?? 1000,
    maxLogLines: 50,
    maxLogLineChars: 500,
    maxOutputChars: 2 * 1024 * 1024,
  };
  const queue: Pending[] = [];
  const threads: Thread[] = [];
  let nextId = 1;
  let closed = false;

  const spawn = (): Thread => {
    const thread: Thread = { worker: new Worker(WORKER_URL, { workerData }), ready: false, busy: null, timer: null };
    thread.worker.unref();
    thread.worker.on('message', (m: Answer & { ready?: boolean }) => {
      if (m.ready) {
        thread.ready = true;
        pump();
        return;
      }
      const pending = thread.busy;
      if (!pending || pending.id !== m.id) return;
      settle(thread, m);
    });
    thread.worker.on('error', () => replace(thread, 'the sandbox thread failed'));
    thread.worker.on('exit', () => {
      if (!closed && threads.includes(thread)) replace(thread, 'the sandbox thread stopped');
    });
    return thread;
  };

  const settle = (thread: Thread, answer: Answer) => {
    const pending = thread.busy;
    if (thread.timer) clearTimeout(thread.timer);
    thread.timer = null;
    thread.busy = null;
    pending?.resolve(answer);
    pump();
  };

  /** Swaps a killed or broken thread for a new one; its call answers as `reason` says. */
  const replace = (thread: Thread, message: string, reason: 'timeout' | 'error' = 'error') => {
    const index = threads.indexOf(thread);
    if (index < 0) return;
    const pending = thread.busy;
    thread.busy = null;
    if (thread.timer) clearTimeout(thread.timer);
    threads.splice(index, 1);
    void thread.worker.terminate();
    if (!closed) threads.push(spawn());
    pending?.resolve({ id: pending.id, durationMs: pending.timeoutMs ?? 0, ok: false, reason, code: reason, message, line: null, logs: [] });
    pump();
  };

  const pump = () => {
    for (const thread of threads) {
      if (queue.length === 0) return;
      if (!thread.ready || thread.busy) continue;
      const pending = queue.shift()!;
      thread.busy = pending;
      if (pending.timeoutMs !== null) {
        // Compiling a large code and the call both count: twice the cap, plus the grace.
        // The kill waits one turn of the event loop: when this process itself was busy, the
        // thread's answer may already be waiting to be read, and then it is not killed.
        thread.timer = setTimeout(() => setImmediate(() => {
          if (thread.busy === pending) replace(thread, 'the handler ran past its time limit', 'timeout');
        }), 2 * pending.timeoutMs + killGraceMs);
      }
      thread.worker.postMessage({ id: pending.id, ...pending.message });
    }
  };

  const call = (message: Record<string, unknown>, capMs: number | null): Promise<Answer> =>
    new Promise((resolve) => {
      if (closed) return resolve({ id: 0, durationMs: 0, ok: false, reason: 'error', code: 'error', message: 'the sandbox is closed', line: null, logs: [] });
      // Threads start with the first call: a process whose endpoints have no transformation runs none.
      while (threads.length < size) threads.push(spawn());
      queue.push({ id: nextId++, message, timeoutMs: capMs, resolve });
      pump();
    });


  return {
    async run(c) {
      const answer = await call({ op: 'run', key: c.key, code: c.code, envelope: c.envelope, url: c.url, nowMs: c.nowMs, timeoutMs }, timeoutMs);
      return toRun(answer);
    },
    async compile(code) {
      const answer = await call({ op: 'compile', code, timeoutMs }, timeoutMs);
      return answer.ok ? { ok: true } : toRun(answer);
    },
    async memory() {
      if (threads.length === 0) return { threads: 0, cached: 0, quickjsBytes: 0, wasmBytes: 0 };
      const answers = await Promise.all(threads.map(() => call({ op: 'memory' }, null)));
      const sum = (field: 'cached' | 'quickjsBytes' | 'wasmBytes') => answers.reduce((n, a) => n + (Number(a[field]) || 0), 0);
      return { threads: threads.length, cached: sum('cached'), quickjsBytes: sum('quickjsBytes'), wasmBytes: sum('wasmBytes') };
    },
    async close() {
      closed = true;
      for (const pending of queue.splice(0)) pending.resolve({ id: pending.id, durationMs: 0, ok: false, reason: 'error', code: 'error', message: 'the sandbox is closed', line: null, logs: [] });
      await Promise.all(threads.splice(0).map((t) => {
        if (t.timer) clearTimeout(t.timer);
        return t.worker.terminate();
      }));
    },
  };
}

function toRun(a: Answer): SandboxRun {
  const logs = Array.isArray(a.logs) ? (a.logs as string[]) : [];
  if (a.ok === true) return { ok: true, outputJson: String(a.output), logs, durationMs: a.durationMs };
  const reason = a.reason === 'timeout' || a.reason === 'memory' || a.reason === 'bad_result' ? a.reason : 'error';
  return { ok: false, reason, code: String(a.code ?? reason), message: String(a.message ?? ''), line: typeof a.line === 'number' ? a.line : null, logs, durationMs: a.durationMs };
}

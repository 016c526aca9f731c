// One sandbox thread (a worker_threads Worker started by sandbox-pool.ts). Plain JavaScript so the
// same file runs from src/ (tests, tsx) and dist/ (the build copies it) without a TypeScript loader.
//
// Each transformation runs in its own QuickJS runtime (WebAssembly: no Node globals, no I/O, no
// module loader), with a memory cap, a stack cap and an interrupt at its deadline. A compiled
// transformation is kept per cache key (endpoint and version) and called again for the next
// delivery; one that timed out or ran out of memory is thrown away. The pool kills this whole
// thread when a call overruns its deadline anyway (a long native call QuickJS cannot interrupt).
import { parentPort, workerData } from 'node:worker_threads';
import { newQuickJSWASMModuleFromVariant } from 'quickjs-emscripten-core';
import variant from '@jitl/quickjs-wasmfile-release-sync';

const { memoryLimitBytes, maxStackBytes, maxCached, maxLogLines, maxLogLineChars, maxOutputChars } = workerData;
const FILE = 'transformation.js';

// Installed before the endpoint's code: a fixed clock (the attempt's time), console.log into a
// capped list, and the one entry point the host calls. Nothing of the host is reachable.
// Binary buffers are removed: QuickJS does not count their bytes against the memory cap, and a
// webhook body is text.
const PRELUDE = `(() => {
  for (const name of ['ArrayBuffer', 'SharedArrayBuffer', 'DataView', 'Atomics', 'Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array', 'BigInt64Array', 'BigUint64Array', 'Float32Array', 'Float64Array']) delete globalThis[name];
  const RealDate = Date;
  let now = 0;
  function FixedDate(...args) {
    if (!new.target) return new RealDate(now).toString();
    return args.length === 0 ? new RealDate(now) : new RealDate(...args);
  }
  FixedDate.now = () => now;
  FixedDate.UTC = RealDate.UTC;
  FixedDate.parse = RealDate.parse;
  FixedDate.prototype = RealDate.prototype;
  globalThis.Date = FixedDate;
  const logs = [];
  const show = (v) => { if (typeof v === 'string') return v; try { return JSON.stringify(v); } catch { return String(v); } };
  const log = (...args) => { if (logs.length < ${maxLogLines}) logs.push(args.map(show).join(' ').slice(0, ${maxLogLineChars})); };
  globalThis.console = { log, info: log, warn: log, error: log, debug: log };
  const run = (nowMs, inputJson) => {
    now = nowMs;
    logs.length = 0;
    if (typeof handler !== 'function') return JSON.stringify({ missing: true, logs });
    const out = handler(JSON.parse(inputJson));
    if (out !== null && typeof out === 'object' && typeof out.then === 'function') return JSON.stringify({ bad: 'handler must return the webhook, not a Promise (it runs synchronously)', logs });
    let json;
    try { json = JSON.stringify(out === undefined ? null : out); } catch (e) { return JSON.stringify({ bad: 'the result cannot be turned into JSON: ' + e.message, logs }); }
    if (json.length > ${maxOutputChars}) return JSON.stringify({ bad: 'the result is larger than ${maxOutputChars} characters', logs });
    return '{"logs":' + JSON.stringify(logs) + ',"out":' + json + '}';
  };
  Object.defineProperty(globalThis, '__postern_run', { value: run, writable: false, configurable: false, enumerable: false });
})();`;

const quickjs = await newQuickJSWASMModuleFromVariant(variant);
/** key → compiled transformation; Map order is use order (least recently used first). */
const cache = new Map();
let deadline = 0;

/** The first `transformation.js:<line>` of an error's stack (the handler's own code), or null. */
function lineOf(error) {
  if (typeof error?.lineNumber === 'number' && error.fileName === FILE) return error.lineNumber;
  const m = new RegExp(`${FILE.replace('.', '\\.')}:(\\d+)`).exec(String(error?.stack ?? ''));
  return m ? Number(m[1]) : null;
}

/** A QuickJS error as a failure: interrupted → timeout; out of memory or stack → memory; else error. */
function failureOf(error, logs = []) {
  const message = String(error?.message ?? error);
  if (error?.name === 'InternalError' && message === 'interrupted') return { ok: false, reason: 'timeout', code: 'timeout', message: 'the handler ran past its time limit', line: null, logs };
  if (error?.name === 'InternalError' && /out of memory|stack overflow/.test(message)) return { ok: false, reason: 'memory', code: 'memory', message: `the handler ran out of memory (${message})`, line: null, logs };
  const syntax = error?.name === 'SyntaxError';
  return { ok: false, reason: 'error', code: syntax ? 'syntax_error' : 'error', message: `${error?.name ?? 'Error'}: ${message}`.slice(0, 500), line: lineOf(error), logs };
}

function dispose(entry) {
  try {
    entry.run.dispose();
    entry.context.dispose();
    entry.runtime.dispose();
  } catch {
    // A runtime left mid-call by an interrupt may refuse a clean dispose; its memory goes with the thread.
  }
}

/** Compiles `code` in a fresh runtime: `{entry}` or `{failure}` (a syntax error names its line). */
function compile(code) {
  const runtime = quickjs.newRuntime();
  runtime.setMemoryLimit(memoryLimitBytes);
  runtime.setMaxStackSize(maxStackBytes);
  runtime.setInterruptHandler(() => Date.now() > deadline);
  const context = runtime.newContext();
  const fail = (handle) => {
    const failure = failureOf(context.dump(handle));
    handle.dispose();
    context.dispose();
    runtime.dispose();
    return { failure };
  };
  const prelude = context.evalCode(PRELUDE, 'prelude.js');
  if (prelude.error) return fail(prelude.error);
  prelude.value.dispose();
  const evaluated = context.evalCode(code, FILE);
  if (evaluated.error) return fail(evaluated.error);
  evaluated.value.dispose();
  const handlerType = context.getProp(context.global, 'handler');
  const isFunction = context.typeof(handlerType) === 'function';
  handlerType.dispose();
  if (!isFunction) {
    context.dispose();
    runtime.dispose();
    return { failure: { ok: false, reason: 'error', code: 'handler_missing', message: 'the code must define function handler(webhook)', line: null, logs: [] } };
  }
  return { entry: { runtime, context, run: context.getProp(context.global, '__postern_run') } };
}

function entryFor(key, code) {
  if (key !== null) {
    const hit = cache.get(key);
    if (hit && hit.code === code) {
      cache.delete(key);
      cache.set(key, hit);
      return { entry: hit.entry };
    }
    if (hit) {
      cache.delete(key);
      dispose(hit.entry);
    }
  }
  const compiled = compile(code);
  if (compiled.entry && key !== null) {
    cache.set(key, { code, entry: compiled.entry });
    while (cache.size > maxCached) {
      const [oldest, old] = cache.entries().next().value;
      cache.delete(oldest);
      dispose(old.entry);
    }
  }
  return compiled;
}

function forget(key, entry) {
  if (key !== null && cache.get(key)?.entry === entry) cache.delete(key);
  dispose(entry);
}

/** Runs one call: `{ok: true, output, logs}` (output: the handler's answer as JSON text) or a failure. */
function run({ key, code, input, nowMs, timeoutMs }) {
  deadline = Date.now() + timeoutMs;
  const compiled = entryFor(key, code);
  if (compiled.failure) return compiled.failure;
  const { entry } = compiled;
  const { context } = entry;
  deadline = Date.now() + timeoutMs;
  const nowHandle = context.newNumber(nowMs);
  const inputHandle = context.newString(input);
  const result = context.callFunction(entry.run, context.undefined, nowHandle, inputHandle);
  nowHandle.dispose();
  inputHandle.dispose();
  if (result.error) {
    const failure = failureOf(context.dump(result.error));
    result.error.dispose();
    // A runtime stopped mid-call or out of memory is not trusted again; a throw keeps it.
    if (failure.reason !== 'error' || key === null) forget(key, entry);
    return failure;
  }
  const text = context.getString(result.value);
  result.value.dispose();
  if (key === null) forget(null, entry);
  const answer = JSON.parse(text);
  if (answer.missing) return { ok: false, reason: 'error', code: 'handler_missing', message: 'the code must define function handler(webhook)', line: null, logs: answer.logs };
  if (answer.bad) return { ok: false, reason: 'bad_result', code: 'bad_result', message: answer.bad, line: null, logs: answer.logs };
  return { ok: true, output: answer.out, logs: answer.logs };
}

/** What this thread's sandboxes hold: cached transformations and the WebAssembly memory, bytes. */
function memory() {
  let quickjsBytes = 0;
  for (const { entry } of cache.values()) {
    const usage = entry.runtime.computeMemoryUsage();
    quickjsBytes += entry.context.dump(usage).memory_used_size ?? 0;
    usage.dispose();
  }
  return { cached: cache.size, quickjsBytes, wasmBytes: quickjs.getWasmMemory().buffer.byteLength };
}

parentPort.on('message', (message) => {
  const started = performance.now();
  let answer;
  try {
    if (message.op === 'memory') answer = memory();
    else if (message.op === 'compile') {
      deadline = Date.now() + message.timeoutMs;
      const compiled = compile(message.code);
      if (compiled.entry) dispose(compiled.entry);
      answer = compiled.failure ?? { ok: true };
    } else answer = run(message);
  } catch (err) {
    answer = { ok: false, reason: 'error', code: 'error', message: `the sandbox failed: ${String(err?.message ?? err)}`.slice(0, 300), line: null, logs: [] };
  }
  parentPort.postMessage({ id: message.id, durationMs: performance.now() - started, ...answer });
});
// A cold WebAssembly module runs its first calls far slower than later ones: warm it up before
// taking calls, so an endpoint's first delivery is not the one that pays (and times out).
for (let i = 0; i < 20; i++) run({ key: null, code: 'function handler(w) { w.payload = { n: w.payload.n + 1, s: JSON.stringify(w) }; return w; }', input: '{"payload":{"n":1},"headers":{}}', nowMs: 0, timeoutMs: 10_000 });
parentPort.postMessage({ ready: true });

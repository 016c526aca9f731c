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
// capped list, and the entry point the host calls. Nothing of the host is reachable.
// Binary buffers are removed: QuickJS does not count their bytes against the memory cap, and a
// webhook body is text.
//
// No state carries from one call to the next, though the runtime is kept per endpoint version:
// - the endpoint's code is compiled once as the body of a function (`factory` below) that runs
//   afresh for each call, so its top-level `let`, `const`, `var` and functions are new each time;
// - the function around the code (reachable from sloppy code as \`arguments.callee\`) and its
//   prototype object are frozen;
// - then every object reachable from the global object (and the intrinsics only reachable through
//   syntax: generator, async and iterator prototypes) is frozen, so nothing can be stored on a
//   global, a built-in or a prototype. Data properties of the main prototypes (`toString`,
//   `constructor`, …) become accessors whose setter defines the property on the object assigned to,
//   so `obj.toString = f` still works on a frozen Object.prototype (as SES's property overrides).
// The handler's argument is parsed afresh from the envelope's JSON each call.
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
  const { parse, stringify } = JSON;
  const show = (v) => { if (typeof v === 'string') return v; try { return stringify(v); } catch { return String(v); } };
  const log = (...args) => { if (logs.length < ${maxLogLines}) logs.push(args.map(show).join(' ').slice(0, ${maxLogLineChars})); };
  globalThis.console = { log, info: log, warn: log, error: log, debug: log };
  // The handler's argument, as @postern/shared's transformationInput builds it from the envelope.
  const inputOf = (envelope, url) => {
    const e = parse(envelope);
    return { eventType: String(e.type ?? ''), eventId: String(e.id ?? ''), timestamp: String(e.timestamp ?? ''), payload: e.data ?? null, method: 'POST', url, headers: {} };
  };
  // The answer as text: 'o' + JSON (no logs), 'l' + logs JSON + newline + JSON, 'b' + {bad, logs}, 'm' + logs.
  // JSON text never holds a raw newline, so the first one ends the logs.
  // One string crosses per call, \`<nowMs>,<url length>,<url><envelope>\`: each string handed to
  // QuickJS is a copy into its heap and a handle to free.
  const run = (factory, call) => {
    const first = call.indexOf(',');
    const second = call.indexOf(',', first + 1);
    now = Number(call.slice(0, first));
    const urlEnd = second + 1 + Number(call.slice(first + 1, second));
    const url = call.slice(second + 1, urlEnd);
    const envelope = call.slice(urlEnd);
    logs.length = 0;
    const handler = factory();
    if (typeof handler !== 'function') return 'm' + stringify(logs);
    const out = handler(inputOf(envelope, url));
    if (out !== null && typeof out === 'object' && typeof out.then === 'function') return 'b' + stringify({ bad: 'handler must return the webhook, not a Promise (it runs synchronously)', logs });
    let json;
    try { json = stringify(out === undefined ? null : out); } catch (e) { return 'b' + stringify({ bad: 'the result cannot be turned into JSON: ' + e.message, logs }); }
    if (json === undefined) json = 'null';
    if (json.length > ${maxOutputChars}) return 'b' + stringify({ bad: 'the result is larger than ${maxOutputChars} characters', logs });
    return logs.length === 0 ? 'o' + json : 'l' + stringify(logs) + '\\n' + json;
  };
  // The function around the code is reachable from it (\`arguments.callee\` in sloppy code), so it and its
  // prototype object are frozen too.
  const bind = (factory) => {
    freeze(factory.prototype);
    freeze(factory);
    return (call) => run(factory, call);
  };
  Object.defineProperty(globalThis, '__postern_bind', { value: bind, writable: false, configurable: false, enumerable: false });

  const { freeze, getPrototypeOf, getOwnPropertyDescriptor, defineProperty } = Object;
  const ownKeys = Reflect.ownKeys;
  const overridable = (proto) => {
    for (const key of ownKeys(proto)) {
      const d = getOwnPropertyDescriptor(proto, key);
      if (!d || !('value' in d) || !d.configurable) continue;
      const value = d.value;
      defineProperty(proto, key, {
        get() { return value; },
        set(v) {
          if (this === proto) throw new TypeError('the built-ins are frozen');
          defineProperty(this, key, { value: v, writable: true, enumerable: true, configurable: true });
        },
        enumerable: d.enumerable,
        configurable: false,
      });
    }
  };
  for (const proto of [Object.prototype, Array.prototype, Function.prototype, Error.prototype]) overridable(proto);
  // Iterator helpers (\`[].values().map(f)\`) and \`Iterator.from\`'s wrapper have prototypes of their own, reachable only through them.
  const helper = (make) => { try { return make(); } catch { return null; } };
  const roots = [globalThis, function* () {}, async function () {}, async function* () {}, (function* () {})(), [].values(), new Map().entries(), new Set().values(), ''[Symbol.iterator](), /a/[Symbol.matchAll]('a'), (function () { 'use strict'; return getOwnPropertyDescriptor(arguments, 'callee').get; })(), helper(() => [].values().map((x) => x)), helper(() => Iterator.from({ next() { return { done: true, value: undefined }; } }))];
  const seen = new Set();
  while (roots.length > 0) {
    const o = roots.pop();
    if (o === null || (typeof o !== 'object' && typeof o !== 'function') || seen.has(o)) continue;
    seen.add(o);
    freeze(o);
    roots.push(getPrototypeOf(o));
    for (const key of ownKeys(o)) {
      const d = getOwnPropertyDescriptor(o, key);
      if (!d) continue;
      if ('value' in d) roots.push(d.value);
      else roots.push(d.get, d.set);
    }
  }
})();`;
// The endpoint's code as the body of a function run once per call (see PRELUDE). Same first line,
// so line numbers are the code's own; the code is also compiled on its own first, so it cannot
// close this function early (a valid script's braces balance).
const wrap = (code) => `(function () {${code}\n;return typeof handler === 'function' ? handler : undefined;\n})`;

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
    entry.call.dispose();
    entry.context.dispose();
    entry.runtime.dispose();
  } catch {
    // A runtime left mid-call by an interrupt may refuse a clean dispose; its memory goes with the thread.
  }
}

const HANDLER_MISSING = { ok: false, reason: 'error', code: 'handler_missing', message: 'the code must define function handler(webhook)', line: null, logs: [] };

/**
 * Compiles `code` in a fresh runtime: `{entry}` (its `call("<nowMs>,<url length>,<url><envelope>")` runs the handler
 * once) or `{failure}` (a syntax error names its line). The code's top level runs once here, to
 * check that it defines `handler`.
 */
function compile(code) {
  const runtime = quickjs.newRuntime();
  runtime.setMemoryLimit(memoryLimitBytes);
  runtime.setMaxStackSize(maxStackBytes);
  runtime.setInterruptHandler(() => Date.now() > deadline);
  const context = runtime.newContext();
  const drop = () => {
    context.dispose();
    runtime.dispose();
  };
  const fail = (handle) => {
    const failure = failureOf(context.dump(handle));
    handle.dispose();
    drop();
    return { failure };
  };
  const prelude = context.evalCode(PRELUDE, 'prelude.js');
  if (prelude.error) return fail(prelude.error);
  prelude.value.dispose();
  // On its own first: syntax errors name the code's own lines, and the wrapper cannot be closed early.
  const alone = context.evalCode(code, FILE, { compileOnly: true });
  if (alone.error) return fail(alone.error);
  alone.value.dispose();
  const factory = context.evalCode(wrap(code), FILE);
  if (factory.error) return fail(factory.error);
  const handler = context.callFunction(factory.value, context.undefined);
  if (handler.error) {
    factory.value.dispose();
    return fail(handler.error);
  }
  const isFunction = context.typeof(handler.value) === 'function';
  handler.value.dispose();
  if (!isFunction) {
    factory.value.dispose();
    drop();
    return { failure: HANDLER_MISSING };
  }
  const bind = context.getProp(context.global, '__postern_bind');
  const call = context.callFunction(bind, context.undefined, factory.value);
  bind.dispose();
  factory.value.dispose();
  if (call.error) return fail(call.error);
  return { entry: { runtime, context, call: call.value } };
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

/**
 * Runs one call on the envelope (the JSON text an attempt would send) and the endpoint's URL:
 * `{ok: true, output, logs}` (output: the handler's answer as JSON text, parsed by the caller) or
 * a failure.
 */
function run({ key, code, envelope, url, nowMs, timeoutMs }) {
  deadline = Date.now() + timeoutMs;
  const compiled = entryFor(key, code);
  if (compiled.failure) return compiled.failure;
  const { entry } = compiled;
  const { context } = entry;
  deadline = Date.now() + timeoutMs;
  const callHandle = context.newString(`${nowMs},${url.length},${url}${envelope}`);
  const result = context.callFunction(entry.call, context.undefined, callHandle);
  callHandle.dispose();
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
  switch (text[0]) {
    case 'o':
      return { ok: true, output: text.slice(1), logs: null };
    case 'l': {
      const newline = text.indexOf('\n');
      return { ok: true, output: text.slice(newline + 1), logs: JSON.parse(text.slice(1, newline)) };
    }
    case 'm':
      return { ...HANDLER_MISSING, logs: JSON.parse(text.slice(1)) };
    default: {
      const answer = JSON.parse(text.slice(1));
      return { ok: false, reason: 'bad_result', code: 'bad_result', message: answer.bad, line: null, logs: answer.logs };
    }
  }
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
for (let i = 0; i < 20; i++) run({ key: null, code: 'function handler(w) { w.payload = { n: w.payload.n + 1, s: JSON.stringify(w) }; return w; }', envelope: '{"id":"evt_0","type":"t","timestamp":"","data":{"n":1}}', url: 'https://warm.example/', nowMs: 0, timeoutMs: 10_000 });
parentPort.postMessage({ ready: true });

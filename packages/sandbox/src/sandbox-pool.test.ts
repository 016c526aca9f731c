import { transformationInput } from '@postern/shared';
import { createSandboxPool, type SandboxPool } from './sandbox-pool.js';
import { runTransformation } from './run-transformation.js';

const envelope = JSON.stringify({ id: 'evt_1', type: 'invoice.paid', timestamp: '2026-12-01T00:00:00.000Z', data: { amount: 4200, customer: { name: 'Ada' } } });
const URL_ = 'https://receiver.example/hook';
const NOW = Date.UTC(2026, 11, 1, 12, 0, 0);

let pool: SandboxPool;
beforeAll(() => {
  pool = createSandboxPool({ threads: 2, timeoutMs: 1500 });
});
afterAll(() => pool.close());

const run = (code: string, key: string | null = null) => runTransformation(pool, { key, code, envelope, url: URL_, nowMs: NOW });

test('a handler reshapes the payload; the answer is the request to send', async () => {
  const v = await run('function handler(w) { w.payload = { total: w.payload.amount, who: w.payload.customer.name }; w.headers["x-kind"] = w.eventType; return w; }');
  expect(v).toMatchObject({ ok: true, request: { kind: 'send', method: 'POST', url: 'https://receiver.example/hook', body: '{"total":4200,"who":"Ada"}', contentType: 'application/json', headers: { 'x-kind': 'invoice.paid' } } });
});

test('the clock inside is the fixed time passed in; console.log lines come back, capped', async () => {
  const v = await run('function handler(w) { console.log("now", Date.now(), new Date().toISOString()); for (let i = 0; i < 100; i++) console.log(i); w.payload = Date.now(); return w; }');
  expect(v.ok).toBe(true);
  if (!v.ok || v.request.kind !== 'send') throw new Error('expected a request');
  expect(v.request.body).toBe(String(NOW));
  expect(v.logs[0]).toBe(`now ${NOW} ${new Date(NOW).toISOString()}`);
  expect(v.logs).toHaveLength(50);
});

test('cancel: true drops the delivery', async () => {
  expect(await run('function handler(w) { w.cancel = true; return w; }')).toMatchObject({ ok: true, request: { kind: 'cancel' } });
});

test('a syntax error names its line; a missing handler is its own code', async () => {
  expect(await pool.compile('function handler(w) {\n  return w +;\n}')).toMatchObject({ ok: false, code: 'syntax_error', line: 2 });
  expect(await pool.compile('function nothing() {}')).toMatchObject({ ok: false, code: 'handler_missing' });
  expect(await pool.compile('function handler(w) { return w; }')).toEqual({ ok: true });
  expect(await run('function handler(w) {\n\n  null.x;\n}')).toMatchObject({ ok: false, reason: 'error', line: 3 });
});

// The prelude is its own script (prelude.js) and the wrapper shares the code's first line, so an
// error on the code's line 1 is reported on line 1, at run time and at compile time alike.
test("lines are the code's own, from its first line on", async () => {
  expect(await run('function handler(w) { throw new Error("boom"); }')).toMatchObject({ ok: false, reason: 'error', message: 'Error: boom', line: 1 });
  expect(await run('function handler(w) { return w.payload.missing.deeper; }')).toMatchObject({ ok: false, reason: 'error', line: 1 });
  expect(await pool.compile('throw new Error("at the top");\nfunction handler(w) { return w; }')).toMatchObject({ ok: false, code: 'error', line: 1 });
  expect(await pool.compile('function handler(w) { return w +; }')).toMatchObject({ ok: false, code: 'syntax_error', line: 1 });
});

describe('escape attempts end in a failure, and the pool keeps working', () => {
  test.each([
    ['while(true){}', 'function handler(w) { while (true) {} }', 'timeout'],
    ['allocating 1 GB, 1 MB at a time', 'function handler(w) { const a = []; for (let i = 0; i < 1024; i++) a.push("x".repeat(1024 * 1024) + i); return w; }', 'memory|timeout'],
    ['allocating 1 GB in one array', 'function handler(w) { w.payload = new Array(128 * 1024 * 1024).fill(0).length; return w; }', 'memory|timeout'],
    ['binary buffers (not counted by QuickJS)', 'function handler(w) { w.payload = new Uint8Array(1024 * 1024 * 1024).length; return w; }', 'error'],
    // Refused for its size; on a busy machine building it may already run past the cap.
    ['a 10 MB returned string', 'function handler(w) { w.body = "x".repeat(10 * 1024 * 1024); return w; }', 'bad_result|timeout|memory'],
    ['deep recursion', 'function handler(w) { return handler(w); }', 'memory'],
    ['an async handler', 'async function handler(w) { return w; }', 'bad_result'],
    ['returning nothing', 'function handler(w) {}', 'bad_result'],
    ['a webhook-* header', 'function handler(w) { w.headers["webhook-signature"] = "v1,forged"; return w; }', 'bad_result'],
    ['a method other than POST/PUT/PATCH', 'function handler(w) { w.method = "DELETE"; return w; }', 'bad_result'],
    ['a file: URL', 'function handler(w) { w.url = "file:///etc/passwd"; return w; }', 'bad_result'],
  ])('%s → %s', async (_name, code, reason) => {
    const v = await run(code);
    expect(v.ok).toBe(false);
    expect(reason.split('|')).toContain(v.ok ? null : v.reason);
    expect(await run('function handler(w) { w.payload = 1; return w; }')).toMatchObject({ ok: true });
  });

  test('a native loop QuickJS cannot interrupt is cut off by killing its thread, within the grace', async () => {
    // Filling a 1e5-element array made with `new Array(n)` runs in native code for seconds, and the
    // loop never ends: uncut, this test would run into jest's timeout (no clock bound of its own).
    const v = await run('function handler(w) { const a = []; for (;;) a.push(new Array(100000).fill(1)); }');
    expect(v.ok).toBe(false);
    expect(await run('function handler(w) { w.payload = 2; return w; }')).toMatchObject({ ok: true });
  });

  test('no Node: process, require and import() are not there', async () => {
    const v = await run('function handler(w) { w.payload = [typeof process, typeof require, typeof globalThis.process, typeof module, typeof fetch, typeof setTimeout]; return w; }');
    expect(v).toMatchObject({ ok: true, request: { body: '["undefined","undefined","undefined","undefined","undefined","undefined"]' } });
    const imported = await run('function handler(w) { import("node:fs"); return w; }');
    // import() only makes a promise that no module loader will ever settle: nothing is loaded.
    expect(imported.ok).toBe(true);
    expect(await run('function handler(w) { require("fs"); return w; }')).toMatchObject({ ok: false, reason: 'error' });
  });

  test("prototype pollution stays inside the endpoint's own sandbox", async () => {
    await run('Object.prototype.polluted = "yes"; Array.prototype.push = null; function handler(w) { return w; }', 'ep_a:1');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const other = await run('function handler(w) { w.payload = [({}).polluted === undefined, typeof [].push]; return w; }', 'ep_b:1');
    expect(other).toMatchObject({ ok: true, request: { body: '[true,"function"]' } });
  });
});

test('the handler receives what transformationInput builds from the envelope', async () => {
  const v = await run('function handler(w) { w.payload = { ...w }; return w; }');
  if (!v.ok || v.request.kind !== 'send') throw new Error('expected a request');
  expect(JSON.parse(v.request.body)).toEqual(transformationInput(envelope, URL_));
});

describe('no state carries from one delivery to the next, though the compiled code is kept per key', () => {
  // One thread, so every call of a key runs in the same kept runtime.
  let one: SandboxPool;
  beforeAll(() => {
    one = createSandboxPool({ threads: 1, timeoutMs: 1500 });
  });
  afterAll(() => one.close());
  const twice = async (code: string, key: string) => {
    const bodies: unknown[] = [];
    for (let i = 0; i < 2; i++) {
      const v = await runTransformation(one, { key, code, envelope, url: URL_, nowMs: NOW });
      if (!v.ok) throw new Error(`${v.code}: ${v.message}`);
      bodies.push(v.request.kind === 'send' ? JSON.parse(v.request.body) : null);
    }
    return bodies;
  };

  test.each([
    ['a top-level let', 'let calls = 0; function handler(w) { calls++; w.payload = calls; return w; }'],
    ['a top-level const object', 'const seen = []; function handler(w) { seen.push(w.eventId); w.payload = seen.length; return w; }'],
    ['a var and a sloppy global', 'var n = 0; function handler(w) { n++; try { leaked = (typeof leaked === "number" ? leaked : 0) + 1; } catch { leaked = 0; } w.payload = n + (typeof leaked === "number" ? leaked : 0); return w; }'],
    ['a property on globalThis', '"use strict"; function handler(w) { let c = 1; try { globalThis.count = (globalThis.count ?? 0) + 1; c = globalThis.count; } catch {} w.payload = c; return w; }'],
    ['a property on a built-in', 'function handler(w) { try { JSON.count = (JSON.count ?? 0) + 1; } catch {} w.payload = JSON.count ?? 1; return w; }'],
    ['a property on Object.prototype', 'function handler(w) { try { Object.prototype.count = (({}).count ?? 0) + 1; } catch {} w.payload = ({}).count ?? 1; return w; }'],
    ['a generator prototype (reached only through syntax)', 'function handler(w) { const p = Object.getPrototypeOf(function* () {}); try { p.count = (p.count ?? 0) + 1; } catch {} w.payload = p.count ?? 1; return w; }'],
    ['a property on the function around the code (arguments.callee)', 'const f = arguments.callee; function handler(w) { try { f.count = (f.count ?? 0) + 1; } catch {} w.payload = f.count ?? 1; return w; }'],
    ['a property on that function\'s prototype object', 'const p = arguments.callee.prototype; function handler(w) { try { p.count = (p.count ?? 0) + 1; } catch {} w.payload = p.count ?? 1; return w; }'],
    ['a property on the caller of the handler', 'function handler(w) { let c = 1; try { const f = handler.caller; f.count = (f.count ?? 0) + 1; c = f.count; } catch {} w.payload = c; return w; }'],
    ['an iterator helper\'s prototype', 'function handler(w) { const p = Object.getPrototypeOf([].values().map((x) => x)); try { p.count = (p.count ?? 0) + 1; } catch {} w.payload = p.count ?? 1; return w; }'],
    ['Iterator.from\'s wrapper prototype', 'function handler(w) { const p = Object.getPrototypeOf(Iterator.from({ next() { return { done: true }; } })); try { p.count = (p.count ?? 0) + 1; } catch {} w.payload = p.count ?? 1; return w; }'],
    ['a changed input object', 'function handler(w) { w.headers.count = String(Number(w.headers.count ?? 0) + 1); w.payload = Number(w.headers.count); return w; }'],
  ])('%s: each call sees the first call’s state', async (_name, code) => {
    expect(await twice(code, `ep_state:${_name}`)).toEqual([1, 1]);
  });

  test('the compiled runtime is reused (kept per key) and memory is reported', async () => {
    await twice('function handler(w) { return w; }', 'ep_c:1');
    const memory = await one.memory();
    expect(memory.threads).toBe(1);
    expect(memory.cached).toBeGreaterThanOrEqual(1);
    expect(memory.wasmBytes).toBeGreaterThan(0);
  });

  test('frozen built-ins still let a handler override inherited names on its own objects', async () => {
    const code = '"use strict"; function handler(w) { const o = {}; o.toString = () => "mine"; o.constructor = 1; const e = new Error("x"); e.name = "Mine"; const a = []; a.push = 2; w.payload = [String(o), o.constructor, e.name, a.push, Object.keys(o)]; return w; }';
    expect(await twice(code, 'ep_override:1')).toEqual([
      ['mine', 1, 'Mine', 2, ['toString', 'constructor']],
      ['mine', 1, 'Mine', 2, ['toString', 'constructor']],
    ]);
  });

  test('code that tries to close the wrapper early is a syntax error', async () => {
    expect(await one.compile('}); let calls = 0; (function () { function handler(w) { calls++; return w; }')).toMatchObject({ ok: false, code: 'syntax_error' });
  });
});

test('two threads each keep their copy of a compiled transformation', async () => {
  for (let i = 0; i < 4; i++) expect(await run('function handler(w) { w.payload = 1; return w; }', 'ep_d:1')).toMatchObject({ ok: true });
  const memory = await pool.memory();
  expect(memory.threads).toBe(2);
  expect(memory.cached).toBeGreaterThanOrEqual(1);
});

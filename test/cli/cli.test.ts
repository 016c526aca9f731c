import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fastPolicy, startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { defaultAppMode, REPO_ROOT } from '../support/spawn-app.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * The `postern` command end to end, as a process against a running Postern, with its config in a
 * temporary XDG_CONFIG_HOME: login, events send and send-batch, tail, endpoints, deliveries show, redeliver,
 * recover, verify and listen; exit codes and --json.
 */

let postern: TestPostern;
let receiver: TestReceiver;
let apiKey: string;
let xdg: string;

/** A running `postern` process: its output so far, line by line, and its exit. */
interface Running {
  child: ChildProcess;
  stdout: string[];
  stderr: string[];
  exited: Promise<number | null>;
}

/**
 * Starts `postern`. `keepStdin`: its standard input stays open (a pipe nobody writes to) rather than
 * ending at once; `detached`: in a process group of its own, as a terminal's foreground job is.
 */
function start(args: string[], opts: { stdin?: string; env?: Record<string, string>; bin?: boolean; keepStdin?: boolean; detached?: boolean } = {}): Running {
  // Compiled mode (CI, after the build): the bin runs packages/cli/dist/main.js itself.
  const entry = opts.bin || defaultAppMode() === 'compiled' ? ['packages/cli/bin/postern.mjs'] : ['--conditions=development', '--import', 'tsx', 'packages/cli/src/main.ts'];
  const child = spawn(process.execPath, [...entry, ...args], { cwd: REPO_ROOT, env: { ...process.env, NODE_OPTIONS: '', NO_COLOR: '1', XDG_CONFIG_HOME: xdg, POSTERN_URL: '', POSTERN_API_KEY: '', ...opts.env }, stdio: ['pipe', 'pipe', 'pipe'], detached: opts.detached ?? false });
  const running: Running = { child, stdout: [], stderr: [], exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))) };
  const collect = (into: string[]) => {
    let partial = '';
    return (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      into.push(...lines);
    };
  };
  child.stdout!.on('data', collect(running.stdout));
  child.stderr!.on('data', collect(running.stderr));
  if (!opts.keepStdin) child.stdin!.end(opts.stdin ?? '');
  spawned.push(running);
  return running;
}

async function run(args: string[], opts: { stdin?: string; env?: Record<string, string>; bin?: boolean } = {}) {
  const r = start(args, opts);
  const code = await r.exited;
  return { code, stdout: r.stdout.join('\n'), stderr: r.stderr.join('\n'), json: () => JSON.parse(r.stdout[0] ?? 'null') };
}

/** Every process started, killed in afterAll if still running. */
const spawned: Running[] = [];

beforeAll(async () => {
  postern = await startPostern();
  receiver = await startReceiver(() => 200);
  apiKey = (await postern.createOrg('cli')).apiKey;
  xdg = mkdtempSync(join(tmpdir(), 'postern-cli-'));
});

afterAll(async () => {
  // A test that failed half-way leaves its tail or listen running.
  for (const r of spawned) if (r.child.exitCode === null) r.child.kill('SIGKILL');
  await postern.close();
  await receiver.close();
  rmSync(xdg, { recursive: true, force: true });
});

test('not logged in: exit 2 and what to do; login checks the key and stores it 0600 under XDG_CONFIG_HOME', async () => {
  const before = await run(['endpoints', 'ls']);
  expect(before.code).toBe(2);
  expect(before.stderr).toMatch(/not logged in: run postern login/);

  const refused = await run(['login', '--url', postern.baseUrl], { stdin: 'pk_not_a_key\n' });
  expect(refused.code).toBe(1);
  expect(refused.stderr).toMatch(/401 unauthorized/);

  const login = await run(['login', '--url', postern.baseUrl], { stdin: `${apiKey}\n` });
  expect(login.stderr).toBe('');
  expect(login.code).toBe(0);
  const path = join(xdg, 'postern', 'config.json');
  expect(login.stdout).toContain(path);
  expect(statSync(path).mode & 0o777).toBe(0o600);
  expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({ baseUrl: postern.baseUrl, apiKey });

  // logout removes the file; commands are then not logged in; a second logout says so; login again.
  const logout = await run(['logout']);
  expect([logout.code, logout.stdout]).toEqual([0, `Logged out: removed ${path}`]);
  expect(existsSync(path)).toBe(false);
  expect((await run(['endpoints', 'ls'])).code).toBe(2);
  expect((await run(['--json', 'logout'])).json()).toEqual({ removed: false, configPath: path });
  expect((await run(['login', '--url', postern.baseUrl], { stdin: `${apiKey}\n` })).code).toBe(0);
}, 90_000);

test('local mistakes are usage errors (exit 2) naming what to fix: a broken config file, an empty idempotency key, a batch file whose events is no array, a port in use', async () => {
  const other = mkdtempSync(join(tmpdir(), 'postern-cli-bad-'));
  try {
    const path = join(other, 'postern', 'config.json');
    const env = { XDG_CONFIG_HOME: other };
    expect((await run(['login', '--url', postern.baseUrl], { stdin: `${apiKey}\n`, env })).code).toBe(0);
    writeFileSync(path, '{broken');
    const broken = await run(['endpoints', 'ls'], { env });
    expect([broken.code, broken.stderr]).toEqual([2, `postern: ${path} is not JSON; run postern login again (or remove it with postern logout)`]);
    writeFileSync(path, JSON.stringify({ apiKey }));
    const missing = await run(['endpoints', 'ls'], { env });
    expect([missing.code, missing.stderr]).toEqual([2, `postern: ${path} is not a valid postern config (baseUrl is missing or not text); run postern login again`]);

    const emptyKey = await run(['events', 'send', 'cli.test', '--data', '{}', '--idempotency-key', '']);
    expect([emptyKey.code, emptyKey.stderr]).toEqual([2, 'postern: --idempotency-key is empty: give a key of 1 to 200 characters, or leave the option out']);

    const notArray = await run(['events', 'send-batch', '--file', '-'], { stdin: '{"events":5}' });
    expect([notArray.code, notArray.stderr]).toEqual([2, 'postern: --file -: "events" must be an array of events']);

    const taken = await startReceiver(() => 200);
    try {
      const port = Number(new URL(taken.url).port);
      const inUse = await run(['listen', String(port)]);
      expect([inUse.code, inUse.stderr]).toEqual([2, `postern: port ${port} is in use on 127.0.0.1: pick another, or 0 for any free one`]);
    } finally {
      await taken.close();
    }
  } finally {
    rmSync(other, { recursive: true, force: true });
  }
}, 90_000);

let endpointId = '';
let secret = '';

test('endpoints add, ls, show, pause, resume and rotate, as JSON and as text', async () => {
  const added = await run(['--json', 'endpoints', 'add', receiver.url, '--events', 'invoice.paid,invoice.failed', '--policy', 'standard']);
  expect(added.code).toBe(0);
  ({ id: endpointId, secret } = added.json());
  expect(endpointId).toMatch(/^ep_/);
  expect(added.json().eventTypes).toEqual(['invoice.paid', 'invoice.failed']);

  const ls = await run(['endpoints', 'ls']);
  expect(ls.stdout).toContain(endpointId);
  expect(ls.stdout).toContain(receiver.url);

  expect((await run(['--json', 'endpoints', 'pause', endpointId])).json().status).toBe('paused');
  const resumed = await run(['endpoints', 'resume', endpointId]);
  expect(resumed.stdout).toBe(`${endpointId} is active`);
  const rotated = await run(['--json', 'endpoints', 'rotate', endpointId]);
  expect(rotated.json().secret).toMatch(/^whsec_/);
  expect(rotated.json().secret).not.toBe(secret);
  secret = rotated.json().secret;

  const missing = await run(['endpoints', 'show', 'ep_00000000000000000000000000']);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toMatch(/404 not_found/);
}, 90_000);

test('tail follows an event sent with events send; deliveries show, redeliver and recover act on it', async () => {
  const tail = start(['--json', 'tail', '--endpoint', endpointId]);
  await waitUntil('tail to connect', () => tail.stderr.some((l) => l.includes('following deliveries')), 30_000);

  const file = join(xdg, 'event.json');
  writeFileSync(file, JSON.stringify({ invoiceId: 'in_1', amountCents: 4200 }));
  const sent = await run(['--json', 'events', 'send', 'invoice.paid', '--data', `@${file}`, '--idempotency-key', 'cli-1']);
  expect(sent.code).toBe(0);
  const deliveryId = sent.json().deliveries[0].id as string;
  const again = await run(['--json', 'events', 'send', 'invoice.paid', '--data', `@${file}`, '--idempotency-key', 'cli-1']);
  expect(again.json().id).toBe(sent.json().id);

  const line = await waitUntil('the attempt on tail', () => tail.stdout.map((l) => JSON.parse(l)).find((d) => d.deliveryId === deliveryId && d.status === 'succeeded'), 30_000);
  expect(line).toMatchObject({ endpointId, eventType: 'invoice.paid', attempt: 1, responseStatus: 200 });
  tail.child.kill('SIGINT');
  expect(await tail.exited).toBe(0);

  const shown = await run(['deliveries', 'show', deliveryId]);
  expect(shown.code).toBe(0);
  expect(shown.stdout).toContain(`${deliveryId}  succeeded`);
  expect(shown.stdout).toMatch(/attempt 1 .* → 200/);
  expect(shown.stdout).toContain('> webhook-id:');

  const redelivered = await run(['--json', 'redeliver', deliveryId]);
  expect(redelivered.code).toBe(0);
  expect(redelivered.json().delivery.redeliveredFromId).toBe(deliveryId);
  const recovered = await run(['recover', endpointId, '--since', '2h']);
  expect(recovered.code).toBe(0);
  expect(recovered.stdout).toMatch(/^0 deliveries sent again/);
  const badSince = await run(['recover', endpointId, '--since', 'yesterday']);
  expect(badSince.code).toBe(2);
  const badData = await run(['events', 'send', 'invoice.paid', '--data', '{nope']);
  expect(badData.code).toBe(2);
  expect(badData.stderr).toMatch(/--data is not JSON/);
}, 120_000);

test('events send-batch: NDJSON of 150 events in two requests, a bad line refused alone (exit 1); a JSON array on stdin as --json', async () => {
  const lines = Array.from({ length: 150 }, (_, n) => JSON.stringify({ type: 'invoice.paid', data: { n }, idempotencyKey: `cli-batch-${n}` }));
  lines[41] = '{"type":"webhook.test","data":{}}';
  lines[42] = '{"type":"invoice.paid","data":{"amount":1.0},"idempotencyKey":"cli-batch-raw"}';
  const file = join(xdg, 'events.ndjson');
  writeFileSync(file, `${lines.join('\n')}\n`);
  const sentBefore = receiver.requests.length;
  const text = await run(['events', 'send-batch', '--file', file]);
  expect(text.code).toBe(1);
  const out = text.stdout.split('\n');
  expect(out).toHaveLength(151);
  expect(out[0]).toMatch(/^line 1: evt_\w+ accepted: 1 delivery$/);
  expect(out[41]).toBe('line 42: refused 400 invalid_request: type: webhook.test is reserved; use POST /v1/endpoints/:id/test');
  expect(out[150]).toBe('149 accepted, 1 refused');
  expect(text.stderr).toBe('postern: 1 of 150 events were refused');
  await receiver.waitForRequests(sentBefore + 149, 30_000);
  // The data went as written.
  const rawId = out[42]!.split(' ')[2];
  expect(receiver.requests.find((r) => r.headers['webhook-id'] === rawId)?.body).toMatch(/"data":\{"amount":1\.0\}\}$/);

  // The same events again, as a JSON array on stdin: every one is already accepted, so exit 0.
  const again = await run(['--json', 'events', 'send-batch', '--file', '-'], { stdin: JSON.stringify(lines.slice(0, 3).map((l) => JSON.parse(l))) });
  expect(again.code).toBe(0);
  const results = again.stdout.split('\n').map((l) => JSON.parse(l));
  expect(results).toEqual([0, 1, 2].map((index) => ({ index, status: 202, id: out[index]!.split(' ')[2], deliveries: [expect.objectContaining({ endpointId })], idempotentReplayed: true })));

  const missing = await run(['events', 'send-batch', '--file', join(xdg, 'nope.ndjson')]);
  expect(missing.code).toBe(2);
  expect(missing.stderr).toMatch(/--file .*nope\.ndjson: ENOENT/);
  writeFileSync(file, '{"type":"a.b","data":1}\nnot json\n');
  const badLine = await run(['events', 'send-batch', '--file', file]);
  expect(badLine.code).toBe(2);
  expect(badLine.stderr).toMatch(/line 2 is not JSON/);
}, 120_000);

test('verify checks a saved request offline: 0 when it verifies, 4 when the body was changed', async () => {
  const got = await waitUntil('a request at the receiver', () => receiver.requests.find((r) => r.headers['webhook-signature']));
  const headers = Object.entries(got.headers).map(([k, v]) => `${k}: ${String(v)}`).join('\r\n');
  const saved = `POST /hook HTTP/1.1\r\n${headers}\r\n\r\n${got.body}`;
  // Signed with the secret of the time: the rotated-out one still signed it, both are on the header.
  const ok = await run(['verify', '--secret', secret, '--tolerance', '0'], { stdin: saved });
  expect(ok.stdout).toMatch(/^valid: evt_/);
  expect(ok.code).toBe(0);
  const tampered = await run(['--json', 'verify', '--secret', secret, '--tolerance', '0'], { stdin: saved.replace('in_1', 'in_2') });
  expect(tampered.code).toBe(4);
  expect(tampered.json()).toMatchObject({ valid: false, reason: 'no signature matches this secret' });
}, 60_000);

test('listen (through the bin, as npx postern runs it) receives and verifies, then deletes its endpoint', async () => {
  const listening = start(['--json', 'listen', '0', '--events', 'order.created'], { bin: true, keepStdin: true });
  const first = await waitUntil('listen to start', () => (listening.stdout[0] ? JSON.parse(listening.stdout[0]) : undefined), 30_000);
  expect(first.endpointId).toMatch(/^ep_/);
  const client = postern.client(apiKey);
  await postern.api('PATCH', `/v1/endpoints/${first.endpointId}`, { key: apiKey, body: { policy: fastPolicy(1) } });
  await client.events.create({ type: 'order.created', data: { orderId: 'o_1' } });
  const received = await waitUntil('the request at listen', () => listening.stdout.slice(1).map((l) => JSON.parse(l)).find((r) => r.verified !== undefined), 30_000);
  expect(received).toMatchObject({ method: 'POST', verified: true, answered: 200 });
  expect(JSON.parse(received.body).data).toEqual({ orderId: 'o_1' });
  listening.child.kill('SIGTERM');
  expect(await listening.exited).toBe(0);
  expect(listening.stdout.some((l) => l.includes(`"deleted":"${first.endpointId}"`))).toBe(true);
  expect((await postern.api('GET', `/v1/endpoints/${first.endpointId}`, { key: apiKey })).status).toBe(404);
}, 90_000);

/** Starts `postern listen` through the bin in a process group of its own; resolves with its endpoint id once it listens. */
async function startListening(opts: { keepStdin: boolean }): Promise<{ listening: Running; endpointId: string }> {
  const listening = start(['--json', 'listen', '0'], { bin: true, detached: true, keepStdin: opts.keepStdin });
  const first = await waitUntil('listen to start', () => (listening.stdout[0] ? JSON.parse(listening.stdout[0]) : undefined), 30_000);
  expect((await postern.api('GET', `/v1/endpoints/${first.endpointId}`, { key: apiKey })).status).toBe(200);
  return { listening, endpointId: first.endpointId };
}

test.each(['SIGINT', 'SIGHUP', 'SIGTERM'] as const)('listen: %s to its whole process group (Ctrl-C under npx reaches every process, and the wrapper passes it on too) deletes the endpoint once', async (signal) => {
  const { listening, endpointId } = await startListening({ keepStdin: true });
  process.kill(-listening.child.pid!, signal);
  expect(await listening.exited).toBe(0);
  const deleted = listening.stdout.slice(1).map((l) => JSON.parse(l));
  expect(deleted).toEqual([{ deleted: endpointId, stoppedBy: signal }]);
  expect(listening.stderr.join('\n')).toBe('');
  expect((await postern.api('GET', `/v1/endpoints/${endpointId}`, { key: apiKey })).status).toBe(404);
}, 90_000);

test('listen: its standard input closing (a pipe: whoever started it is gone) deletes the endpoint', async () => {
  const { listening, endpointId } = await startListening({ keepStdin: true });
  listening.child.stdin!.end();
  expect(await listening.exited).toBe(0);
  expect(listening.stdout.slice(1).map((l) => JSON.parse(l))).toEqual([{ deleted: endpointId, stoppedBy: 'stdin' }]);
  expect((await postern.api('GET', `/v1/endpoints/${endpointId}`, { key: apiKey })).status).toBe(404);
}, 90_000);

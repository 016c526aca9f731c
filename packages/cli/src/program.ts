import { readFileSync } from 'node:fs';
import { Postern, PosternApiError, PosternConnectionError, type LiveStreamQuery } from '@postern/client';
import { LIVE_DELIVERY_STATUSES, verify } from '@postern/shared';
import { Command, CommanderError, Option } from 'commander';
import { configPath, readConfig, removeConfig, writeConfig } from './config-file.js';
import { sinceToMs } from './duration.js';
import { listen } from './listen.js';
import { batchResultLine, deliveryLines, endpointLine, EXIT, liveLine, status, stdoutOutput, type Output } from './output.js';
import { readEventFile, type FileEvent } from './event-file.js';
import { parseSavedRequest } from './saved-request.js';

/** A usage or configuration error: exit code 2, its message on stderr. */
export class UsageError extends Error {}

/** What a command run needs from its surroundings, so tests and `main.ts` pass their own. */
export interface CliEnvironment {
  env: NodeJS.ProcessEnv;
  /** Reads all of stdin (for `verify`, and `login` without `--key` when stdin is not a terminal). */
  readStdin(): Promise<string>;
  /** Asks one line on a terminal (`login` without `--key`); null when stdin is not a terminal. */
  ask(question: string): Promise<string | null>;
  /** The clock, epoch ms. */
  now(): number;
}

interface GlobalOptions {
  url?: string;
  key?: string;
  json?: boolean;
}


/** Events per request of `events send-batch`: the API's limit. */
const BATCH_EVENTS = 100;

/**
 * The `postern` command (docs/cli.md). Credentials come from `--url`/`--key`, else
 * `POSTERN_URL`/`POSTERN_API_KEY`, else the file `postern login` wrote. Resolves with the exit
 * code ({@link EXIT}); never calls `process.exit` itself.
 */
export async function runCli(argv: readonly string[], io: CliEnvironment): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync(argv as string[], { from: 'user' });
    return Number(process.exitCode ?? EXIT.ok);
  } catch (err) {
    return reportError(err, Boolean((program.opts() as GlobalOptions).json));
  }
}

function reportError(err: unknown, json: boolean): number {
  if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
  const [code, kind, message] =
    err instanceof PosternApiError
      ? [EXIT.apiError, err.code, `Postern answered ${err.status} ${err.code}: ${err.message}`]
      : err instanceof PosternConnectionError
        ? [EXIT.unreachable, 'unreachable', err.message]
        : err instanceof UsageError
          ? [EXIT.usage, 'usage', err.message]
          : [EXIT.apiError, 'error', (err as Error).message ?? String(err)];
  if (json) process.stderr.write(`${JSON.stringify({ error: { code: kind, message } })}\n`);
  else process.stderr.write(`postern: ${message}\n`);
  return code;
}

function buildProgram(io: CliEnvironment): Command {
  const program = new Command('postern')
    .description('Send events, watch deliveries live, manage endpoints and check signatures against a Postern instance.')
    .option('--url <url>', 'Postern base URL (default: POSTERN_URL, or the one postern login stored)')
    .option('--key <apiKey>', 'API key (default: POSTERN_API_KEY, or the one postern login stored)')
    .option('--json', 'print JSON (one value per line) for scripts')
    .exitOverride()
    .showHelpAfterError()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });

  const globals = () => program.opts<GlobalOptions>();
  const out = (): Output => stdoutOutput(Boolean(globals().json));
  const client = (): Postern => {
    const g = globals();
    let stored: ReturnType<typeof readConfig>;
    try {
      stored = readConfig(configPath(io.env));
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const baseUrl = g.url ?? (io.env.POSTERN_URL || stored?.baseUrl);
    const apiKey = g.key ?? (io.env.POSTERN_API_KEY || stored?.apiKey);
    if (!baseUrl || !apiKey) throw new UsageError('not logged in: run postern login --url <url> (or pass --url and --key, or set POSTERN_URL and POSTERN_API_KEY)');
    return new Postern({ baseUrl, apiKey });
  };

  program
    .command('login')
    .description("check an API key and store it with the base URL in the user's config dir (file mode 0600)")
    .option('--url <url>', 'Postern base URL', undefined)
    .option('--key <apiKey>', 'the API key (default: asked for, or read from stdin)')
    .action(async (opts: { url?: string; key?: string }) => {
      const baseUrl = opts.url ?? globals().url ?? (io.env.POSTERN_URL || 'http://localhost:3000');
      const apiKey = (opts.key ?? globals().key ?? (io.env.POSTERN_API_KEY || ((await io.ask('API key (pk_…): ')) ?? (await io.readStdin())))).trim();
      if (!apiKey) throw new UsageError('no API key: pass --key, set POSTERN_API_KEY or pipe it on stdin');
      let me;
      try {
        me = await new Postern({ baseUrl, apiKey }).me();
      } catch (err) {
        if (err instanceof TypeError) throw new UsageError(err.message);
        throw err;
      }
      const path = configPath(io.env);
      writeConfig(path, { baseUrl, apiKey });
      const o = out();
      if (o.json) o.value({ baseUrl, orgId: me.orgId, configPath: path });
      else o.line(`Logged in to ${baseUrl} as org ${me.orgId}; saved to ${path}`);
    });

  program
    .command('logout')
    .description('remove the stored base URL and API key (the file postern login wrote); the key itself stays valid until revoked')
    .action(() => {
      const path = configPath(io.env);
      const removed = removeConfig(path);
      const o = out();
      if (o.json) o.value({ removed, configPath: path });
      else o.line(removed ? `Logged out: removed ${path}` : `Not logged in: no ${path}`);
    });

  const events = program.command('events').description('send events');
  events
    .command('send <type>')
    .description('send an event to every subscribed endpoint')
    .requiredOption('--data <json>', 'the event data: JSON, or @file.json to read it from a file')
    .option('--idempotency-key <key>', 'a repeat with the same key within 24 h changes nothing')
    .action(async (type: string, opts: { data: string; idempotencyKey?: string }) => {
      let text = opts.data;
      if (text.startsWith('@')) {
        try {
          text = readFileSync(text.slice(1), 'utf8');
        } catch (err) {
          throw new UsageError(`--data ${opts.data}: ${(err as Error).message}`);
        }
      }
      let data: unknown;
      try {
        data = JSON.parse(text);
      } catch (err) {
        throw new UsageError(`--data is not JSON: ${(err as Error).message}`);
      }
      if (opts.idempotencyKey === '') throw new UsageError('--idempotency-key is empty: give a key of 1 to 200 characters, or leave the option out');
      const accepted = await client().events.create({ type, data, ...(opts.idempotencyKey !== undefined ? { idempotencyKey: opts.idempotencyKey } : {}) } as never);
      const o = out();
      if (o.json) return o.value(accepted);
      o.line(`${accepted.id} accepted: ${accepted.deliveries.length} ${accepted.deliveries.length === 1 ? 'delivery' : 'deliveries'}`);
      for (const d of accepted.deliveries) o.line(`  ${d.id} → ${d.endpointId}`);
    });

  events
    .command('send-batch')
    .description('send many events from a file, up to 100 a request: a JSON array, {"events": [...]}, or NDJSON (one event per line)')
    .requiredOption('--file <path>', 'the file of events; - reads stdin')
    .action(async (opts: { file: string }) => {
      let text: string;
      try {
        text = opts.file === '-' ? await io.readStdin() : readFileSync(opts.file, 'utf8');
      } catch (err) {
        throw new UsageError(`--file ${opts.file}: ${(err as Error).message}`);
      }
      let fileEvents: FileEvent[];
      try {
        fileEvents = readEventFile(text);
      } catch (err) {
        throw new UsageError(`--file ${opts.file}: ${(err as Error).message}`);
      }
      const o = out();
      const postern = client();
      let refused = 0;
      for (let start = 0; start < fileEvents.length; start += BATCH_EVENTS) {
        const chunk = fileEvents.slice(start, start + BATCH_EVENTS);
        const { results } = await postern.events.createMany(chunk.map((f) => f.event));
        results.forEach((result, i) => {
          const from = chunk[i]!;
          if ('error' in result) refused++;
          if (o.json) o.value({ index: from.index, ...(from.line === undefined ? {} : { line: from.line }), ...result });
          else o.line(batchResultLine(from.line === undefined ? `event ${from.index + 1}` : `line ${from.line}`, result));
        });
      }
      const accepted = fileEvents.length - refused;
      if (!o.json) o.line(`${accepted} accepted, ${refused} refused`);
      if (refused > 0) {
        process.stderr.write(o.json ? `${JSON.stringify({ error: { code: 'events_refused', message: `${refused} of ${fileEvents.length} events were refused` } })}\n` : `postern: ${refused} of ${fileEvents.length} events were refused\n`);
        process.exitCode = EXIT.apiError;
      }
    });

  program
    .command('tail')
    .description('follow deliveries live, one line per attempt (Ctrl-C to stop)')
    .option('--endpoint <id>', 'only this endpoint')
    .addOption(new Option('--status <status>', 'only changes to this status').choices([...LIVE_DELIVERY_STATUSES]))
    .option('--event-type <type>', 'only this event type (exact, prefix.* or *)')
    .action(async (opts: { endpoint?: string; status?: LiveStreamQuery['status']; eventType?: string }) => {
      const o = out();
      const stop = new AbortController();
      const onSignal = () => stop.abort();
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      const query: LiveStreamQuery = { endpointId: opts.endpoint, status: opts.status, eventType: opts.eventType };
      try {
        for await (const m of client().deliveries.stream(query, { signal: stop.signal, onConnect: (again) => process.stderr.write(again ? 'postern: reconnected\n' : 'postern: following deliveries (Ctrl-C to stop)\n') })) {
          if (m.type === 'reset') {
            if (o.json) o.value({ type: 'reset', reason: m.reason });
            else o.line(`-- some changes were missed (${m.reason}); see the delivery log`);
          } else if (o.json) o.value(m.delivery);
          else o.line(liveLine(m.delivery));
        }
      } finally {
        process.removeListener('SIGINT', onSignal);
        process.removeListener('SIGTERM', onSignal);
      }
    });

  const endpoints = program.command('endpoints').description('manage endpoints');
  endpoints
    .command('ls')
    .description("list the org's endpoints")
    .action(async () => {
      const all = await client().endpoints.list({ limit: 100 }).toArray();
      const o = out();
      if (o.json) return o.value(all);
      if (all.length === 0) o.line('no endpoints yet: postern endpoints add <url>');
      for (const e of all) o.line(endpointLine(e));
    });
  endpoints
    .command('add <url>')
    .description('register an endpoint (prints its signing secret once)')
    .option('--events <types>', 'comma-separated event types it receives (default *)')
    .option('--policy <name>', 'a preset name, e.g. standard')
    .option('--description <text>', 'a note for people')
    .action(async (url: string, opts: { events?: string; policy?: string; description?: string }) => {
      const body: Record<string, unknown> = { url };
      if (opts.events) body.eventTypes = opts.events.split(',').map((t) => t.trim()).filter(Boolean);
      if (opts.policy) body.policy = opts.policy;
      if (opts.description) body.description = opts.description;
      const created = await client().endpoints.create(body as never);
      const o = out();
      if (o.json) return o.value(created);
      o.line(`${created.id} created for ${created.url}`);
      o.line(`secret: ${created.secret}`);
    });
  endpoints
    .command('show <id>')
    .description('one endpoint with its health')
    .action(async (id: string) => {
      const e = await client().endpoints.get(id);
      const o = out();
      if (o.json) return o.value(e);
      o.line(endpointLine(e));
      o.line(`  policy ${e.policyName}; consecutive failures ${e.consecutiveFailures}; last success ${e.lastSuccessAt ?? 'never'}; last failure ${e.lastFailureAt ?? 'never'}`);
    });
  for (const [name, describe] of [
    ['pause', 'pause an endpoint: no attempts until resumed'],
    ['resume', 'resume an endpoint: held deliveries go again'],
  ] as const) {
    endpoints
      .command(`${name} <id>`)
      .description(describe)
      .action(async (id: string) => {
        const e = await client().endpoints[name](id);
        const o = out();
        if (o.json) return o.value(e);
        o.line(`${e.id} is ${e.status}`);
      });
  }
  endpoints
    .command('rotate <id>')
    .description('new signing secret; the old one keeps signing for a grace period')
    .action(async (id: string) => {
      const r = await client().endpoints.rotateSecret(id);
      const o = out();
      if (o.json) return o.value(r);
      o.line(`secret: ${r.secret}`);
      o.line(`the previous secret keeps signing until ${r.previousSecretValidUntil}`);
    });

  program
    .command('deliveries')
    .description('inspect deliveries')
    .command('show <id>')
    .description('a delivery with every attempt: the request sent and the response received')
    .action(async (id: string) => {
      const d = await client().deliveries.get(id);
      const o = out();
      if (o.json) return o.value(d);
      for (const line of deliveryLines(d)) o.line(line);
    });

  program
    .command('redeliver <deliveryId>')
    .description('a new delivery of the same event to the same endpoint')
    .action(async (id: string) => {
      const r = await client().deliveries.redeliver(id);
      const o = out();
      if (o.json) return o.value(r);
      o.line(`${r.delivery.id} queued (redelivery of ${id}): ${status(r.delivery.status)}`);
    });

  program
    .command('recover <endpointId>')
    .description('redeliver what failed at an endpoint since a time (at most 500 a call)')
    .requiredOption('--since <when>', 'a duration back from now (30m, 2h, 7d) or an ISO 8601 time')
    .action(async (id: string, opts: { since: string }) => {
      let sinceMs: number;
      try {
        sinceMs = sinceToMs(opts.since, io.now());
      } catch (err) {
        throw new UsageError((err as Error).message);
      }
      const r = await client().endpoints.recover(id, { since: new Date(sinceMs).toISOString() });
      const o = out();
      if (o.json) return o.value(r);
      o.line(`${r.count} ${r.count === 1 ? 'delivery' : 'deliveries'} sent again${r.remaining ? `; ${r.remaining} more remain: run it again` : ''}`);
    });

  program
    .command('verify')
    .description('check the signature of a saved request (HTTP text on stdin) offline, as a Standard Webhooks receiver would')
    .requiredOption('--secret <secret>', 'the endpoint secret (whsec_…) or public key (whpk_…)')
    .option('--tolerance <seconds>', 'accepted clock skew, s (default 300); 0 = do not check the time', '300')
    .action(async (opts: { secret: string; tolerance: string }) => {
      const tolerance = Number(opts.tolerance);
      if (!Number.isInteger(tolerance) || tolerance < 0) throw new UsageError('--tolerance must be a whole number of seconds ≥ 0');
      let request;
      try {
        request = parseSavedRequest(await io.readStdin());
      } catch (err) {
        throw new UsageError(`stdin is not a saved HTTP request: ${(err as Error).message}`);
      }
      const o = out();
      const result = checkSignature(opts.secret, request.headers, request.body, io.now(), tolerance);
      if (o.json) o.value(result);
      else o.line(result.valid ? `valid: ${result.msgId} signed at ${result.timestamp}` : `invalid: ${result.reason}`);
      if (!result.valid) process.exitCode = EXIT.invalidSignature;
    });

  program
    .command('listen <port>')
    .description('run a local receiver on 127.0.0.1:<port> (0 = any) that prints and verifies what arrives, through a temporary endpoint deleted on exit')
    .option('--events <types>', 'comma-separated event types it receives (default *)')
    .option('--public-url <url>', 'the URL Postern should send to (a tunnel), default http://127.0.0.1:<port>/')
    .option('--respond <status>', 'the status to answer with (default 200)', '200')
    .action(async (port: string, opts: { events?: string; publicUrl?: string; respond: string }) => {
      const portNumber = Number(port);
      const answer = Number(opts.respond);
      if (!Number.isInteger(portNumber) || portNumber < 0 || portNumber > 65535) throw new UsageError('<port> must be 0–65535');
      if (!Number.isInteger(answer) || answer < 200 || answer > 599) throw new UsageError('--respond must be an HTTP status, 200–599');
      await listen({
        client: client(),
        port: portNumber,
        eventTypes: opts.events ? opts.events.split(',').map((t) => t.trim()).filter(Boolean) : undefined,
        publicUrl: opts.publicUrl,
        respondWith: answer,
        out: out(),
        now: io.now,
        check: checkSignature,
      }).catch((err: NodeJS.ErrnoException) => {
        // The local receiver could not listen: this machine's problem, not Postern's answer.
        if (err.code === 'EADDRINUSE') throw new UsageError(`port ${portNumber} is in use on 127.0.0.1: pick another, or 0 for any free one`);
        if (err.code === 'EACCES') throw new UsageError(`port ${portNumber} needs privileges this user does not have: pick one above 1023`);
        throw err;
      });
    });

  return program;
}

/** What `verify` (and `listen`, per request) finds. */
export type SignatureCheck = { valid: true; msgId: string; timestamp: string } | { valid: false; reason: string; msgId: string | null };

/**
 * Checks a request's Standard Webhooks headers (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`) against `secret` with the shared signing code; `toleranceS` 0 accepts any
 * timestamp (a request saved long ago).
 */
export function checkSignature(secret: string, headers: Record<string, string | string[] | undefined>, body: string, nowMs: number, toleranceS: number): SignatureCheck {
  const one = (name: string) => {
    const v = headers[name];
    return Array.isArray(v) ? v[0] : v;
  };
  const msgId = one('webhook-id') ?? null;
  const timestamp = one('webhook-timestamp');
  const header = one('webhook-signature');
  if (!msgId || !timestamp || !header) return { valid: false, reason: 'missing webhook-id, webhook-timestamp or webhook-signature header', msgId };
  const timestampS = Number(timestamp);
  if (!Number.isInteger(timestampS)) return { valid: false, reason: 'webhook-timestamp is not Unix seconds', msgId };
  const nowS = toleranceS === 0 ? timestampS : Math.floor(nowMs / 1000);
  let ok: boolean;
  try {
    ok = verify({ secret, msgId, timestampS, body, header, nowS, toleranceS: toleranceS === 0 ? 1 : toleranceS });
  } catch (err) {
    throw new UsageError(`--secret: ${(err as Error).message}`);
  }
  if (ok) return { valid: true, msgId, timestamp: new Date(timestampS * 1000).toISOString() };
  const skewS = Math.abs(Math.floor(nowMs / 1000) - timestampS);
  return { valid: false, reason: toleranceS > 0 && skewS > toleranceS ? `timestamp is ${skewS} s away from now (tolerance ${toleranceS} s)` : 'no signature matches this secret', msgId };
}

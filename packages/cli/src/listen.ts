import { fstatSync } from 'node:fs';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Postern } from '@postern/client';
import { escapeNotPrintable } from '@postern/shared';
import pc from 'picocolors';
import type { Output } from './output.js';
import type { SignatureCheck } from './program.js';

/** Options of {@link listen}. */
export interface ListenOptions {
  client: Postern;
  /** 0 = any free port. */
  port: number;
  eventTypes?: string[];
  /** Where Postern sends; default `http://127.0.0.1:<port>/`. */
  publicUrl?: string;
  respondWith: number;
  out: Output;
  now(): number;
  check(secret: string, headers: IncomingMessage['headers'], body: string, nowMs: number, toleranceS: number): SignatureCheck;
}

const MAX_BODY_BYTES = 1024 * 1024;

/** The signals on which `listen` deletes its endpoint and stops: Ctrl-C, `kill`, the terminal closing. */
export const LISTEN_STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/**
 * Whether standard input is a pipe or a socket, whose end means "stop": whoever started `listen`
 * is gone. Not a file or /dev/null (they end at once), nor a terminal: a background job reading
 * one (`postern listen 4000 &`) would be stopped by SIGTTIN, and a terminal closing is SIGHUP.
 */
function stdinCanSayStop(): boolean {
  if (process.stdin.isTTY) return false;
  try {
    const stat = fstatSync(0);
    return stat.isFIFO() || stat.isSocket();
  } catch {
    return false;
  }
}

/**
 * Resolves with what asked `listen` to stop: one of {@link LISTEN_STOP_SIGNALS} or `stdin` (the
 * pipe feeding it closed). The handlers stay installed until `release()`, so a
 * signal that comes again while the endpoint is being deleted is ignored rather than killing the
 * process half-way: under `npx postern`, Ctrl-C reaches the whole process group (npm, the bin
 * wrapper, this process) and npm and the wrapper each pass it on as well.
 */
function untilStopRequested(): { stopped: Promise<string>; release(): void } {
  let request: (reason: string) => void = () => undefined;
  const stopped = new Promise<string>((resolve) => {
    let asked = false;
    request = (reason) => {
      if (asked) return;
      asked = true;
      resolve(reason);
    };
  });
  const onSignal = (signal: NodeJS.Signals) => request(signal);
  const onStdinEnd = () => request('stdin');
  for (const signal of LISTEN_STOP_SIGNALS) process.on(signal, onSignal);
  const watchStdin = stdinCanSayStop();
  if (watchStdin) {
    process.stdin.on('end', onStdinEnd).on('close', onStdinEnd).on('error', onStdinEnd);
    // Read (and drop) what comes, so the end is seen.
    process.stdin.on('data', () => undefined).resume();
  }
  return {
    stopped,
    release() {
      for (const signal of LISTEN_STOP_SIGNALS) process.removeListener(signal, onSignal);
      if (watchStdin) {
        process.stdin.removeListener('end', onStdinEnd).removeListener('close', onStdinEnd).removeListener('error', onStdinEnd);
        // A stream being read keeps the process alive.
        process.stdin.pause();
        process.stdin.destroy();
      }
    },
  };
}

/**
 * Runs a receiver on 127.0.0.1 for development: creates a temporary endpoint pointing at it, prints
 * each request that arrives with whether its signature verifies (with the endpoint's secret, as a
 * Standard Webhooks receiver would), answers `respondWith`, and on SIGINT, SIGTERM or SIGHUP, or
 * when standard input is a pipe and it closes (not a terminal, a file or /dev/null), deletes
 * the endpoint once and resolves; a signal repeated meanwhile is ignored. The first line says where it listens and the endpoint's id (with `--json`,
 * `{listening, endpointId}`; then one object per request).
 */
export async function listen(options: ListenOptions): Promise<void> {
  const { client, out } = options;
  let secret = '';
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY_BYTES) chunks.push(c);
    });
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const check = options.check(secret, req.headers, body, options.now(), 300);
      res.writeHead(options.respondWith, { 'content-type': 'text/plain' }).end(options.respondWith < 300 ? 'ok' : 'refused by postern listen');
      let type = '';
      try {
        type = (JSON.parse(body) as { type?: string }).type ?? '';
      } catch {
        // Not JSON (a transformation's body): shown as it came.
      }
      if (out.json) {
        out.value({ receivedAt: new Date(options.now()).toISOString(), method: req.method, path: req.url, headers: req.headers, body, verified: check.valid, ...(check.valid ? {} : { reason: check.reason }), answered: options.respondWith });
        return;
      }
      const verdict = check.valid ? pc.green('verified') : pc.red(`NOT verified: ${check.reason}`);
      // Anyone who can reach the port can send these: shown through escapeNotPrintable.
      out.line(`${pc.dim(new Date(options.now()).toISOString().slice(11, 19))} ${req.method} ${escapeNotPrintable(req.url ?? '')} ${escapeNotPrintable(String(type))} ${escapeNotPrintable(String(req.headers['webhook-id'] ?? ''))} attempt ${escapeNotPrintable(String(req.headers['webhook-attempt'] ?? '?'))} ${verdict} → ${options.respondWith}`);
      out.line(pc.dim(`  ${escapeNotPrintable(body.length > 2000 ? `${body.slice(0, 2000)}…` : body)}`));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = options.publicUrl ?? `http://127.0.0.1:${port}/`;
  // Installed before the endpoint exists: a Ctrl-C while it is being created still deletes it.
  const stop = untilStopRequested();
  let endpointId: string;
  try {
    const created = await client.endpoints.create({ url, description: 'postern listen (temporary)', ...(options.eventTypes ? { eventTypes: options.eventTypes } : {}) } as never);
    endpointId = created.id;
    secret = created.secret;
  } catch (err) {
    stop.release();
    server.close();
    throw err;
  }
  if (out.json) out.value({ listening: `http://127.0.0.1:${port}/`, endpointId, url });
  else {
    out.line(`listening on http://127.0.0.1:${port}/ through endpoint ${endpointId} (${url})`);
    out.line(pc.dim('every request is printed and its signature checked; Ctrl-C deletes the endpoint and stops'));
  }
  const reason = await stop.stopped;
  server.close();
  server.closeAllConnections();
  try {
    await client.endpoints.delete(endpointId);
  } finally {
    stop.release();
  }
  if (out.json) out.value({ deleted: endpointId, stoppedBy: reason });
  else out.line(`endpoint ${endpointId} deleted (${reason})`);
}

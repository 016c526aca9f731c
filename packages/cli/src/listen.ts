import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Postern } from '@postern/client';
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

/**
 * Runs a receiver on 127.0.0.1 for development: creates a temporary endpoint pointing at it, prints
 * each request that arrives with whether its signature verifies (with the endpoint's secret, as a
 * Standard Webhooks receiver would), answers `respondWith`, and on SIGINT or SIGTERM deletes the
 * endpoint and resolves. The first line says where it listens and the endpoint's id (with `--json`,
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
      out.line(`${pc.dim(new Date(options.now()).toISOString().slice(11, 19))} ${req.method} ${req.url} ${type} ${String(req.headers['webhook-id'] ?? '')} attempt ${String(req.headers['webhook-attempt'] ?? '?')} ${verdict} → ${options.respondWith}`);
      out.line(pc.dim(`  ${body.length > 2000 ? `${body.slice(0, 2000)}…` : body}`));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const url = options.publicUrl ?? `http://127.0.0.1:${port}/`;
  let endpointId: string;
  try {
    const created = await client.endpoints.create({ url, description: 'postern listen (temporary)', ...(options.eventTypes ? { eventTypes: options.eventTypes } : {}) } as never);
    endpointId = created.id;
    secret = created.secret;
  } catch (err) {
    server.close();
    throw err;
  }
  if (out.json) out.value({ listening: `http://127.0.0.1:${port}/`, endpointId, url });
  else {
    out.line(`listening on http://127.0.0.1:${port}/ through endpoint ${endpointId} (${url})`);
    out.line(pc.dim('every request is printed and its signature checked; Ctrl-C deletes the endpoint and stops'));
  }
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.removeListener('SIGINT', stop);
      process.removeListener('SIGTERM', stop);
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  server.close();
  server.closeAllConnections();
  await client.endpoints.delete(endpointId);
  if (out.json) out.value({ deleted: endpointId });
  else out.line(`endpoint ${endpointId} deleted`);
}

/**
 * The benchmark's webhook receiver, in its own process (`npm run bench` starts it): one node:http
 * server on 127.0.0.1, a port of its choosing, printed as `{"port": N}` on stdout.
 *
 * - `POST /ok`: 200 at once.
 * - `POST /flaky`: 503 when `webhook-attempt` is 1, else 200 (a retry that must fire on time).
 * - `GET /_stats`: what arrived since the last reset: `{count, firstAtMs, lastAtMs, latenciesMs,
 *   withAuthorization}`, where a latency is arrival minus the envelope's `timestamp` (ingest's
 *   acceptance, ms precision) of first attempts and `withAuthorization` counts requests that had an
 *   `authorization` header (the request-settings runs check their auth arrived). `POST /_reset`
 *   clears it.
 *
 * It never verifies signatures: the benchmark measures Postern, not the receiver.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

let count = 0;
let firstAtMs = 0;
let lastAtMs = 0;
let latenciesMs: number[] = [];
let withAuthorization = 0;
/** Requests whose body is the bench transformation's shape (`{"type":…}` first, not the envelope's `{"id":…}`). */
let transformedBodies = 0;

const TIMESTAMP = /"timestamp":"([^"]+)"/;

const server = createServer((req, res) => {
  const url = req.url ?? '/';
  if (url === '/_stats') {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ count, firstAtMs, lastAtMs, latenciesMs, withAuthorization, transformedBodies }));
    return;
  }
  if (url === '/_reset') {
    count = 0;
    firstAtMs = 0;
    lastAtMs = 0;
    latenciesMs = [];
    withAuthorization = 0;
    transformedBodies = 0;
    res.end('reset');
    return;
  }
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const now = Date.now();
    count++;
    if (firstAtMs === 0) firstAtMs = now;
    lastAtMs = now;
    if (req.headers.authorization !== undefined) withAuthorization++;
    if (chunks[0]?.subarray(0, 8).toString() === '{"type":') transformedBodies++;
    const attempt = req.headers['webhook-attempt'];
    if (attempt === '1') {
      const ts = TIMESTAMP.exec(Buffer.concat(chunks).toString('utf8'))?.[1];
      if (ts) latenciesMs.push(now - Date.parse(ts));
    }
    res.statusCode = url.startsWith('/flaky') && attempt === '1' ? 503 : 200;
    res.end('ok');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));

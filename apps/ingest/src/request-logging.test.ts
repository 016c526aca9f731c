import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { ApiError, errorHandler } from './api-error.js';
import { requestLogging } from './request-logging.js';

const lines: Record<string, any>[] = [];
const logger = pino({ level: 'info' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
let children = 0;
const child = logger.child.bind(logger);
logger.child = ((...args: Parameters<typeof logger.child>) => {
  children++;
  return child(...args);
}) as typeof logger.child;

let server: Server;
let base: string;

beforeAll(async () => {
  const app = express();
  app.use(requestLogging(logger));
  app.get('/ok', (_req, res) => void res.json({ ok: true }));
  app.get('/healthz', (_req, res) => void res.json({ ok: true }));
  app.get('/boom', () => {
    throw new Error('kaput');
  });
  app.get('/not-implemented', () => {
    throw new ApiError(501, 'transfer_encoding_not_supported', 'no');
  });
  app.use(errorHandler({ redis: { status: 'ready' } as Redis, logger }));
  server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** Waits until a line matching `pick` was logged (the line is written after the answer). */
async function lineWhere(pick: (l: Record<string, any>) => boolean): Promise<Record<string, any>> {
  const deadline = Date.now() + 2000;
  for (;;) {
    const found = lines.find(pick);
    if (found) return found;
    if (Date.now() > deadline) throw new Error('no such log line');
    await new Promise((r) => setImmediate(r));
  }
}

test('one line per request with the caller id, and no child logger for a request nothing else logs about', async () => {
  const res = await fetch(`${base}/ok?x=1`, { headers: { 'x-request-id': 'caller-1' } });
  expect(res.headers.get('x-request-id')).toBe('caller-1');
  const line = await lineWhere((l) => l.requestId === 'caller-1');
  expect(line).toMatchObject({ level: 30, msg: 'request completed', req: { method: 'GET', url: '/ok?x=1' }, res: { statusCode: 200 } });
  expect(typeof line.responseTime).toBe('number');
  expect(children).toBe(0);
});

test('a 500 logs the cause and an errored line under the same generated request id; probes are not logged', async () => {
  await fetch(`${base}/healthz`);
  const res = await fetch(`${base}/boom`);
  expect(res.status).toBe(500);
  const id = res.headers.get('x-request-id');
  expect(id).toMatch(/^req_[0-9a-f-]{36}$/);
  expect(await lineWhere((l) => l.requestId === id && l.msg === 'unexpected error')).toMatchObject({ level: 50, path: '/boom' });
  expect(await lineWhere((l) => l.requestId === id && l.msg === 'request errored')).toMatchObject({ level: 50, res: { statusCode: 500 } });
  expect(lines.some((l) => l.req?.url === '/healthz')).toBe(false);
});

test('a 501 (a transfer coding the client chose) is logged as a warning, not an error', async () => {
  const res = await fetch(`${base}/not-implemented`);
  expect(res.status).toBe(501);
  const id = res.headers.get('x-request-id');
  expect(await lineWhere((l) => l.requestId === id && l.msg === 'request errored')).toMatchObject({ level: 40, res: { statusCode: 501 } });
});

test('credentials put in a query string are not logged: their values are redacted, other parameters kept', async () => {
  lines.length = 0;
  await fetch(`${base}/ok?api_key=pk_secret123&limit=5&Secret=whsec_abc&x-token=t&status=failed`);
  const line = lines.find((l) => l.msg === 'request completed');
  expect(line?.req.url).toBe('/ok?api_key=[redacted]&limit=5&Secret=[redacted]&x-token=[redacted]&status=failed');
  expect(JSON.stringify(lines)).not.toMatch(/pk_secret123|whsec_abc/);
});

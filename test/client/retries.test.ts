import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Postern, PosternApiError, PosternConnectionError, retryAfterMs, retryDelayMs } from '@postern/client';

/**
 * Issue 15, item 2: the client retries a 503 (Postern could not reach Redis; nothing was stored),
 * waiting what `Retry-After` asks within `maxRetryDelayMs`, and retries a network error only for
 * calls safe to repeat. Against a stub server that scripts its answers.
 */

type Step = (req: IncomingMessage, res: ServerResponse) => void;

let server: Server;
let baseUrl: string;
let script: Step[] = [];
const seen: { method: string; url: string; at: number; idempotencyKey: string | undefined; authorization: string | undefined; org: string | undefined }[] = [];

const unavailable = (retryAfter?: string): Step => (_req, res) => {
  res.writeHead(503, { 'content-type': 'application/json', ...(retryAfter === undefined ? {} : { 'retry-after': retryAfter }) });
  res.end(JSON.stringify({ error: { code: 'service_unavailable', message: 'Redis is unreachable; nothing was stored' } }));
};
const accepted: Step = (_req, res) => {
  res.writeHead(202, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ id: 'evt_1', deliveries: [] }));
};
const hangUp: Step = (req) => req.socket.destroy();

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', at: Date.now(), idempotencyKey: req.headers['idempotency-key'] as string | undefined, authorization: req.headers.authorization, org: req.headers['postern-org'] as string | undefined });
    req.resume();
    req.on('end', () => (script.shift() ?? accepted)(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  script = [];
  seen.length = 0;
});

test('Retry-After is read as seconds or an HTTP date; the wait is bounded', () => {
  expect(retryAfterMs('2', 0)).toBe(2000);
  expect(retryAfterMs(new Date(5000).toUTCString(), 1000)).toBe(4000);
  expect(retryAfterMs('soon', 0)).toBeNull();
  expect(retryAfterMs(null, 0)).toBeNull();
  expect(retryDelayMs(1, 2000, 500)).toBe(500);
  expect(retryDelayMs(1, null, 10_000)).toBe(250);
  expect(retryDelayMs(3, null, 10_000)).toBe(1000);
});

test('a 503 is retried after the Retry-After it names, then the answer is returned', async () => {
  script = [unavailable('1'), accepted];
  const client = new Postern({ baseUrl, apiKey: 'pk_test' });
  const answer = await client.events.create({ type: 'a.b', data: 1 });
  expect(answer.id).toBe('evt_1');
  expect(seen).toHaveLength(2);
  expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(950);
  expect(seen[0]!.authorization).toBe('Bearer pk_test');
});

test('maxRetryDelayMs bounds the wait, and after maxRetries the 503 is thrown as a typed error', async () => {
  script = [unavailable('60'), unavailable('60'), unavailable('60')];
  const client = new Postern({ baseUrl, apiKey: 'pk_test', maxRetries: 2, maxRetryDelayMs: 20 });
  const started = Date.now();
  const err = await client.endpoints.get('ep_1').catch((e: unknown) => e);
  expect(Date.now() - started).toBeLessThan(5000);
  expect(err).toBeInstanceOf(PosternApiError);
  expect(err).toMatchObject({ status: 503, code: 'service_unavailable', message: 'Redis is unreachable; nothing was stored' });
  expect(seen).toHaveLength(3);
});

test('maxRetries 0 turns retrying off', async () => {
  script = [unavailable('0')];
  const client = new Postern({ baseUrl, apiKey: 'pk_test', maxRetries: 0 });
  await expect(client.endpoints.get('ep_1')).rejects.toMatchObject({ status: 503 });
  expect(seen).toHaveLength(1);
});

test('a network error is retried for reads and for calls with an idempotency key, never for a bare create', async () => {
  const client = new Postern({ baseUrl, platformKey: 'ppk_test', orgId: 'org_1', maxRetryDelayMs: 10 });
  script = [hangUp, accepted];
  await client.events.create({ type: 'a.b', data: 1 }, { idempotencyKey: 'k-1' });
  expect(seen.map((s) => s.idempotencyKey)).toEqual(['k-1', 'k-1']);
  expect(seen[0]!.org).toBe('org_1');

  seen.length = 0;
  script = [hangUp, accepted];
  await client.deliveries.get('dlv_1');
  expect(seen).toHaveLength(2);

  seen.length = 0;
  script = [hangUp, accepted];
  const err = await client.events.create({ type: 'a.b', data: 1 }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(PosternConnectionError);
  expect(seen).toHaveLength(1);
});

test('events.createMany after a network error: sent again only when every event carries an idempotency key', async () => {
  const client = new Postern({ baseUrl, apiKey: 'pk_test', maxRetryDelayMs: 10 });
  const results: Step = (_req, res) => {
    res.writeHead(207, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ results: [{ status: 202, id: 'evt_1', deliveries: [] }] }));
  };
  script = [hangUp, results];
  const answer = await client.events.createMany([{ type: 'a.b', data: 1, idempotencyKey: 'k-1' }, { type: 'a.b', data: 2, idempotencyKey: 'k-2' }]);
  expect(answer.results[0]).toEqual({ status: 202, id: 'evt_1', deliveries: [] });
  expect(seen.map((s) => s.url)).toEqual(['/v1/events/batch', '/v1/events/batch']);

  seen.length = 0;
  script = [hangUp, results];
  const err = await client.events.createMany([{ type: 'a.b', data: 1, idempotencyKey: 'k-1' }, { type: 'a.b', data: 2 }]).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(PosternConnectionError);
  expect(seen).toHaveLength(1);
});

test('a proxy error page becomes a typed error with an http_<status> code', async () => {
  script = [(_req, res) => res.writeHead(502, { 'content-type': 'text/html' }).end('<h1>Bad Gateway</h1>')];
  const client = new Postern({ baseUrl, apiKey: 'pk_test' });
  await expect(client.me()).rejects.toMatchObject({ status: 502, code: 'http_502', message: '<h1>Bad Gateway</h1>' });
});

test('a 503 not_durable (stored, not yet confirmed by replicas) is retried only with an idempotency key: a bare create would be a second event', async () => {
  const notDurable: Step = (_req, res) => {
    res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '0' });
    res.end(JSON.stringify({ error: { code: 'not_durable', message: 'the event was written but 0 of 1 replica(s) confirmed the event in time' } }));
  };
  const client = new Postern({ baseUrl, apiKey: 'pk_test', maxRetryDelayMs: 10 });
  script = [notDurable, accepted];
  await expect(client.events.create({ type: 'a.b', data: 1 })).rejects.toMatchObject({ status: 503, code: 'not_durable' });
  expect(seen).toHaveLength(1);
  seen.length = 0;
  script = [notDurable, accepted];
  expect((await client.events.create({ type: 'a.b', data: 1, idempotencyKey: 'body-key' })).id).toBe('evt_1');
  expect(seen).toHaveLength(2);
  seen.length = 0;
  script = [notDurable, accepted];
  expect((await client.events.create({ type: 'a.b', data: 1 }, { idempotencyKey: 'header-key' })).id).toBe('evt_1');
  expect(seen).toHaveLength(2);
});

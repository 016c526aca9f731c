import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { classifyAddress } from '@postern/shared';
import { createGotTransport, type DeliveryTransport, type OutboundRequest } from '@postern/sender';
import { waitUntil } from '../support/wait-until.js';

/**
 * Keep-alive sockets and receivers that close them: Postern closes idle sockets first, and a
 * request that meets a socket the receiver has just closed (before any answer) is sent again on
 * a new socket instead of failing the attempt. Receivers are real servers on 127.0.0.1.
 */

/** How the receiver treats the n-th request (1-based) on one connection. */
type Behaviour = (req: IncomingMessage, res: ServerResponse, nthOnSocket: number) => void;

interface Receiver {
  url: string;
  server: Server;
  /** Requests answered, and requests dropped by closing their socket. */
  counts: { answered: number; dropped: number; connections: number };
  /** Server-side sockets whose peer (Postern) closed first: their 'end' came before the server closed them. */
  closedByClient: number;
  setBehaviour(b: Behaviour): void;
}

const receivers: Receiver[] = [];
const transports: DeliveryTransport[] = [];

const ok: Behaviour = (req, res) => {
  req.resume();
  req.on('end', () => res.end('ok'));
};

async function startReceiver(behaviour: Behaviour, keepAliveTimeoutMs = 5_000): Promise<Receiver> {
  let current = behaviour;
  const perSocket = new WeakMap<Socket, number>();
  const receiver: Receiver = {
    url: '',
    server: createServer((req, res) => {
      const n = (perSocket.get(req.socket) ?? 0) + 1;
      perSocket.set(req.socket, n);
      res.on('finish', () => receiver.counts.answered++);
      current(req, res, n);
    }),
    counts: { answered: 0, dropped: 0, connections: 0 },
    closedByClient: 0,
    setBehaviour: (b) => void (current = b),
  };
  receiver.server.keepAliveTimeout = keepAliveTimeoutMs;
  receiver.server.on('connection', (socket: Socket) => {
    receiver.counts.connections++;
    let serverClosing = false;
    const end = socket.end.bind(socket);
    socket.end = ((...args: Parameters<Socket['end']>) => ((serverClosing = true), end(...args))) as Socket['end'];
    const destroy = socket.destroy.bind(socket);
    socket.destroy = ((err?: Error) => ((serverClosing = true), destroy(err))) as Socket['destroy'];
    // Ahead of the server's own 'end' handler, which ends its side in turn.
    socket.prependListener('end', () => {
      if (!serverClosing) receiver.closedByClient++;
    });
  });
  await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/hook`;
  receivers.push(receiver);
  return receiver;
}

/** Closes the socket of a request without answering: the receiver drops it unprocessed. */
function drop(receiver: Receiver, req: IncomingMessage): void {
  receiver.counts.dropped++;
  req.socket.destroy();
}

function newTransport(idleSocketTimeoutMs?: number): DeliveryTransport {
  const allowList = ['127.0.0.1'];
  const transport = createGotTransport({ allowList, classifyAddress: (a) => classifyAddress(a, allowList), idleSocketTimeoutMs });
  transports.push(transport);
  return transport;
}

const post = (url: string, timeoutMs = 5_000): OutboundRequest => ({
  url,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ data: 'x'.repeat(2_000) }),
  timeout: { ms: timeoutMs, measures: 'whole-response' },
  redirects: { follow: false },
  maxResponseBytesRead: 1024,
});

afterAll(async () => {
  for (const t of transports) t.close();
  for (const r of receivers) {
    r.server.closeAllConnections();
    await new Promise((resolve) => r.server.close(resolve));
  }
});

test('a receiver that closes every kept-alive socket as it is reused: 200 sequential requests, no failure, each answered once', async () => {
  const receiver = await startReceiver((req, res, n) => (n === 1 ? ok(req, res, n) : drop(receiver, req)));
  const transport = newTransport();
  const results = [];
  for (let i = 0; i < 200; i++) results.push(await transport.send(post(receiver.url)));

  const failures = results.filter((r) => r.kind !== 'response' || r.status !== 200);
  expect(failures).toEqual([]);
  expect(receiver.counts.answered).toBe(200);
  // The case was really exercised: most requests met a closed socket first.
  expect(receiver.counts.dropped).toBeGreaterThanOrEqual(90);
});

test('a receiver that closes each socket right after its answer: 200 sequential requests, no failure', async () => {
  const receiver = await startReceiver((req, res) => {
    req.resume();
    // No `connection: close`: the socket looks reusable to Postern until the close arrives.
    req.on('end', () => res.end('ok', () => setImmediate(() => req.socket.destroy())));
  });
  const transport = newTransport();
  const results = [];
  for (let i = 0; i < 200; i++) results.push(await transport.send(post(receiver.url)));
  expect(results.filter((r) => r.kind !== 'response' || r.status !== 200)).toEqual([]);
  expect(receiver.counts.answered).toBe(200);
});

test('a request that fails on a new socket is not sent again', async () => {
  const receiver = await startReceiver((req) => drop(receiver, req));
  const transport = newTransport();
  expect(await transport.send(post(receiver.url))).toEqual({ kind: 'error', code: 'connection_failed:ECONNRESET' });
  expect(receiver.counts).toEqual({ answered: 0, dropped: 1, connections: 1 });
});

test('a reused socket that fails after part of an answer arrived is not sent again', async () => {
  const receiver = await startReceiver((req, res, n) => {
    if (n === 1) return ok(req, res, n);
    // The receiver got this request and started answering: sending it again would duplicate it.
    receiver.counts.dropped++;
    req.socket.write('HTTP/1.1 200 OK\r\ncontent-le');
    req.socket.destroy();
  });
  const transport = newTransport();
  expect(await transport.send(post(receiver.url))).toMatchObject({ kind: 'response', status: 200 });
  const second = await transport.send(post(receiver.url));
  expect(second.kind).toBe('error');
  expect(receiver.counts).toEqual({ answered: 1, dropped: 1, connections: 1 });
});

test('Postern closes an idle keep-alive socket before the receiver does', async () => {
  const receiver = await startReceiver(ok, 5_000);
  const transport = newTransport(200);
  expect(await transport.send(post(receiver.url))).toMatchObject({ kind: 'response', status: 200 });
  await waitUntil('Postern closed its idle socket', () => receiver.closedByClient === 1, 3_000);
  expect(receiver.counts.connections).toBe(1);
});

test('by default Postern closes idle sockets within 4 s, before Node receivers\' 5 s keep-alive timeout', async () => {
  const receiver = await startReceiver(ok, 5_000);
  const transport = newTransport();
  const sentAt = Date.now();
  expect(await transport.send(post(receiver.url))).toMatchObject({ kind: 'response', status: 200 });
  await waitUntil('Postern closed its idle socket', () => receiver.closedByClient === 1, 4_800);
  expect(Date.now() - sentAt).toBeLessThan(4_900);
});

test('the idle timeout does not cut a request that takes longer than it on a reused socket', async () => {
  const receiver = await startReceiver((req, res, n) => {
    req.resume();
    req.on('end', () => setTimeout(() => res.end('ok'), n === 1 ? 0 : 400));
  });
  const transport = newTransport(100);
  expect(await transport.send(post(receiver.url))).toMatchObject({ kind: 'response', status: 200 });
  expect(await transport.send(post(receiver.url))).toMatchObject({ kind: 'response', status: 200 });
  expect(receiver.counts).toMatchObject({ answered: 2, dropped: 0, connections: 1 });
});

describe('under `response-headers` (the attempt ends at the headers)', () => {
  const headersOnly = (url: string, maxResponseBytesRead = 1024): OutboundRequest => ({
    ...post(url),
    timeout: { ms: 1_000, measures: 'response-headers' },
    maxResponseBytesRead,
  });

  test('the rest of a short answer is read in the background and the socket reused', async () => {
    const receiver = await startReceiver(ok);
    const transport = newTransport();
    for (let i = 0; i < 5; i++) expect(await transport.send(headersOnly(receiver.url))).toEqual({ kind: 'response', status: 200, retryAfter: undefined, bodyBytesRead: 0, detail: null });
    expect(receiver.counts).toMatchObject({ answered: 5, connections: 1 });
  });

  test('an answer longer than maxResponseBytesRead closes its socket', async () => {
    const receiver = await startReceiver((req, res) => {
      req.resume();
      req.on('end', () => res.end('x'.repeat(4_096)));
    });
    const transport = newTransport();
    for (let i = 0; i < 3; i++) expect(await transport.send(headersOnly(receiver.url))).toMatchObject({ kind: 'response', status: 200 });
    await waitUntil('Postern closed each socket', () => receiver.closedByClient === 3);
    expect(receiver.counts.connections).toBe(3);
  });

  test('an answer whose body never ends is settled at the headers and its socket closed after the timeout', async () => {
    const receiver = await startReceiver((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200, { 'content-length': '100' }).write('partial'));
    });
    const transport = newTransport();
    const startedAt = Date.now();
    expect(await transport.send(headersOnly(receiver.url))).toMatchObject({ kind: 'response', status: 200 });
    const settledAfterMs = Date.now() - startedAt;
    expect(settledAfterMs).toBeLessThan(1_000);
    await waitUntil('Postern closed the socket', () => receiver.closedByClient === 1, 5_000);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(1_000);
  });
});

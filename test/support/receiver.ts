import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitUntil } from './wait-until.js';

/** One request a test receiver got. `at` is Date.now() when its body had fully arrived. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** How the receiver answers the n-th request (1-based): a status, or full control of the response. */
export type ReceiverBehaviour = (request: ReceivedRequest, n: number, res: ServerResponse) => number | 'handled' | Promise<number | 'handled'>;

/** A real HTTP server on 127.0.0.1:0 that records every request. */
export interface TestReceiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Resolves once at least `count` requests arrived. */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  setBehaviour(b: ReceiverBehaviour): void;
  close(): Promise<void>;
}

/** Starts a receiver; default behaviour answers 200. */
export async function startReceiver(behaviour: ReceiverBehaviour = () => 200, path = '/hook'): Promise<TestReceiver> {
  const requests: ReceivedRequest[] = [];
  let current = behaviour;
  const sockets = new Set<import('node:net').Socket>();
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request: ReceivedRequest = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      requests.push(request);
      Promise.resolve(current(request, requests.length, res)).then((outcome) => {
        if (outcome === 'handled') return;
        res.statusCode = outcome;
        res.end('ok');
      }, () => {
        res.statusCode = 500;
        res.end();
      });
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}${path}`,
    port,
    requests,
    waitForRequests: (count, timeoutMs = 10_000) => waitUntil(`${count} requests at the receiver`, () => (requests.length >= count ? requests : undefined), timeoutMs),
    setBehaviour(b) {
      current = b;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

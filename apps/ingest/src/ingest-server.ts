import { createServer, IncomingMessage, ServerResponse, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { HttpServerTimeoutOptions } from '@postern/shared';
import type { Express } from 'express';
import { answerClientError } from './client-error.js';

/**
 * The HTTP server ingest runs `app` on (not listening yet; `main.ts` and the tests listen):
 * - `timeouts`: header, request and keep-alive timeouts (`httpServerOptions(config)`), so a
 *   stalled client gets 408 and loses its connection; Node's defaults when absent;
 * - `requireHostHeader: false`: an HTTP/1.1 request without `Host` reaches the app, which answers
 *   400 `missing_host` in the API's error shape (`checkHostHeader`) instead of Node's bare 400;
 * - a request Node's parser refuses, or one that times out, is answered in the API's error shape
 *   ({@link answerClientError});
 * - on V8 before 13 (Node 20 and 22), each request and response is created with express's
 *   prototypes ({@link expressMessageClasses}).
 */
export function createIngestServer(app: Express, timeouts?: HttpServerTimeoutOptions): Server {
  const server = createServer({ ...timeouts, requireHostHeader: false, ...(PROTOTYPES_AT_CREATION ? expressMessageClasses(app) : {}) }, app);
  server.on('clientError', answerClientError);
  return server;
}

/**
 * Whether this process's V8 pays for express's per-request prototype change, so that
 * {@link createIngestServer} creates requests with express's prototypes instead: V8 before 13
 * (Node 20 and 22). Measured on a bare express app (docs/benchmarks.md, "Express's prototypes"):
 * CPU per request 0.25 → 0.11 ms on Node 20 and 0.21 → 0.12–0.21 ms on Node 22, but 0.11 →
 * 0.12–0.15 ms on Node 24, whose V8 handles express's own way well and the constructors here less so.
 */
export const PROTOTYPES_AT_CREATION = Number(process.versions.v8.split('.')[0]) < 13;

/**
 * Request and response classes for Node's HTTP server whose objects are created with `app`'s own
 * prototypes (`app.request`, `app.response`, which inherit from `IncomingMessage` and
 * `ServerResponse`), so express's `Object.setPrototypeOf(req, app.request)` on every request finds
 * the prototype already in place and changes nothing.
 *
 * Why: on Node 20's V8, an object whose prototype was changed gets a new hidden class for each
 * property added afterwards, and express and its router add about ten to each request and
 * response: about 5 KB of allocation per object, much of it in the old generation, and code that
 * never sees the same hidden class twice (docs/benchmarks.md, "Express's prototypes"). Requests
 * that enter a mounted sub-app (Bull Board) still change prototypes there, as express does.
 */
export function expressMessageClasses(app: Express): { IncomingMessage: typeof IncomingMessage; ServerResponse: typeof ServerResponse } {
  // Plain constructors calling Node's (which are plain functions too): `Reflect.construct` with
  // a new target gave the same objects but cost more CPU per request than it saved.
  function Request(this: IncomingMessage, socket: Socket): void {
    (IncomingMessage as unknown as (this: IncomingMessage, socket: Socket) => void).call(this, socket);
  }
  Request.prototype = app.request;
  function Response(this: ServerResponse, req: IncomingMessage, options?: unknown): void {
    (ServerResponse as unknown as (this: ServerResponse, req: IncomingMessage, options?: unknown) => void).call(this, req, options);
  }
  Response.prototype = app.response;
  return { IncomingMessage: Request as unknown as typeof IncomingMessage, ServerResponse: Response as unknown as typeof ServerResponse };
}

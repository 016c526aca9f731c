import { createServer, type Server } from 'node:http';
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
 *   ({@link answerClientError}).
 */
export function createIngestServer(app: Express, timeouts?: HttpServerTimeoutOptions): Server {
  const server = createServer({ ...timeouts, requireHostHeader: false }, app);
  server.on('clientError', answerClientError);
  return server;
}

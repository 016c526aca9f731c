import { createServer, type Server } from 'node:http';
import type { HttpServerTimeoutOptions } from '@postern/shared';
import { redisAnswers, type DataLossMonitor, type RedisClient } from '@postern/store';
import { Gauge, type Registry } from 'prom-client';

/** How long `/readyz` waits for Redis to answer PING before naming it failing, ms. */
export const SENDER_READY_TIMEOUT_MS = 1000;

/** What {@link createSenderHttp} reports on. */
export interface SenderHttpDeps {
  /** The sender's metrics registry, served at `/metrics`. */
  registry: Registry;
  /** The worker's Redis connection: readiness pings it. */
  redis: RedisClient;
  /** The running worker; `isRunning()` is false before it starts and once it closes. */
  worker: { isRunning(): boolean };
  /** Redis PING deadline, ms (default {@link SENDER_READY_TIMEOUT_MS}). */
  readyTimeoutMs?: number;
  /** Header, request and keep-alive timeouts (`httpServerOptions(config)`); Node's defaults when absent. */
  timeouts?: HttpServerTimeoutOptions;
  /** Notices Redis losing its data: adds the `redis_data` check and `postern_redis_data_lost`. */
  dataLossMonitor?: DataLossMonitor;
}

/**
 * The sender's small HTTP server (not listening yet: `main.ts` calls `listen(SENDER_PORT)`):
 * - `GET /healthz`: 200 `{"status":"ok"}` while the process runs;
 * - `GET /readyz`: 200 when Redis answers PING and the worker runs, else 503
 *   `{"status":"unavailable","failing":["redis"|"worker", …],"checks":{…}}`;
 * - `GET /metrics`: the registry in Prometheus text format.
 * Anything else is 404; methods other than GET and HEAD are 405.
 */
export function createSenderHttp(deps: SenderHttpDeps): Server {
  const timeoutMs = deps.readyTimeoutMs ?? SENDER_READY_TIMEOUT_MS;
  const monitor = deps.dataLossMonitor;
  if (monitor) {
    new Gauge({
      name: 'postern_redis_data_lost',
      help: 'Whether this process saw Redis lose its data (instance marker gone or replaced): 1 until the process restarts, else 0',
      registers: [deps.registry],
      collect() {
        this.set(monitor.lost ? 1 : 0);
      },
    });
  }
  const json = (res: import('node:http').ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
    res.end(JSON.stringify(body));
  };
  return createServer(deps.timeouts ?? {}, (req, res) => {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('allow', 'GET, HEAD');
      return json(res, 405, { error: { code: 'method_not_allowed', message: 'only GET' } });
    }
    if (path === '/healthz') return json(res, 200, { status: 'ok' });
    if (path === '/readyz') {
      void Promise.all([redisAnswers(deps.redis, timeoutMs), monitor?.check()]).then(([redisOk, data]) => {
        const checks: Record<string, string> = { redis: redisOk ? 'ok' : 'failing', worker: deps.worker.isRunning() ? 'ok' : 'failing' };
        // `unknown` (Redis could not be asked) fails nothing by itself: the redis check says why.
        if (data) checks.redis_data = data === 'lost' ? 'failing' : data;
        const failing = Object.entries(checks).filter(([, v]) => v === 'failing').map(([k]) => k);
        json(res, failing.length === 0 ? 200 : 503, failing.length === 0 ? { status: 'ok', checks } : { status: 'unavailable', failing, checks });
      });
      return;
    }
    if (path === '/metrics') {
      deps.registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': deps.registry.contentType });
          res.end(text);
        },
        () => json(res, 500, { error: { code: 'internal_error', message: 'metrics could not be collected' } }),
      );
      return;
    }
    json(res, 404, { error: { code: 'not_found', message: `no route ${req.method} ${path}` } });
  });
}

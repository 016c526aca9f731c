import { Router } from 'express';
import type { RedisClient } from '@postern/store';
import { Gauge, type Registry } from 'prom-client';
import { redisAnswers, type DataLossMonitor } from '@postern/store';

/** How long `/readyz` waits for Redis to answer PING before naming it failing, ms. */
export const READY_CHECK_TIMEOUT_MS = 2000;

/**
 * `/healthz` (the process answers), `/readyz` (Redis answers PING; else 503 naming `redis`; with a
 * `dataLossMonitor`, also 503 naming `redis_data` once Redis lost its data — see
 * {@link DataLossMonitor}), `/metrics` (Prometheus text from this app's registry, with
 * `postern_redis_data_lost` when there is a monitor) and `/openapi.json`. No auth: they carry no
 * org data. Put them behind the network, not on the public internet.
 */
export function operationsRoutes(deps: { redis: RedisClient; registry: Registry; dataLossMonitor?: DataLossMonitor }): Router {
  const router = Router();
  let openApi: Record<string, unknown> | undefined;
  const monitor = deps.dataLossMonitor;
  if (monitor) registerDataLossGauge(deps.registry, monitor);

  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const redis = (await redisAnswers(deps.redis, READY_CHECK_TIMEOUT_MS)) ? 'ok' : 'failing';
    const checks: Record<string, string> = { redis };
    if (monitor) checks.redis_data = dataCheckStatus(await monitor.check());
    const failing = Object.entries(checks).filter(([, v]) => v === 'failing').map(([k]) => k);
    res.status(failing.length === 0 ? 200 : 503).json(failing.length === 0 ? { status: 'ok', checks } : { status: 'unavailable', failing, checks });
  });
  router.get('/metrics', async (_req, res) => {
    res.setHeader('content-type', deps.registry.contentType);
    res.send(await deps.registry.metrics());
  });
  router.get('/openapi.json', async (_req, res) => {
    // Loaded with the first request: the routes' reference text is not held by an ingest nobody asks.
    openApi ??= (await import('../openapi.js')).buildOpenApiDocument();
    res.json(openApi);
  });
  return router;
}

/** `/readyz`'s word for a data check: `unknown` (Redis could not be asked) fails nothing by itself. */
function dataCheckStatus(check: 'ok' | 'lost' | 'unknown'): 'ok' | 'failing' | 'unknown' {
  return check === 'lost' ? 'failing' : check;
}

/** `postern_redis_data_lost`: 1 once the monitor saw Redis lose its data, else 0. */
function registerDataLossGauge(registry: Registry, monitor: DataLossMonitor): void {
  new Gauge({
    name: 'postern_redis_data_lost',
    help: 'Whether this process saw Redis lose its data (instance marker gone or replaced): 1 until the process restarts, else 0',
    registers: [registry],
    collect() {
      this.set(monitor.lost ? 1 : 0);
    },
  });
}

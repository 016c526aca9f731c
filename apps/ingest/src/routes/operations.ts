import { Router } from 'express';
import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import { redisAnswers } from '@postern/store';
import { buildOpenApiDocument } from '../openapi.js';

/** How long `/readyz` waits for Redis to answer PING before naming it failing, ms. */
export const READY_CHECK_TIMEOUT_MS = 2000;

/**
 * `/healthz` (the process answers), `/readyz` (Redis answers PING; else 503 naming `redis`),
 * `/metrics` (Prometheus text from this app's registry) and `/openapi.json`. No auth: they carry
 * no org data. Put them behind the network, not on the public internet.
 */
export function operationsRoutes(deps: { redis: Redis; registry: Registry }): Router {
  const router = Router();
  let openApi: Record<string, unknown> | undefined;

  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const redis = (await redisAnswers(deps.redis, READY_CHECK_TIMEOUT_MS)) ? 'ok' : 'failing';
    const checks = { redis };
    const failing = Object.entries(checks).filter(([, v]) => v !== 'ok').map(([k]) => k);
    res.status(failing.length === 0 ? 200 : 503).json(failing.length === 0 ? { status: 'ok', checks } : { status: 'unavailable', failing, checks });
  });
  router.get('/metrics', async (_req, res) => {
    res.setHeader('content-type', deps.registry.contentType);
    res.send(await deps.registry.metrics());
  });
  router.get('/openapi.json', (_req, res) => {
    openApi ??= buildOpenApiDocument();
    res.json(openApi);
  });
  return router;
}

import express, { type Express } from 'express';
import { ApiError, errorHandler } from './api-error.js';
import type { AppDeps } from './app-deps.js';
import { requireApiKey } from './auth.js';
import { jsonBody } from './json-body.js';
import { deliveryRoutes } from './routes/deliveries.js';
import { endpointRoutes } from './routes/endpoints.js';
import { eventRoutes } from './routes/events.js';
import { orgRoutes } from './routes/orgs.js';
import { policyRoutes } from './routes/policies.js';
import { notificationRoutes } from './routes/notifications.js';
import { redeliveryRoutes } from './routes/redeliveries.js';

/**
 * Builds the ingest API without listening: tests pass a port-0 listener and their own prefix.
 * Every error is JSON `{error:{code,message}}` with the right status.
 */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const redisOk = await deps.redis.ping().then(() => true, () => false);
    res.status(redisOk ? 200 : 503).json(redisOk ? { status: 'ok' } : { status: 'unavailable', failing: ['redis'] });
  });

  app.use(jsonBody(deps.config.maxBodyBytes));
  app.use(policyRoutes());
  app.use(orgRoutes(deps));
  app.use('/v1', requireApiKey(deps.store));
  app.use(endpointRoutes(deps));
  app.use(eventRoutes(deps));
  app.use(deliveryRoutes(deps));
  app.use(redeliveryRoutes(deps));
  app.use(notificationRoutes(deps));

  app.use((req, _res, next) => next(new ApiError(404, 'not_found', `no route ${req.method} ${req.path}`)));
  app.use(errorHandler(deps));
  return app;
}

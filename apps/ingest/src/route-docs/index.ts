import { AUDIT_LOG_DOCS } from './audit-log.js';
import { DELIVERY_DOCS } from './deliveries.js';
import { ENDPOINT_DOCS } from './endpoints.js';
import { EVENT_DOCS } from './events.js';
import { OPERATIONS_DOCS } from './operations.js';
import { ORG_DOCS } from './orgs.js';
import type { RouteReference } from './route-reference.js';
import { TRANSFORMATION_DOCS } from './transformations.js';

export type { RouteReference } from './route-reference.js';

/**
 * The reference of every route, keyed `method path` as in `API_ROUTES` (`get /v1/endpoints/:id`):
 * its description and examples. `buildOpenApiDocument` puts them in `/openapi.json`; a test fails
 * while a route has none, or an entry names no route.
 */
export const ROUTE_DOCS: Readonly<Record<string, RouteReference>> = {
  ...OPERATIONS_DOCS,
  ...ORG_DOCS,
  ...ENDPOINT_DOCS,
  ...EVENT_DOCS,
  ...DELIVERY_DOCS,
  ...TRANSFORMATION_DOCS,
  ...AUDIT_LOG_DOCS,
};

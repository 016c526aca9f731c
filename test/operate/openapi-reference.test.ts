import { createRequire } from 'node:module';
import { API_ROUTES, buildOpenApiDocument, openApiPath, ROUTE_DOCS, routeKey } from '@postern/ingest';

/**
 * The API reference (`/openapi.json`, the page at `/docs/api`, docs/api/*.md) describes every route
 * and shows an example of every body: a route without a description, a request example (when it
 * takes a body) or an example of each 2xx answer with a body fails here, and so does an example
 * that does not validate against the schema the route documents.
 */

const require = createRequire(import.meta.url);
// ajv is CommonJS; its 2020-12 build matches the document's `jsonSchemaDialect`.
const Ajv2020 = require('ajv/dist/2020') as new (opts: Record<string, unknown>) => { compile(schema: unknown): ((data: unknown) => boolean) & { errors?: unknown[] | null } };

const doc = buildOpenApiDocument() as any;
const operations = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ id: `${method.toUpperCase()} ${path}`, op })));

test('every route has a reference entry, and every entry is a route', () => {
  const routes = new Set(API_ROUTES.map(routeKey));
  expect(API_ROUTES.filter((r) => !(routeKey(r) in ROUTE_DOCS)).map(routeKey)).toEqual([]);
  expect(Object.keys(ROUTE_DOCS).filter((key) => !routes.has(key))).toEqual([]);
});

test('every operation has a description, a request example when it takes a body, and an example of each 2xx answer with a body', () => {
  expect(operations.length).toBe(API_ROUTES.length);
  const missing: string[] = [];
  for (const { id, op } of operations) {
    if (typeof op.description !== 'string' || op.description.trim().length < 40) missing.push(`${id}: description`);
    const body = op.requestBody?.content?.['application/json'];
    if (body && body.example === undefined) missing.push(`${id}: request example`);
    for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
      if (!status.startsWith('2') || !response.content) continue;
      for (const [type, media] of Object.entries(response.content as Record<string, any>)) {
        if (media.example === undefined || media.example === '') missing.push(`${id} ${status} ${type}: example`);
      }
    }
  }
  expect(missing).toEqual([]);
});

test('a route that gives no body (204) has no example of one, and descriptions carry no relative links', () => {
  for (const route of API_ROUTES) {
    const reference = ROUTE_DOCS[routeKey(route)]!;
    for (const status of Object.keys(reference.responses)) {
      expect({ route: routeKey(route), status, documented: String(status) in route.responses && Number(status) !== 204 }).toEqual({ route: routeKey(route), status, documented: true });
    }
    // The same text is read on /docs/api and in docs/api/*.md, whose relative links differ.
    expect({ route: routeKey(route), links: reference.description.match(/\]\((?!https?:)[^)]*\)/g) ?? [] }).toEqual({ route: routeKey(route), links: [] });
  }
});

test('every example validates against the schema its route documents', () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  const errorSchema = doc.components.schemas.Error;
  const resolve = (schema: unknown): unknown => JSON.parse(JSON.stringify(schema).replaceAll('{"$ref":"#/components/schemas/Error"}', JSON.stringify(errorSchema)));
  const invalid: string[] = [];
  let checked = 0;
  for (const route of API_ROUTES) {
    const op = doc.paths[openApiPath(route.path)][route.method];
    const check = (what: string, media: any) => {
      if (media?.example === undefined) return;
      checked += 1;
      const validate = ajv.compile(resolve(media.schema));
      if (!validate(media.example)) invalid.push(`${routeKey(route)} ${what}: ${JSON.stringify(validate.errors)}`);
    };
    check('request', op.requestBody?.content?.['application/json']);
    for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
      if (status.startsWith('2')) check(status, response.content?.['application/json']);
    }
  }
  expect(checked).toBeGreaterThan(60);
  expect(invalid).toEqual([]);
});

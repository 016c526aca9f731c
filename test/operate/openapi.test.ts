import { pino } from 'pino';
import { createIdFactory } from '@postern/shared';
import { API_ROUTES, BULL_BOARD_PATH, createApp, listRoutes, openApiPath } from '@postern/ingest';
import { startPostern, TEST_ADMIN_TOKEN, type TestPostern } from '../support/postern.js';

/**
 * Issue 6 OpenAPI: `/openapi.json` is an OpenAPI 3.1 document generated from the zod schemas that
 * validate requests, and it names exactly the routes registered on the express app.
 */

let postern: TestPostern;
let doc: any;

beforeAll(async () => {
  postern = await startPostern({ sender: false });
  const res = await fetch(`${postern.baseUrl}/openapi.json`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  doc = await res.json();
});

afterAll(async () => {
  await postern.close();
});

/** The app's routes, read from its router stack (the same app the harness serves). */
function registeredRoutes(): { method: string; path: string }[] {
  const app = createApp({
    redis: postern.redis,
    store: postern.store,
    queues: postern.queues as never,
    clock: { now: () => Date.now() },
    ids: createIdFactory(),
    logger: pino({ level: 'silent' }),
    config: { adminToken: TEST_ADMIN_TOKEN, maxBodyBytes: 1024, allowList: [], secretRotationGraceMs: 1000 },
  });
  return listRoutes(app);
}

test('the document is OpenAPI 3.1 with info, paths and the error schema', () => {
  expect(doc.openapi).toBe('3.1.0');
  expect(doc.info.title).toBe('Postern API');
  expect(doc.components.schemas.Error.properties.error.required).toEqual(['code', 'message']);
  expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(['adminBasic', 'adminToken', 'apiKey', 'platformKey', 'postern_org']);
});

test('every route registered on the app is documented, and nothing else is', () => {
  const routes = registeredRoutes();
  expect(routes.length).toBeGreaterThan(20);
  const registered = new Set(routes.map((r) => `${r.method} ${openApiPath(r.path)}`));
  const documented = new Set<string>();
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
    for (const method of Object.keys(ops)) documented.add(`${method.toUpperCase()} ${path}`);
  }
  const undocumented = [...registered].filter((r) => !documented.has(r));
  expect(undocumented).toEqual([]);
  // Bull Board is a sub-app mounted on a path, not a route of the API's router.
  const stale = [...documented].filter((r) => !registered.has(r) && r !== `GET ${BULL_BOARD_PATH}`);
  expect(stale).toEqual([]);
});

test('every operation declares its path parameters, responses and a unique operationId', () => {
  const ids = new Set<string>();
  for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    const params = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    for (const op of Object.values(ops)) {
      expect(ids.has(op.operationId)).toBe(false);
      ids.add(op.operationId);
      expect(Object.keys(op.responses).length).toBeGreaterThan(0);
      const declared = (op.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name);
      expect(declared).toEqual(params);
    }
  }
});

test('request bodies and queries are the JSON Schema of the zod schemas that validate them', () => {
  const events = doc.paths['/v1/events'].post;
  const schema = events.requestBody.content['application/json'].schema;
  expect(schema.required).toEqual(['type', 'data']);
  expect(schema.additionalProperties).toBe(false);
  expect(schema.properties.idempotencyKey).toEqual({ type: 'string', minLength: 1, maxLength: 200 });
  expect(Object.keys(events.responses)).toEqual(expect.arrayContaining(['202', '400', '401', '403', '409', '413', '415', '503']));

  const endpointBody = doc.paths['/v1/endpoints'].post.requestBody.content['application/json'].schema;
  expect(endpointBody.required).toEqual(['url']);
  expect(endpointBody.properties.policy.anyOf[0].enum).toContain('standard');
  expect(endpointBody.properties.policy.anyOf[1].properties.maxAttempts).toEqual({ type: 'integer', minimum: 1, maximum: 100 });
  expect(endpointBody.properties.signatureScheme.enum).toEqual(['hmac-sha256', 'ed25519']);
  const rotate = doc.paths['/v1/endpoints/{id}/rotate-secret'].post.requestBody;
  expect(rotate.required).toBe(false);
  expect(rotate.content['application/json'].schema.properties.signatureScheme.enum).toEqual(['hmac-sha256', 'ed25519']);

  const list = doc.paths['/v1/endpoints/{id}/deliveries'].get.parameters;
  expect(list.find((p: any) => p.name === 'status').schema.enum).toEqual(['pending', 'in_flight', 'succeeded', 'failed', 'cancelled']);
  expect(list.find((p: any) => p.name === 'limit').schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100, default: 50 });
});

test('what the document requires is what the API enforces: an empty body is refused naming the first required field', async () => {
  const { apiKey } = await postern.createOrg();
  const endpoint = await postern.createEndpoint(apiKey, { url: 'http://127.0.0.1:9/hook' });
  const checked: string[] = [];
  for (const route of API_ROUTES) {
    if (!route.body) continue;
    const schema = doc.paths[openApiPath(route.path)][route.method].requestBody.content['application/json'].schema;
    const required = (schema.required ?? []) as string[];
    if (required.length === 0) continue;
    const key = route.auth === 'admin' ? TEST_ADMIN_TOKEN : apiKey;
    const r = await postern.api(route.method.toUpperCase(), route.path.replace(':id', endpoint.id), { key, body: {} });
    expect({ route: route.path, status: r.status, code: r.body.error.code }).toEqual({ route: route.path, status: 400, code: 'invalid_request' });
    expect(r.body.error.message.startsWith(`${required[0]}:`)).toBe(true);
    checked.push(route.path);
  }
  expect(checked).toEqual(expect.arrayContaining(['/v1/orgs', '/v1/endpoints', '/v1/events']));
});

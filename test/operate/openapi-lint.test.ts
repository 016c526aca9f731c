import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildOpenApiDocument } from '@postern/ingest';

/**
 * Issue 15, item 1: `/openapi.json` is complete — every response of every operation has a schema,
 * errors are typed with their codes, and the document has `servers`, `license` and examples — and
 * Redocly's recommended rules pass on it. The structural checks run without Redocly, so they hold
 * where the CLI could not be installed; the Redocly run uses the devDependency, offline.
 */

const doc = buildOpenApiDocument() as any;
const operations = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ id: `${method.toUpperCase()} ${path}`, op })));

test('the document names servers, a license and its tags', () => {
  expect(doc.servers.length).toBeGreaterThan(0);
  expect(doc.servers[0].url).toEqual(expect.any(String));
  expect(doc.info.license.name).toEqual(expect.any(String));
  expect(doc.info.license.identifier ?? doc.info.license.url).toEqual(expect.any(String));
  const tags = new Set((doc.tags as { name: string }[]).map((t) => t.name));
  for (const { id, op } of operations) expect({ id, tags: op.tags.filter((t: string) => !tags.has(t)) }).toEqual({ id, tags: [] });
});

test('every operation has an operationId, a summary, a 2xx and a 4xx response', () => {
  for (const { id, op } of operations) {
    const statuses = Object.keys(op.responses);
    expect({ id, operationId: typeof op.operationId, summary: typeof op.summary }).toEqual({ id, operationId: 'string', summary: 'string' });
    expect({ id, ok: statuses.some((s) => s.startsWith('2')), clientError: statuses.some((s) => s.startsWith('4')) }).toEqual({ id, ok: true, clientError: true });
  }
});

test('no response or request body is JSON without a schema, and every error names its codes', () => {
  const missing: string[] = [];
  const untyped: string[] = [];
  for (const { id, op } of operations) {
    for (const [status, response] of Object.entries(op.responses as Record<string, any>)) {
      for (const [type, media] of Object.entries((response.content ?? {}) as Record<string, any>)) {
        if (!media.schema || Object.keys(media.schema).length === 0) missing.push(`${id} ${status} ${type}`);
      }
      if (status.startsWith('4') || status.startsWith('5')) {
        const schema = response.content?.['application/json']?.schema;
        // `/readyz` answers 503 with its own documented body, not an error.
        if (schema && !schema.$ref && !schema.properties?.error) continue;
        const codes = schema?.properties?.error?.properties?.code?.enum;
        if (!(Array.isArray(codes) && codes.length > 0) && schema?.$ref !== '#/components/schemas/Error') untyped.push(`${id} ${status}`);
        if (status !== '4XX' && status !== '503' && !(Array.isArray(codes) && codes.length > 0)) untyped.push(`${id} ${status}: no codes`);
      }
    }
    const body = op.requestBody?.content?.['application/json'];
    if (op.requestBody && !body?.schema) missing.push(`${id} request body`);
  }
  expect(missing).toEqual([]);
  expect(untyped).toEqual([]);
});

test('answers are the JSON Schema of the zod schemas they are built from', () => {
  const endpoint = doc.paths['/v1/endpoints/{id}'].get.responses['200'].content['application/json'].schema;
  expect(endpoint.required).toEqual(expect.arrayContaining(['id', 'url', 'status', 'policy', 'consecutiveFailures', 'disabledAt']));
  expect(endpoint.properties.status.enum).toEqual(['active', 'paused', 'disabled']);
  expect(endpoint.properties.policy.properties.maxAttempts).toEqual({ type: 'integer', minimum: 1, maximum: 100 });
  const list = doc.paths['/v1/endpoints/{id}/deliveries'].get.responses['200'].content['application/json'].schema;
  expect(list.required).toEqual(['data', 'nextCursor']);
  expect(list.properties.data.items.properties.status.enum).toEqual(['pending', 'in_flight', 'succeeded', 'failed', 'cancelled']);
  const redeliver = doc.paths['/v1/deliveries/{id}/redeliver'].post.responses['409'].content['application/json'].schema;
  expect(redeliver.properties.error.properties.code.enum).toEqual(expect.arrayContaining(['in_flight', 'delivery_pending', 'endpoint_inactive', 'redelivery_not_offered', 'idempotency_key_reused']));
  const events = doc.paths['/v1/events'].post;
  expect(events.requestBody.content['application/json'].example).toMatchObject({ type: 'invoice.paid' });
  expect(events.responses['202'].content['application/json'].example).toMatchObject({ id: expect.stringMatching(/^evt_/) });
});

test('npx redocly lint with the recommended rules reports nothing', async () => {
  const require = createRequire(import.meta.url);
  const cli = join(require.resolve('@redocly/cli/package.json'), '..', 'bin', 'cli.js');
  const dir = mkdtempSync(join(tmpdir(), 'postern-openapi-'));
  try {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    const { code, output } = await new Promise<{ code: number; output: string }>((resolve) => {
      execFile(
        process.execPath,
        [cli, 'lint', file, '--extends=recommended', '--format=stylish'],
        { timeout: 60_000, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NODE_OPTIONS: '' } },
        (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` }),
      );
    });
    expect({ code, problems: output.split('\n').filter((l) => /\b(error|warning)\b/i.test(l) && !/Node\.js/.test(l)) }).toEqual({ code: 0, problems: [] });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 90_000);

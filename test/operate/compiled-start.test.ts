import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import { createRedisConnection } from '@postern/store';
import type { Redis } from 'ioredis';
import { apiClient } from '../support/api-client.js';
import { deleteByPrefix, TEST_ADMIN_TOKEN, TEST_REDIS_URL } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { REPO_ROOT, spawnApp, type SpawnedApp } from '../support/spawn-app.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Issue 11 item 7: production runs compiled JavaScript. `npm run build` (turbo; cached when nothing
 * changed) compiles every workspace to `dist/`; `node apps/<app>/dist/main.js` then starts each app
 * with no TypeScript loader — the workspace packages resolve to their `dist/` (the `development`
 * export condition is not set), the Lua scripts and the dashboard's files are found from there —
 * and the two together deliver an event.
 */

const prefix = `test:${randomBytes(6).toString('hex')}`;
let redis: Redis;
let receiver: TestReceiver;
const apps: SpawnedApp[] = [];

beforeAll(async () => {
  await promisify(execFile)('npx', ['turbo', 'run', 'build', '--output-logs=errors-only'], { cwd: REPO_ROOT, timeout: 180_000 });
  redis = createRedisConnection(TEST_REDIS_URL, 'worker');
  receiver = await startReceiver(() => 200);
}, 200_000);

afterAll(async () => {
  for (const app of apps) await app.stop();
  await receiver?.close();
  if (redis) {
    await deleteByPrefix(redis, prefix);
    await redis.quit();
  }
});

test('every workspace has its compiled entry point, and the store its Lua scripts next to it', () => {
  for (const pkg of ['packages/shared', 'packages/store', 'packages/telemetry', 'packages/sandbox', 'apps/ingest', 'apps/sender', 'apps/dashboard']) {
    expect(existsSync(path.join(REPO_ROOT, pkg, 'dist/index.js'))).toBe(true);
    expect(existsSync(path.join(REPO_ROOT, pkg, 'dist/index.d.ts'))).toBe(true);
  }
  expect(existsSync(path.join(REPO_ROOT, 'packages/store/dist/lua/finish-attempt.lua'))).toBe(true);
  expect(existsSync(path.join(REPO_ROOT, 'packages/sandbox/dist/sandbox-worker.mjs'))).toBe(true);
  // The API reference page's renderer: production installs no devDependencies, so the build copies it.
  expect(existsSync(path.join(REPO_ROOT, 'apps/ingest/dist/vendor/redoc.standalone.js'))).toBe(true);
});

test('node apps/ingest/dist/main.js and node apps/sender/dist/main.js start, get ready and deliver', async () => {
  const env = { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix, ADMIN_TOKEN: TEST_ADMIN_TOKEN, ALLOWED_ADDRESSES: '127.0.0.1', LOG_LEVEL: 'info', NODE_ENV: 'production', PUBLIC_URL: 'http://127.0.0.1' };
  const ingest = spawnApp('ingest', { ...env, PORT: '0', HOST: '127.0.0.1' }, [], 'compiled');
  apps.push(ingest);
  const sender = spawnApp('sender', { ...env, SENDER_PORT: '0', SENDER_HOST: '127.0.0.1' }, [], 'compiled');
  apps.push(sender);
  expect(ingest.child.spawnargs.slice(1)).toEqual(['apps/ingest/dist/main.js']);

  const ingestUrl = `http://127.0.0.1:${await ingest.port()}`;
  const senderUrl = `http://127.0.0.1:${await sender.port()}`;
  for (const url of [ingestUrl, senderUrl]) {
    await waitUntil(`${url}/readyz to answer 200`, async () => (await fetch(`${url}/readyz`)).status === 200, 20_000, 100);
  }

  // The dashboard's static files are served from the compiled ingest too.
  const page = await fetch(`${ingestUrl}/dashboard/`);
  expect(page.status).toBe(200);
  expect(await page.text()).toContain('<html');
  // And the API reference page with its renderer, from dist/vendor/.
  expect((await fetch(`${ingestUrl}/docs/api`)).status).toBe(200);
  const renderer = await fetch(`${ingestUrl}/docs/api/redoc.standalone.js`);
  expect({ status: renderer.status, type: renderer.headers.get('content-type') }).toEqual({ status: 200, type: expect.stringMatching(/javascript/) });

  const api = apiClient(ingestUrl);
  const org = await api('POST', '/v1/orgs', { key: TEST_ADMIN_TOKEN, body: { name: 'compiled' } });
  expect(org.status).toBe(201);
  const key = org.body.apiKey as string;
  const endpoint = await api('POST', '/v1/endpoints', { key, body: { url: receiver.url } });
  expect(endpoint.status).toBe(201);
  const event = await api('POST', '/v1/events', { key, body: { type: 'compiled.check', data: { n: 1 } } });
  expect(event.status).toBe(202);
  const [request] = await receiver.waitForRequests(1, 20_000);
  expect(request!.headers['webhook-id']).toBe(event.body.id);
  const deliveryId = event.body.deliveries[0].id as string;
  await waitUntil('the delivery to be succeeded', async () => (await api('GET', `/v1/deliveries/${deliveryId}`, { key })).body.status === 'succeeded');

  // Every line either app printed is one JSON object.
  for (const line of [...ingest.stdout, ...sender.stdout].filter(Boolean)) expect(() => JSON.parse(line)).not.toThrow();
}, 60_000);

test('the compiled code imports only built-ins, workspace packages and production dependencies of its own package', () => {
  const builtins = new Set(builtinModules);
  for (const pkg of ['packages/shared', 'packages/store', 'packages/telemetry', 'packages/sandbox', 'apps/ingest', 'apps/sender', 'apps/dashboard']) {
    const manifest = JSON.parse(readFileSync(path.join(REPO_ROOT, pkg, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    const allowed = new Set(Object.keys(manifest.dependencies ?? {}));
    const dist = path.join(REPO_ROOT, pkg, 'dist');
    for (const file of readdirSync(dist, { recursive: true }).map(String).filter((f) => f.endsWith('.js'))) {
      const source = readFileSync(path.join(dist, file), 'utf8');
      // Static imports, and modules loaded on first use (`import('…')`, a createRequire's `('…')`).
      const specifiers = [...source.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]/gm), ...source.matchAll(/\b(?:import|createRequire\(import\.meta\.url\))\(\s*['"]([^'"]+)['"]\s*\)/g)];
      for (const [, specifier] of specifiers) {
        if (specifier!.startsWith('.') || specifier!.startsWith('node:') || builtins.has(specifier!)) continue;
        const name = specifier!.startsWith('@') ? specifier!.split('/').slice(0, 2).join('/') : specifier!.split('/')[0]!;
        expect({ file: `${pkg}/dist/${file}`, name, production: allowed.has(name) }).toEqual({ file: `${pkg}/dist/${file}`, name, production: true });
      }
    }
  }
});

import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startPostern, type TestPostern } from '../support/postern.js';

/**
 * Issue 15, item 2: `@postern/client` compiles to JavaScript with type declarations, and plain Node
 * (no TypeScript, no `development` condition) imports it the way a published package is imported:
 * its `package.json` and `dist/` copied into a `node_modules` of their own.
 */

const root = fileURLToPath(new URL('../..', import.meta.url));
let postern: TestPostern;
let dir: string;

beforeAll(async () => {
  postern = await startPostern({ sender: false });
  dir = mkdtempSync(join(tmpdir(), 'postern-client-'));
});

afterAll(async () => {
  await postern.close();
  rmSync(dir, { recursive: true, force: true });
});

function run(file: string, args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, timeout: 120_000, env: { ...process.env, NODE_OPTIONS: '' } }, (err, stdout, stderr) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

test('the compiled client (dist: .js and .d.ts) works from plain Node as an installed package', async () => {
  const pkg = join(dir, 'node_modules', '@postern', 'client');
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const build = await run(process.execPath, [tsc, '-p', join(root, 'packages/client/tsconfig.build.json'), '--outDir', join(pkg, 'dist')], root);
  expect(build).toMatchObject({ code: 0, stderr: '' });
  cpSync(join(root, 'packages/client/package.json'), join(pkg, 'package.json'));
  // What npm would install with it: its dependencies, from the workspace's node_modules.
  const { dependencies = {} } = JSON.parse(readFileSync(join(root, 'packages/client/package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  for (const name of Object.keys(dependencies)) cpSync(join(root, 'node_modules', name), join(dir, 'node_modules', name), { recursive: true });
  mkdirSync(join(dir, 'app'));
  writeFileSync(
    join(dir, 'app', 'main.mjs'),
    `import { Postern, PosternApiError } from '@postern/client';
const admin = new Postern({ baseUrl: process.argv[2], adminToken: process.argv[3] });
const org = await admin.orgs.create({ name: 'plain-node' });
const client = new Postern({ baseUrl: process.argv[2], apiKey: org.apiKey });
const endpoint = await client.endpoints.create({ url: 'http://127.0.0.1:9/hook' });
const event = await client.events.create({ type: 'invoice.paid', data: { n: 1 } }, { idempotencyKey: 'plain-1' });
const ids = [];
for await (const e of client.endpoints.list({ limit: 1 })) ids.push(e.id);
const err = await client.endpoints.get('ep_nope').catch((e) => e);
console.log(JSON.stringify({ endpointIds: ids, expected: endpoint.id, deliveries: event.deliveries.length, typed: err instanceof PosternApiError, code: err.code, status: err.status }));
`,
  );
  const { TEST_ADMIN_TOKEN } = await import('../support/postern.js');
  const result = await run(process.execPath, ['main.mjs', postern.baseUrl, TEST_ADMIN_TOKEN], join(dir, 'app'));
  expect(result.stderr).toBe('');
  const out = JSON.parse(result.stdout);
  expect(out).toEqual({ endpointIds: [out.expected], expected: expect.stringMatching(/^ep_/), deliveries: 1, typed: true, code: 'not_found', status: 404 });
  // Declarations ship beside the JavaScript.
  const types = await run(process.execPath, ['-e', `require('node:fs').accessSync(${JSON.stringify(join(pkg, 'dist', 'index.d.ts'))})`], dir);
  expect(types.code).toBe(0);
}, 120_000);

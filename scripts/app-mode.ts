/**
 * How a Postern app runs as a child process: `source` is `node --conditions=development --import
 * tsx apps/<app>/src/main.ts` (as `npm start` runs it), `compiled` is `node apps/<app>/dist/main.js`
 * (as production runs it, after `npm run build`; no TypeScript loader, workspace packages resolved
 * to their `dist/`). Shared by the tests' app processes, the soak and the bench.
 */
export type AppMode = 'source' | 'compiled';

/** `compiled` when `POSTERN_APP_MODE=compiled` (CI sets it after `npm run build`), else `source`. */
export function defaultAppMode(): AppMode {
  return process.env.POSTERN_APP_MODE === 'compiled' ? 'compiled' : 'source';
}

/** The node arguments that run `app` in `mode` (after any of the caller's own node flags). */
export function appEntryArgs(app: 'ingest' | 'sender', mode: AppMode = defaultAppMode()): string[] {
  return mode === 'compiled' ? [`apps/${app}/dist/main.js`] : ['--conditions=development', '--import', 'tsx', `apps/${app}/src/main.ts`];
}

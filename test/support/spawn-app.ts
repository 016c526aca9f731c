import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { appEntryArgs, defaultAppMode, type AppMode } from '../../scripts/app-mode.js';
import { TEST_SECRETS_ENV } from './test-secrets.js';
import { waitUntil } from './wait-until.js';

/** The repository root, where `apps/<name>/src/main.ts` lives. */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A Postern app running as its own process, as `npm start` runs it. */
export interface SpawnedApp {
  child: ChildProcess;
  /** Every line it printed so far, stdout and stderr. */
  stdout: string[];
  stderr: string[];
  /** Resolves with its exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  /** Waits for a JSON log line with a `port` field (the HTTP listener) and returns the port. */
  port(timeoutMs?: number): Promise<number>;
  /** SIGTERM, then waits for the exit; SIGKILL after `timeoutMs`. Returns the exit code. */
  stop(timeoutMs?: number): Promise<number | null>;
}

export { appEntryArgs, defaultAppMode, type AppMode } from '../../scripts/app-mode.js';

/**
 * Spawns an app (see {@link AppMode}; default `source`, or `POSTERN_APP_MODE=compiled`) with the
 * test's environment plus `env` (without the test runner's NODE_OPTIONS, so the child prints
 * nothing of its own). `nodeArgs` go before the script, e.g. `--cpu-prof`.
 */
export function spawnApp(
  app: 'ingest' | 'sender',
  env: Record<string, string | undefined>,
  nodeArgs: readonly string[] = [],
  mode: AppMode = defaultAppMode(),
): SpawnedApp {
  // The tests' SECRETS_KEY unless `env` says otherwise (undefined removes it).
  const childEnv: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: undefined, ...TEST_SECRETS_ENV, ...env };
  for (const [k, v] of Object.entries(childEnv)) if (v === undefined) delete childEnv[k];
  const child = spawn(process.execPath, [...nodeArgs, ...appEntryArgs(app, mode)], { cwd: REPO_ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  const stdout: string[] = [];
  const stderr: string[] = [];
  const collect = (into: string[]) => {
    let rest = '';
    return (chunk: Buffer) => {
      const text = rest + chunk.toString('utf8');
      const lines = text.split('\n');
      rest = lines.pop() ?? '';
      into.push(...lines);
    };
  };
  child.stdout!.on('data', collect(stdout));
  child.stderr!.on('data', collect(stderr));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let exitCode: number | null | undefined;
  void exited.then((code) => {
    exitCode = code;
  });
  return {
    child,
    stdout,
    stderr,
    exited,
    // Generous: a busy 2-core machine can take many seconds to load an app from source.
    port: (timeoutMs = 60_000) =>
      waitUntil(`${app} to log its port`, () => {
        if (exitCode !== undefined) throw new Error(`${app} exited with ${exitCode}: ${stderr.join('\n')}`);
        for (const line of stdout) {
          try {
            const entry = JSON.parse(line) as { port?: number };
            if (typeof entry.port === 'number' && entry.port > 0) return entry.port;
          } catch {
            // not a JSON log line
          }
        }
        return undefined;
      }, timeoutMs, 50),
    async stop(timeoutMs = 15_000) {
      if (exitCode !== undefined) return exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

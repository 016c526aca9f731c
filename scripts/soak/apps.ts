/**
 * Ingest and the senders as child processes (from source, or from `dist/` with
 * `POSTERN_APP_MODE=compiled`: scripts/app-mode.ts), as production runs them (with the apps' node
 * flags, scripts/node-flags.mjs): each sender can be
 * SIGKILLed, SIGTERMed and started again under its name.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '../../test/faults/support/free-port.js';
import { fileURLToPath } from 'node:url';
import { appEntryArgs } from '../app-mode.js';
import { APP_NODE_FLAGS } from '../node-flags.mjs';
import { waitFor } from './wait-for.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** One app process; `restart` starts a new one in its place once it has exited. */
export interface SoakApp {
  readonly name: string;
  readonly running: boolean;
  /** The current process id (null while stopped). */
  readonly pid: number | null;
  /** The last lines it printed. */
  output(): string;
  /** Sends `signal` and resolves when the process has exited. */
  stop(signal: NodeJS.Signals): Promise<void>;
  /** Starts it again (it must have exited). */
  start(): void;
}


const live = new Set<ChildProcess>();
// A soak that dies takes its children with it.
process.once('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

/**
 * Starts app `app` as `name` with the soak's environment plus `env`; returns at once. With
 * `logDir`, everything it prints (every process started under this name) is also appended to
 * `<logDir>/<name>.log`, so a violation can be read against the apps' own account.
 */
export function startApp(app: 'ingest' | 'sender', name: string, env: Record<string, string>, logDir?: string): SoakApp {
  const lines: string[] = [];
  const logFile = logDir ? path.join(logDir, `${name}.log`) : null;
  if (logDir) mkdirSync(logDir, { recursive: true });
  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  const launch = () => {
    const childEnv: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: process.env.SOAK_LOG_LEVEL ?? 'warn', ...env };
    delete childEnv.NODE_OPTIONS; // jest's --experimental-vm-modules is not for the apps
    // POSTERN_APP_MODE=compiled runs the built apps (apps/<app>/dist, after `npm run build`), as CI does.
    // With the node flags production starts them with (heap sizes, GC on the main thread).
    const entry = [...APP_NODE_FLAGS, ...appEntryArgs(app)];
    const c = spawn(process.execPath, entry, { cwd: REPO_ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    if (logFile) appendFileSync(logFile, `--- ${new Date().toISOString()} ${name} started\n`);
    const keep = (chunk: Buffer) => {
      if (logFile) appendFileSync(logFile, chunk);
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line.trim()) continue;
        lines.push(line);
        if (lines.length > 60) lines.shift();
      }
    };
    c.stdout!.on('data', keep);
    c.stderr!.on('data', keep);
    live.add(c);
    exited = new Promise((resolve) => c.once('exit', () => {
      live.delete(c);
      if (child === c) child = null;
      resolve();
    }));
    child = c;
  };
  launch();
  return {
    name,
    get running() {
      return child !== null;
    },
    get pid() {
      return child?.pid ?? null;
    },
    output: () => `${name} printed:\n  ${lines.join('\n  ')}`,
    async stop(signal) {
      const c = child;
      if (!c) return;
      const done = exited;
      c.kill(signal);
      await done;
    },
    start() {
      if (child) throw new Error(`${name} is still running`);
      launch();
    },
  };
}

/**
 * Which of `apps` owns a client socket on local port `ports` (from `ss -tnp`): the soak SIGKILLs the
 * sender that has a request in flight at a slow endpoint, so the kill always cuts an attempt off.
 */
export function appsOwningPorts(apps: readonly SoakApp[], ports: readonly number[]): SoakApp[] {
  if (ports.length === 0) return [];
  const r = spawnSync('ss', ['-tnpH', 'state', 'established'], { encoding: 'utf8' });
  if (r.status !== 0) return [];
  const wanted = new Set(ports);
  const pids = new Set<number>();
  for (const line of r.stdout.split('\n')) {
    const m = /127\.0\.0\.1:(\d+)\s+\S+:\d+\s+users:\(\("[^"]*",pid=(\d+)/.exec(line);
    if (m && wanted.has(Number(m[1]))) pids.add(Number(m[2]));
  }
  return apps.filter((a) => a.pid !== null && pids.has(a.pid));
}

/** Starts ingest on a free port and waits (with a deadline) until `/readyz` answers 200. */
export async function startIngest(env: Record<string, string>, logDir?: string): Promise<SoakApp & { baseUrl: string }> {
  const port = await freePort();
  const app = startApp('ingest', 'ingest', { HOST: '127.0.0.1', PORT: String(port), ...env }, logDir);
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitFor('ingest to be ready', async () => {
    if (!app.running) throw new Error(`ingest exited\n${app.output()}`);
    return (await fetch(`${baseUrl}/readyz`).catch(() => null))?.ok === true;
  }, 60_000, 200);
  return Object.assign(app, { baseUrl });
}

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Queue } from 'bullmq';
import { TEST_ADMIN_TOKEN, TEST_SECRETS_ENV } from '../../support/postern.js';
import { appEntryArgs, defaultAppMode } from '../../support/spawn-app.js';
import { waitUntil } from '../../support/wait-until.js';
import { freePort } from './free-port.js';

const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** How a child app ended. */
export interface AppExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** A Postern app running as a child process, from source or compiled (see `defaultAppMode`). */
export interface AppProcess {
  readonly name: string;
  readonly pid: number;
  /** Resolves when the process has exited. */
  readonly exit: Promise<AppExit>;
  readonly exited: boolean;
  /** The last lines it printed (stdout and stderr), for failure messages. */
  output(): string;
  signal(signal: NodeJS.Signals): void;
  /** SIGKILL, then wait for the exit. */
  kill(): Promise<void>;
}

/** An ingest child with its HTTP address. */
export interface IngestProcess extends AppProcess {
  readonly baseUrl: string;
}

const started = new Set<AppProcess>();
// A test process that dies without its afterAll still takes its children with it.
process.once('exit', () => {
  for (const app of started) app.signal('SIGKILL');
});

function spawnApp(app: 'ingest' | 'sender', name: string, env: Record<string, string>): AppProcess {
  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  delete childEnv.NODE_OPTIONS; // jest's --experimental-vm-modules is not for the apps
  Object.assign(childEnv, { LOG_LEVEL: 'warn', ALLOWED_ADDRESSES: '127.0.0.1,::1', ADMIN_TOKEN: TEST_ADMIN_TOKEN, ...TEST_SECRETS_ENV }, env);
  const child = spawn(process.execPath, appEntryArgs(app, defaultAppMode()), { cwd: REPO_ROOT, env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const keep = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      lines.push(line);
      if (lines.length > 100) lines.shift();
    }
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let exited = false;
  const exit = new Promise<AppExit>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = true;
      resolve({ code, signal });
    });
  });
  const handle: AppProcess = {
    name,
    pid: child.pid!,
    exit,
    get exited() {
      return exited;
    },
    output: () => `${name} (pid ${child.pid}) printed:\n  ${lines.join('\n  ')}`,
    signal: (signal) => {
      if (!exited) child.kill(signal);
    },
    async kill() {
      if (!exited) child.kill('SIGKILL');
      await exit;
    },
  };
  started.add(handle);
  return handle;
}

let senderCount = 0;

/**
 * Starts a sender child. `env` adds to (or overrides) LOG_LEVEL=warn, ALLOWED_ADDRESSES=127.0.0.1,::1,
 * ADMIN_TOKEN and the tests' SECRETS_KEY / SECRETS_KEY_ID; pass at least REDIS_URL and REDIS_PREFIX. Returns at once: wait for it with
 * {@link waitForSenders}.
 */
export function spawnSender(env: Record<string, string>): AppProcess {
  senderCount += 1;
  // Its health and metrics port: any free one, so several senders run side by side.
  return spawnApp('sender', `sender-${senderCount}`, { SENDER_HOST: '127.0.0.1', SENDER_PORT: '0', ...env });
}

/** Starts an ingest child on a free port without waiting for it (for an ingest that is meant never to be ready). */
export async function spawnIngestOnly(env: Record<string, string>): Promise<IngestProcess> {
  const port = await freePort();
  const app = spawnApp('ingest', `ingest-${port}`, { HOST: '127.0.0.1', PORT: String(port), ...env });
  return Object.assign(app, { baseUrl: `http://127.0.0.1:${port}` });
}

/** Starts an ingest child on a free port and waits until `/readyz` answers 200 (its Redis connection is up). */
export async function spawnIngest(env: Record<string, string>, timeoutMs = 60_000): Promise<IngestProcess> {
  const port = await freePort();
  const app = spawnApp('ingest', `ingest-${port}`, { HOST: '127.0.0.1', PORT: String(port), ...env });
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitUntil(`ingest on ${baseUrl} to be ready`, async () => {
    if (app.exited) throw new Error(`ingest exited early\n${app.output()}`);
    const r = await fetch(`${baseUrl}/readyz`).catch(() => null);
    return r?.ok === true;
  }, timeoutMs, 100);
  return Object.assign(app, { baseUrl });
}

/**
 * Waits until `count` BullMQ workers are connected to the deliveries queue (each sender has one),
 * i.e. the senders are ready to take jobs.
 */
export async function waitForSenders(queue: Queue, count: number, senders: readonly AppProcess[] = [], timeoutMs = 60_000): Promise<void> {
  await waitUntil(`${count} sender(s) connected to the queue`, async () => {
    const dead = senders.find((s) => s.exited);
    if (dead) throw new Error(`${dead.name} exited early\n${dead.output()}`);
    return (await queue.getWorkersCount()) >= count;
  }, timeoutMs, 100);
}

/** SIGKILLs every app child of this test file still running and waits for them: call it in afterAll. */
export async function killAllApps(): Promise<void> {
  await Promise.all([...started].map((a) => a.kill()));
}

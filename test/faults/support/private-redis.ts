import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startLocalRedis, stopRedis } from '../../../scripts/redis-util.mjs';
import { freePort } from './free-port.js';

/** A redis-server owned by one test file: its own free port and temp data dir, stopped and restarted at will. */
export interface PrivateRedis {
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  /** Whether the server process is running. */
  readonly running: boolean;
  /** Graceful stop (SIGTERM: Redis writes its AOF and exits). */
  stop(): Promise<void>;
  /** `kill -9`: no final write, the AOF holds only what was already on disk. */
  kill9(): Promise<void>;
  /** Starts it again on the same port and data dir (loads the AOF). */
  start(): Promise<void>;
  /** Stops it (SIGKILL) and removes its data dir. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * Starts a private redis-server with `appendonly yes`, `appendfsync` as given (default `always`),
 * `maxmemory-policy noeviction` and no RDB snapshots, on a free port of 127.0.0.1.
 */
export async function startPrivateRedis(opts: { appendfsync?: 'always' | 'everysec' } = {}): Promise<PrivateRedis> {
  const dataDir = await mkdtemp(path.join(tmpdir(), 'postern-redis-'));
  const port = await freePort();
  const extraArgs = ['--appendfsync', opts.appendfsync ?? 'always', '--maxmemory-policy', 'noeviction', '--save', ''];
  let child: ChildProcess | null = null;
  const launch = async () => {
    child = await startLocalRedis({ port, dataDir, extraArgs });
  };
  const exited = (c: ChildProcess) => c.exitCode !== null || c.signalCode !== null;
  const kill9 = async () => {
    const c = child;
    child = null;
    if (!c || exited(c)) return;
    await new Promise<void>((resolve) => {
      c.once('exit', () => resolve());
      c.kill('SIGKILL');
    });
  };
  await launch();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dataDir,
    get running() {
      return child !== null && !exited(child);
    },
    async stop() {
      const c = child;
      child = null;
      if (c) await stopRedis(c, 5000);
    },
    kill9,
    async start() {
      if (child && !exited(child)) throw new Error('private redis is already running');
      await launch();
    },
    async close() {
      await kill9();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The soak's own Redis: a standalone server (AOF, `appendfsync always`) on a free port, or a Redis
 * Cluster of three masters with one replica each (`scripts/redis-cluster.sh`, its own
 * `REDIS_CLUSTER_NAME`), and the Redis faults the soak injects into it.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, appendFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { startPrivateRedis, type PrivateRedis } from '../../test/faults/support/private-redis.js';
import { waitFor } from './wait-for.js';
import type { Random } from './prng.js';
import type { FaultKind } from './records.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** cluster-node-timeout of the soak's cluster: a stopped primary's replica takes over a few seconds later. */
export const SOAK_CLUSTER_NODE_TIMEOUT_MS = 2000;

/** What a Redis fault did: what it hit, and when the stopped node was back (null: nothing stopped). */
export interface RedisFaultOutcome {
  target: string;
  restoredAtMs: number | null;
}

/** The Redis a soak run uses. */
export interface SoakRedis {
  kind: 'standalone' | 'cluster';
  /** Environment for ingest and senders (REDIS_URL or REDIS_CLUSTER_NODES, QUEUE_PARTITIONS). */
  env: Record<string, string>;
  /** The Redis faults this target supports. */
  faultKinds: FaultKind[];
  /** Runs one Redis fault; `downMs` is how long a stopped server stays down. */
  inject(kind: FaultKind, random: Random, downMs: number): Promise<RedisFaultOutcome>;
  close(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `CLIENT KILL TYPE normal SKIPME yes` on one server: drops every app connection to it. */
async function clientKill(host: string, port: number): Promise<number> {
  const conn = new Redis({ host, port, lazyConnect: true, maxRetriesPerRequest: 1 });
  conn.on('error', () => undefined);
  try {
    await conn.connect();
    return Number(await conn.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes'));
  } finally {
    conn.disconnect();
  }
}

/** Starts a standalone Redis on a free port with AOF (`appendfsync always`). */
export async function startStandaloneRedis(): Promise<SoakRedis> {
  const redis: PrivateRedis = await startPrivateRedis({ appendfsync: 'always' });
  return {
    kind: 'standalone',
    env: { REDIS_URL: redis.url, QUEUE_PARTITIONS: '1' },
    faultKinds: ['redis-client-kill', 'redis-restart'],
    async inject(kind, _random, downMs) {
      const target = `127.0.0.1:${redis.port}`;
      if (kind === 'redis-client-kill') {
        await clientKill('127.0.0.1', redis.port);
        return { target, restoredAtMs: null };
      }
      if (kind !== 'redis-restart') throw new Error(`standalone Redis cannot inject ${kind}`);
      // SIGTERM: Redis writes its AOF and exits; started again on the same port and data dir.
      await redis.stop();
      await sleep(downMs);
      await redis.start();
      return { target, restoredAtMs: Date.now() };
    },
    close: () => redis.close(),
  };
}

interface ClusterNode {
  id: string;
  host: string;
  port: number;
  master: boolean;
  failing: boolean;
  masterId: string | null;
}

function parseClusterNodesReply(text: string): ClusterNode[] {
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((line) => {
      const [id, addr, flags, masterId] = line.split(' ');
      const hostPort = (addr ?? '').split('@')[0] ?? '';
      const i = hostPort.lastIndexOf(':');
      return {
        id: id ?? '',
        host: hostPort.slice(0, i),
        port: Number(hostPort.slice(i + 1)),
        master: (flags ?? '').includes('master'),
        failing: /fail|noaddr|handshake/.test(flags ?? ''),
        masterId: masterId && masterId !== '-' ? masterId : null,
      };
    });
}

async function withConn<T>(port: number, fn: (c: Redis) => Promise<T>): Promise<T> {
  const conn = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 2000 });
  conn.on('error', () => undefined);
  try {
    await conn.connect();
    return await fn(conn);
  } finally {
    conn.disconnect();
  }
}

/**
 * Starts a cluster of three masters with one replica each (`scripts/redis-cluster.sh`,
 * `REDIS_CLUSTER_NAME=<name>`, node timeout {@link SOAK_CLUSTER_NODE_TIMEOUT_MS},
 * `--cluster-require-full-coverage no --appendonly yes`), three queue partitions.
 */
export async function startClusterRedis(name: string): Promise<SoakRedis> {
  const script = path.join(REPO_ROOT, 'scripts/redis-cluster.sh');
  const serverArgs = '--cluster-require-full-coverage no --appendonly yes';
  const env = { ...process.env, REDIS_CLUSTER_NAME: name, REDIS_CLUSTER_REPLICAS: '1', REDIS_CLUSTER_NODE_TIMEOUT_MS: String(SOAK_CLUSTER_NODE_TIMEOUT_MS), REDIS_CLUSTER_SERVER_ARGS: serverArgs };
  const out = execFileSync(script, ['start', '7400'], { cwd: REPO_ROOT, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const nodes = /TEST_REDIS_CLUSTER_NODES=(\S+)/.exec(out)?.[1];
  if (!nodes) throw new Error(`redis-cluster.sh printed no nodes: ${out}`);
  const stateDir = path.join(REPO_ROOT, `.data/redis-cluster-${name}`);
  const ports = readFileSync(path.join(stateDir, 'ports'), 'utf8').trim().split(/\s+/).map(Number);
  const dataDir = readFileSync(path.join(stateDir, 'dir'), 'utf8').trim();

  const topology = async (): Promise<ClusterNode[]> => {
    for (const port of ports) {
      const text = await withConn(port, (c) => c.call('CLUSTER', 'NODES') as Promise<string>).catch(() => null);
      if (text) return parseClusterNodesReply(text);
    }
    throw new Error('no cluster node answers CLUSTER NODES');
  };
  const clusterOk = async (port: number) => (await withConn(port, (c) => c.call('CLUSTER', 'INFO') as Promise<string>).catch(() => '')).includes('cluster_state:ok');
  const restartNode = (port: number) => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', `nodes-${port}.conf`, '--cluster-node-timeout', String(SOAK_CLUSTER_NODE_TIMEOUT_MS),
      // Its own AOF directory and RDB file: the nodes share the data directory.
      '--dir', dataDir, '--appenddirname', `appendonlydir-${port}`, '--dbfilename', `dump-${port}.rdb`, '--save', '', '--appendonly', 'no', '--daemonize', 'yes', '--pidfile', path.join(dataDir, `redis-${port}.pid`), '--logfile', path.join(dataDir, `redis-${port}.log`), ...serverArgs.split(' ')];
    const r = spawnSync('redis-server', args, { stdio: 'ignore' });
    if (r.status !== 0) throw new Error(`redis-server on ${port} did not restart (exit ${r.status})`);
  };

  return {
    kind: 'cluster',
    env: { REDIS_CLUSTER_NODES: nodes, QUEUE_PARTITIONS: '3' },
    faultKinds: ['redis-client-kill', 'redis-failover', 'redis-primary-stop'],
    async inject(kind, random, downMs) {
      const live = (await topology()).filter((n) => !n.failing);
      if (kind === 'redis-client-kill') {
        await Promise.all(live.map((n) => clientKill(n.host, n.port).catch(() => 0)));
        return { target: 'every node', restoredAtMs: null };
      }
      if (kind === 'redis-failover') {
        // A coordinated failover: a replica in sync takes over its master's slots, nothing is lost.
        const replicas = live.filter((n) => !n.master && n.masterId !== null);
        const replica = replicas[Math.floor(random() * replicas.length)];
        if (!replica) throw new Error('no replica to fail over to');
        await withConn(replica.port, (c) => c.call('CLUSTER', 'FAILOVER'));
        await waitFor(`replica ${replica.port} to become a master`, async () => (await withConn(replica.port, (c) => c.role() as Promise<unknown[]>).catch(() => ['']))[0] === 'master', 30_000, 100);
        return { target: `${replica.host}:${replica.port}`, restoredAtMs: null };
      }
      if (kind !== 'redis-primary-stop') throw new Error(`cluster cannot inject ${kind}`);
      // SIGTERM of a master (Redis 7 lets lagging replicas catch up first), its replica is promoted
      // after the node timeout; the old master comes back `downMs` later and rejoins as a replica.
      const masters = live.filter((n) => n.master && live.some((r) => r.masterId === n.id));
      const victim = masters[Math.floor(random() * masters.length)];
      if (!victim) throw new Error('no master with a replica to stop');
      const pid = Number(/process_id:(\d+)/.exec(await withConn(victim.port, (c) => c.info('server')))?.[1]);
      process.kill(pid, 'SIGTERM');
      await waitFor(`redis ${victim.port} to exit`, () => {
        try {
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      }, 20_000, 50);
      const witness = ports.find((p) => p !== victim.port)!;
      await waitFor('a replica to take over the stopped master', async () => (await topology()).some((n) => n.masterId === null && n.master && !n.failing && n.port !== victim.port) && (await clusterOk(witness)), 60_000, 200);
      await sleep(downMs);
      restartNode(victim.port);
      const newPid = await waitFor(`redis ${victim.port} to answer again`, async () => Number(/process_id:(\d+)/.exec(await withConn(victim.port, (c) => c.info('server')))?.[1]) || false, 30_000, 100);
      // So `redis-cluster.sh stop` stops the new process too.
      appendFileSync(path.join(stateDir, 'pids'), `${newPid}\n`);
      await waitFor(`redis ${victim.port} to rejoin in sync`, async () => {
        const info = await withConn(victim.port, (c) => c.info('replication')).catch(() => '');
        return /role:master/.test(info) || /master_link_status:up/.test(info);
      }, 60_000, 200);
      return { target: `${victim.host}:${victim.port}`, restoredAtMs: Date.now() };
    },
    async close() {
      execFileSync(script, ['stop'], { cwd: REPO_ROOT, env, stdio: 'ignore' });
    },
  };
}

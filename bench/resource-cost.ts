/**
 * What one delivery costs, measured over a window of `npm run bench` (bench/run.ts): CPU time of
 * each process (Linux `/proc/<pid>/stat`, utime + stime, every thread, children included) and Redis
 * commands (`INFO commandstats`, which also counts the commands a Lua script runs), both as a
 * delta between the start and the end of the window, divided by the deliveries the receiver got.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';

/** The processes whose CPU time is charged to deliveries. */
export type CostedProcess = 'ingest' | 'sender' | 'redis';

/** Commands shown in a breakdown. */
const TOP_COMMANDS = 10;

let ticksPerSecond: number | undefined;

/** The kernel's clock ticks per second (`getconf CLK_TCK`; 100 when it cannot be asked). */
export function clockTicksPerSecond(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** One process's line of /proc/<pid>/stat: parent and CPU ticks (own, and of its reaped children). */
function readStat(pid: number): { ppid: number; ticks: number } | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // Field numbers from proc(5). The command name (field 2) may hold spaces and parentheses, so
  // fields are counted after its closing parenthesis: field 3 (state) is index 0, ppid (4) is 1,
  // utime (14) 11, stime (15) 12, cutime (16) 13, cstime (17) 14.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
  return { ppid: f[1]!, ticks: f[11]! + f[12]! + f[13]! + f[14]! };
}

/**
 * CPU time used so far by a process and everything it started, user + system, ms (at clock-tick
 * resolution: 10 ms at 100 Hz); null when the process is gone or /proc cannot be read. The tree
 * counts because `node --import tsx` runs an `esbuild --service` child; reaped children's time is
 * in their parent's cutime/cstime, so a child that exits inside a window is still counted.
 */
export function cpuTimeMs(pid: number | undefined): number | null {
  if (!pid) return null;
  const root = readStat(pid);
  if (!root) return null;
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat) children.set(stat.ppid, [...(children.get(stat.ppid) ?? []), Number(entry)]);
  }
  let ticks = root.ticks;
  const todo = [...(children.get(pid) ?? [])];
  while (todo.length > 0) {
    const child = todo.pop()!;
    ticks += readStat(child)?.ticks ?? 0;
    todo.push(...(children.get(child) ?? []));
  }
  return (ticks * 1000) / clockTicksPerSecond();
}

/** `calls` of every command in `INFO commandstats` (`cmdstat_<name>:calls=N,…`), by command name. */
export async function commandCalls(redis: Redis): Promise<Map<string, number>> {
  const calls = new Map<string, number>();
  for (const match of (await redis.info('commandstats')).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
    calls.set(match[1]!, Number(match[2]));
  }
  return calls;
}

/** The pid of the Redis server behind `redis` (`INFO server` `process_id`). */
export async function redisServerPid(redis: Redis): Promise<number | undefined> {
  const pid = /^process_id:(\d+)/m.exec(await redis.info('server'))?.[1];
  return pid ? Number(pid) : undefined;
}

/** One command's share of a window. */
export interface CommandCost {
  command: string;
  calls: number;
  perDelivery: number;
}

/** The cost of a window, per delivery. */
export interface DeliveryCost {
  deliveries: number;
  windowSeconds: number;
  /** CPU ms per delivery by process; `total` is their sum, null when a process could not be read. */
  cpuMsPerDelivery: Record<CostedProcess | 'total', number | null>;
  /** CPU ms per delivery of processes that are not Postern but share the machine: `otherPids`, and `load generator` (this process, its children left out). */
  otherCpuMsPerDelivery: Record<string, number | null>;
  /** Redis commands per delivery, every command (Lua scripts' own calls included). */
  redisCommandsPerDelivery: number;
  /** The commands with the most calls, most first. */
  redisCommandsBreakdown: CommandCost[];
}

/** What a window's start needs to know. */
export interface CostWindowOptions {
  redis: Redis;
  /** The processes charged to deliveries. */
  pids: Record<CostedProcess, number | undefined>;
  /** Processes reported alongside, not charged (the receiver). The benchmark's own process is always reported, as `load generator`. */
  otherPids?: Record<string, number | undefined>;
}

const round = (n: number, digits: number) => Math.round(n * 10 ** digits) / 10 ** digits;

/**
 * Opens a cost window now. `end(deliveries, ownCalls)` closes it: `ownCalls` are commands the
 * benchmark itself sent to Redis inside the window (e.g. the probes that waited for the queue to go
 * idle), taken off the counts. The INFO that opened the window is taken off by itself.
 */
export async function openCostWindow(opts: CostWindowOptions): Promise<{ end(deliveries: number, ownCalls?: Record<string, number>): Promise<DeliveryCost> }> {
  const all = { ...opts.pids, ...opts.otherPids };
  // The benchmark's own process tree holds every other process: it reads its own CPU time instead.
  const ownCpuMs = () => {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  };
  const cpuAt = (): Record<string, number | null> => ({ ...Object.fromEntries(Object.entries(all).map(([name, pid]) => [name, cpuTimeMs(pid)])), 'load generator': ownCpuMs() });
  const callsBefore = await commandCalls(opts.redis);
  const cpuBefore = cpuAt();
  const startedAt = performance.now();
  return {
    async end(deliveries, ownCalls = {}) {
      const cpuAfter = cpuAt();
      const callsAfter = await commandCalls(opts.redis);
      const windowSeconds = (performance.now() - startedAt) / 1000;
      const per = (n: number) => n / Math.max(1, deliveries);
      const cpuPer = (name: string) => {
        const before = cpuBefore[name];
        const after = cpuAfter[name];
        return before == null || after == null ? null : round(per(after - before), 3);
      };
      const charged = { ingest: cpuPer('ingest'), sender: cpuPer('sender'), redis: cpuPer('redis') };
      const parts = Object.values(charged);
      const total = parts.some((v) => v === null) ? null : round(parts.reduce<number>((sum, v) => sum + v!, 0), 3);
      const own: Record<string, number> = { ...ownCalls, info: (ownCalls.info ?? 0) + 1 };
      const deltas: CommandCost[] = [];
      for (const [command, after] of callsAfter) {
        const calls = after - (callsBefore.get(command) ?? 0) - (own[command] ?? 0);
        if (calls > 0) deltas.push({ command, calls, perDelivery: round(per(calls), 2) });
      }
      deltas.sort((a, b) => b.calls - a.calls);
      return {
        deliveries,
        windowSeconds: round(windowSeconds, 2),
        cpuMsPerDelivery: { ...charged, total },
        otherCpuMsPerDelivery: Object.fromEntries([...Object.keys(opts.otherPids ?? {}), 'load generator'].map((name) => [name, cpuPer(name)])),
        redisCommandsPerDelivery: round(per(deltas.reduce((sum, d) => sum + d.calls, 0)), 2),
        redisCommandsBreakdown: deltas.slice(0, TOP_COMMANDS),
      };
    },
  };
}

/**
 * Waits until BullMQ's active list (`activeKey`) is empty, so the window ends after the sender
 * finished its last attempts, not when their requests reached the receiver. Returns how many LLEN
 * probes it sent (for `ownCalls`); gives up after `timeoutMs`.
 */
export async function waitForNoActiveJobs(redis: Redis, activeKey: string, timeoutMs = 10_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let probes = 0;
  for (;;) {
    probes++;
    if ((await redis.llen(activeKey)) === 0 || Date.now() > deadline) return probes;
    await new Promise((r) => setTimeout(r, 20));
  }
}

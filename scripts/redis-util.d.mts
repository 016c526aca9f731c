// Types of redis-util.mjs, for TypeScript callers (the fault tests).
import type { ChildProcess } from 'node:child_process';

export const DEFAULT_REDIS_URL: string;
export function parseRedisUrl(url: string): { host: string; port: number; username: string; password: string; db: number; tls: boolean };
export function isLoopbackHost(host: string): boolean;
export function pingRedis(url: string, timeoutMs?: number): Promise<boolean>;
export type RedisProbe = { ok: true } | { ok: false; stage: 'url' | 'connect' | 'tls' | 'auth' | 'reply'; code: string; message: string };
export function probeRedis(
  url: string,
  options?: { timeoutMs?: number; tls?: boolean; ca?: string | Buffer; cert?: string | Buffer; key?: string | Buffer; servername?: string; username?: string; password?: string },
): Promise<RedisProbe>;
export function explainRedisProbe(where: { host: string; port: number }, probe: Exclude<RedisProbe, { ok: true }>, how: { tls: boolean; tlsBecause?: string; plainRedisAnswers?: boolean }): string;
export function waitForRedis(url: string, options?: { timeoutMs?: number; intervalMs?: number; isAlive?: () => boolean }): Promise<boolean>;
export function findRedisServer(): string | null;
export function startLocalRedis(options: {
  port: number;
  dataDir: string;
  bind?: string;
  password?: string;
  extraArgs?: string[];
  timeoutMs?: number;
  onLog?: (line: string) => void;
  redisServer?: string | null;
}): Promise<ChildProcess>;
export function stopRedis(child: ChildProcess, timeoutMs?: number): Promise<void>;

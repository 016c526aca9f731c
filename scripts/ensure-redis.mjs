// `npm test` runs this before jest: make sure a Redis answers on REDIS_URL.
// If none does and the URL is local, start a throwaway daemonized one that
// keeps nothing on disk (`--save "" --appendonly no`) and leave it running for
// later test runs. Exit 0 when Redis answers, 1 otherwise.

import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import {
  DEFAULT_REDIS_URL,
  findRedisServer,
  isLoopbackHost,
  parseRedisUrl,
  pingRedis,
  waitForRedis,
} from './redis-util.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const redisUrl = process.env.REDIS_URL || DEFAULT_REDIS_URL;

/** @param {string} message */
function fail(message) {
  console.error(`[ensure-redis] ${message}`);
  process.exit(1);
}

let target;
try {
  target = parseRedisUrl(redisUrl);
} catch (err) {
  fail(`REDIS_URL is not a redis:// URL (${err.message}).`);
}

if (await pingRedis(redisUrl, 1000)) process.exit(0);

const where = `${target.host}:${target.port}`;
if (!isLoopbackHost(target.host)) {
  fail(`nothing answers PING at ${where} (REDIS_URL). It is not on this machine, so it is not started here.`);
}

const redisServer = findRedisServer();
if (!redisServer) {
  fail(
    [
      `nothing answers PING at ${where}, and redis-server is not installed.`,
      'The tests need a real Redis (≥ 6.2). Get one with either of:',
      '  apt-get install redis-server              (Debian/Ubuntu; then run npm test again)',
      '  docker compose up -d redis                (from the repo root; compose wants ADMIN_TOKEN set)',
      'or point REDIS_URL at a Redis you already run.',
    ].join('\n'),
  );
}

const dataDir = path.join(repoRoot, '.data', 'redis-test');
mkdirSync(dataDir, { recursive: true });
const logFile = path.join(dataDir, 'redis.log');
const bind = target.host === 'localhost' ? '127.0.0.1' : target.host;
const args = [
  '--port', String(target.port),
  '--bind', bind,
  '--daemonize', 'yes',
  '--save', '',
  '--appendonly', 'no',
  '--dir', dataDir,
  '--logfile', logFile,
  '--pidfile', path.join(dataDir, 'redis.pid'),
  ...(target.password ? ['--requirepass', target.password] : []),
];
console.error(`[ensure-redis] nothing answers at ${where}; starting a test redis-server (no persistence, log: ${path.relative(repoRoot, logFile)})`);
const started = spawnSync(redisServer, args, { stdio: 'inherit' });
if (started.error || started.status !== 0) {
  fail(`redis-server failed to start: ${started.error?.message ?? `exit code ${started.status}`}`);
}

if (!(await waitForRedis(redisUrl, { timeoutMs: 10_000 }))) {
  let tail = '';
  try {
    tail = readFileSync(logFile, 'utf8').trim().split('\n').slice(-8).join('\n  ');
  } catch {
    // no log written
  }
  fail(`redis-server started but did not answer PING at ${where} within 10 s.${tail ? `\n  ${tail}` : ''}`);
}
console.error(`[ensure-redis] redis-server is up on ${where}; it stays running (stop it with: redis-cli -p ${target.port}${target.password ? " -a <password>" : ""} shutdown nosave)`);

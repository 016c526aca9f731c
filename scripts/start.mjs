// `npm start`: run Postern locally — ingest and sender, plus a Redis when none
// answers on a local REDIS_URL.
//
// Children run in their own process groups, so a Ctrl-C reaches only this
// script, which stops them in order: apps first (they finish in-flight work),
// then the Redis it started (which flushes its AOF). A second Ctrl-C kills the
// apps at once.

import { spawn } from 'node:child_process';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

import { readFileSync } from 'node:fs';

import {
  explainRedisProbe,
  findRedisServer,
  isLoopbackHost,
  parseRedisUrl,
  probeRedis,
  startLocalRedis,
  stopRedis,
} from './redis-util.mjs';
import { APP_NODE_FLAGS } from './node-flags.mjs';
import { DEVELOPMENT_ALLOWED_ADDRESSES, developmentSecretsKey, readyBanner, startEnvironment } from './start-env.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const APP_STOP_TIMEOUT_MS = 35_000; // the sender's SHUTDOWN_GRACE_MS defaults to 30 s
const READY_TIMEOUT_MS = 30_000;

/** @param {string} message */
const say = (message) => console.log(`[start] ${message}`);
/** @param {string} message */
const warn = (message) => console.error(`[start] ${message}`);

// ---- environment ---------------------------------------------------------

const env = startEnvironment(process.env);
const isDevelopment = env.NODE_ENV === 'development';
const apiPort = Number(env.PORT || 3000);

// Stored secrets are sealed with SECRETS_KEY; in development one is kept in .data/ (production
// refuses to start without its own).
if (isDevelopment && !env.SECRETS_KEY) {
  const file = path.join(repoRoot, '.data', 'secrets-key');
  try {
    const { key, created } = developmentSecretsKey(file);
    env.SECRETS_KEY = key;
    say(`${created ? 'generated a development SECRETS_KEY in' : 'SECRETS_KEY from'} ${path.relative(repoRoot, file)} (stored secrets are sealed with it; keep the file with .data/redis)`);
  } catch (err) {
    warn(`could not read or write ${path.relative(repoRoot, file)}: ${err.message}`);
    process.exit(1);
  }
}

// ---- Redis ---------------------------------------------------------------

let target;
try {
  target = parseRedisUrl(env.REDIS_URL);
} catch (err) {
  warn(`REDIS_URL is not a redis:// URL (${err.message}).`);
  process.exit(1);
}
const redisWhere = `${target.host}:${target.port}`;

// TLS as the apps will use it (packages/shared/src/redis-settings.ts): a rediss:// URL or
// REDIS_TLS=true, with the CA, client certificate and server name they are given.
const tlsOn = target.tls || /^(true|1|yes|on|y|enabled)$/i.test(env.REDIS_TLS ?? '');
/** @type {{ca?: Buffer, cert?: Buffer, key?: Buffer, servername?: string}} */
const tlsFiles = {};
if (tlsOn) {
  for (const [option, name] of /** @type {const} */ ([['ca', 'REDIS_TLS_CA_FILE'], ['cert', 'REDIS_TLS_CERT_FILE'], ['key', 'REDIS_TLS_KEY_FILE']])) {
    if (!env[name]) continue;
    try {
      tlsFiles[option] = readFileSync(env[name]);
    } catch (err) {
      warn(`${name}=${env[name]} cannot be read (${err.code ?? err.message}).`);
      process.exit(1);
    }
  }
  if (env.REDIS_TLS_SERVERNAME) tlsFiles.servername = env.REDIS_TLS_SERVERNAME;
}

/** @type {import('node:child_process').ChildProcess | null} */
let redisChild = null;
const probe = await probeRedis(env.REDIS_URL, {
  // A TLS handshake takes longer than a PING, and a busy machine longer still.
  timeoutMs: tlsOn ? 3000 : 1000,
  tls: tlsOn,
  ...tlsFiles,
  username: env.REDIS_USERNAME || undefined,
  password: env.REDIS_PASSWORD || undefined,
});
if (!probe.ok && tlsOn) {
  // npm start runs a plain redis-server only: a TLS one is never started here, whatever the host.
  let plainRedisAnswers = false;
  if (probe.stage === 'tls') {
    const plain = await probeRedis(`redis://${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`, { timeoutMs: 1000 });
    plainRedisAnswers = plain.ok || plain.stage === 'auth';
  }
  warn(explainRedisProbe(target, probe, { tls: true, tlsBecause: target.tls ? 'REDIS_URL is rediss://' : 'REDIS_TLS=true', plainRedisAnswers }));
  process.exit(1);
}
if (!probe.ok && probe.stage !== 'connect') {
  // Something answers there, so starting a Redis on that port could only fail: say what it said.
  warn(explainRedisProbe(target, probe, { tls: false }));
  process.exit(1);
}
if (!probe.ok) {
  if (!isLoopbackHost(target.host)) {
    warn(`${explainRedisProbe(target, probe, { tls: false })} It is not on this machine, so npm start does not start it; or unset REDIS_URL to use a local one.`);
    process.exit(1);
  }
  if (!findRedisServer()) {
    warn(
      [
        `nothing answers PING at ${redisWhere}, and redis-server is not installed. Postern needs Redis (≥ 6.2):`,
        '  apt-get install redis-server       (Debian/Ubuntu package; npm start then starts it for you)',
        '  docker compose up -d redis         (from the repo root; compose wants ADMIN_TOKEN set)',
        'or set REDIS_URL to a Redis you already run.',
      ].join('\n'),
    );
    process.exit(1);
  }
  const dataDir = path.join(repoRoot, '.data', 'redis');
  try {
    redisChild = await startLocalRedis({
      port: target.port,
      dataDir,
      bind: target.host === 'localhost' ? '127.0.0.1' : target.host,
      password: target.password || undefined,
      extraArgs: ['--loglevel', 'warning'],
      onLog: (line) => console.error(`[redis] ${line}`),
    });
  } catch (err) {
    warn(`could not start redis-server: ${err.message}`);
    process.exit(1);
  }
  say(`started redis-server on ${redisWhere} (AOF in ${path.relative(repoRoot, dataDir)}/); it stops when Postern stops`);
}

// ---- apps ----------------------------------------------------------------

/** @type {Map<string, import('node:child_process').ChildProcess>} */
const apps = new Map();
let stopping = false;
let exitCode = 0;

/**
 * Copies a child's stream to ours, each line prefixed with `[name]`.
 * @param {import('node:stream').Readable} stream
 * @param {NodeJS.WriteStream} out
 * @param {string} name
 * @param {(line: string) => void} [onLine]
 */
function pipeLines(stream, out, name, onLine) {
  const lines = readline.createInterface({ input: stream, crlfDelay: Infinity });
  lines.on('line', (line) => {
    out.write(`[${name}] ${line}\n`);
    onLine?.(line);
  });
}

let announced = false;
function announceReady() {
  if (announced || stopping) return;
  announced = true;
  for (const line of readyBanner(apiPort, env)) {
    if (line.startsWith('  ')) console.log(line);
    else say(line);
  }
}

/**
 * @param {string} name  'ingest' | 'sender'
 * @param {(line: string) => void} [onLine]  called with each line it prints
 */
function startApp(name, onLine) {
  // The apps' heap settings (scripts/node-flags.mjs), as in production.
  const child = spawn(process.execPath, [...APP_NODE_FLAGS, '--conditions=development', '--import', 'tsx', `apps/${name}/src/main.ts`], {
    cwd: repoRoot,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  apps.set(name, child);
  pipeLines(child.stdout, process.stdout, name, onLine);
  pipeLines(child.stderr, process.stderr, name, onLine);
  child.once('error', (err) => {
    warn(`${name} could not be started: ${err.message}`);
    onAppExit(name, 1, null);
  });
  // 'close', not 'exit': it fires once the child's output has been read to the end.
  child.once('close', (code, signal) => onAppExit(name, code, signal));
  return child;
}

/**
 * @param {string} name
 * @param {number | null} code
 * @param {NodeJS.Signals | null} signal
 */
function onAppExit(name, code, signal) {
  if (!apps.has(name)) return;
  apps.delete(name);
  const how = signal ? `signal ${signal}` : `code ${code}`;
  if (stopping) {
    // 130/143: the conventional exit codes after handling SIGINT/SIGTERM.
    const clean = signal !== null || code === 0 || code === 130 || code === 143;
    if (!clean) {
      warn(`${name} exited with ${how} while stopping`);
      exitCode ||= 1;
    }
  } else {
    warn(`${name} exited unexpectedly (${how}); stopping everything`);
    exitCode = 1;
    void shutdown('SIGTERM');
  }
  if (apps.size === 0) allAppsExited();
}

let allAppsExited = () => {};
const appsDone = new Promise((resolve) => { allAppsExited = resolve; });

/**
 * Stops the apps with `signal`, waits for them (SIGKILL after a deadline),
 * then stops the Redis this script started, and exits.
 * @param {NodeJS.Signals} signal
 */
async function shutdown(signal) {
  if (stopping) return;
  stopping = true;
  for (const [, child] of apps) child.kill(signal);
  const killTimer = setTimeout(() => {
    warn(`apps still running after ${APP_STOP_TIMEOUT_MS / 1000} s; killing them`);
    for (const [, child] of apps) child.kill('SIGKILL');
  }, APP_STOP_TIMEOUT_MS);
  if (apps.size > 0) await appsDone;
  clearTimeout(killTimer);
  if (redisChild) {
    redisChild.removeListener('exit', onRedisExit);
    say('stopping the redis-server it started');
    await stopRedis(redisChild);
  }
  process.exit(exitCode);
}

/** @param {number | null} code @param {NodeJS.Signals | null} signal */
function onRedisExit(code, signal) {
  if (stopping) return;
  warn(`redis-server exited unexpectedly (${signal ? `signal ${signal}` : `code ${code}`}); stopping everything`);
  exitCode = 1;
  void shutdown('SIGTERM');
}
redisChild?.once('exit', onRedisExit);

for (const signal of /** @type {NodeJS.Signals[]} */ (['SIGINT', 'SIGTERM', 'SIGHUP'])) {
  process.on(signal, () => {
    if (!stopping) {
      say(`${signal} received; stopping (again to force)`);
      void shutdown(signal === 'SIGHUP' ? 'SIGTERM' : signal);
      return;
    }
    warn('forcing the apps to stop');
    for (const [, child] of apps) child.kill('SIGKILL');
  });
}

// Last resort if this script dies of an uncaught error: leave no orphans.
process.on('exit', () => {
  for (const [, child] of apps) child.kill('SIGKILL');
  if (redisChild && redisChild.exitCode === null && redisChild.signalCode === null) redisChild.kill('SIGTERM');
});

if (isDevelopment && process.env.ALLOWED_ADDRESSES === undefined) {
  warn(`warning: ALLOWED_ADDRESSES=${DEVELOPMENT_ALLOWED_ADDRESSES} — deliveries to loopback are allowed for local testing (development only; set ALLOWED_ADDRESSES= to allow none)`);
}
// The apps' output reaches the terminal through this process: let their readable logs keep colour.
if (process.stdout.isTTY && env.NO_COLOR === undefined && env.FORCE_COLOR === undefined) env.FORCE_COLOR = '1';
startApp('ingest', (line) => {
  if (/listening/i.test(line)) announceReady();
});
startApp('sender');

// Readiness also by polling, in case the log line reads differently.
void (async () => {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!announced && !stopping && Date.now() < deadline) {
    try {
      const res = await fetch(`http://127.0.0.1:${apiPort}/healthz`, { signal: AbortSignal.timeout(1000) });
      if (res.status === 200) return announceReady();
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  if (!announced && !stopping) warn(`ingest did not answer /healthz on port ${apiPort} within ${READY_TIMEOUT_MS / 1000} s`);
})();

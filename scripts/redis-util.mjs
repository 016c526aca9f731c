// Small Redis helpers for the repo's scripts (npm start, npm test, CI).
// Node builtins only: these run before `npm ci` has necessarily finished and
// must not depend on ioredis.

import { spawn } from 'node:child_process';
import { accessSync, constants, mkdirSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';

/** The Redis the tests and `npm start` use when REDIS_URL is unset. */
export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/**
 * Parses a Redis URL: `redis://[[user]:password@]host[:port][/db]`, or
 * `rediss://…` for TLS.
 * @param {string} url
 * @returns {{host: string, port: number, username: string, password: string, db: number, tls: boolean}}
 * @throws {TypeError} when the URL is not a redis:// or rediss:// URL.
 */
export function parseRedisUrl(url) {
  const u = new URL(url);
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:') {
    throw new TypeError(`not a redis:// URL: ${u.protocol}//${u.host}`);
  }
  const dbText = u.pathname.replace(/^\//, '');
  return {
    // URL keeps IPv6 hosts in brackets; sockets want them bare.
    host: (u.hostname || '127.0.0.1').replace(/^\[(.*)\]$/, '$1'),
    port: u.port ? Number(u.port) : 6379,
    username: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
    db: dbText ? Number(dbText) : 0,
    tls: u.protocol === 'rediss:',
  };
}

/**
 * Whether a host name means this machine (so a script may start Redis for it).
 * @param {string} host  as returned by {@link parseRedisUrl}
 */
export function isLoopbackHost(host) {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/**
 * Encodes one command in RESP, so passwords with spaces or CRLF stay intact.
 * @param {string[]} args
 */
function encodeCommand(args) {
  let out = `*${args.length}\r\n`;
  for (const arg of args) out += `$${Buffer.byteLength(arg)}\r\n${arg}\r\n`;
  return out;
}

/**
 * Asks the Redis at `url` for PING over a raw socket (AUTH first when the URL
 * carries a password).
 * @param {string} url  redis:// URL; the db number is parsed and ignored (PING does not need it)
 * @param {number} [timeoutMs=1000]  whole exchange, connect included
 * @returns {Promise<boolean>} true on `+PONG`; false on refusal, timeout, an
 *   auth error, `-LOADING` or anything else. Never rejects.
 */
export function pingRedis(url, timeoutMs = 1000) {
  let target;
  try {
    target = parseRedisUrl(url);
  } catch {
    return Promise.resolve(false);
  }
  return new Promise((resolve) => {
    const commands = [];
    if (target.password) {
      commands.push(
        target.username
          ? encodeCommand(['AUTH', target.username, target.password])
          : encodeCommand(['AUTH', target.password]),
      );
    }
    // Inline PING, as the protocol allows; what redis-cli and a human would send.
    commands.push('PING\r\n');

    let settled = false;
    let buffered = '';
    let repliesSeen = 0;
    const socket = target.tls
      ? tls.connect({ host: target.host, port: target.port, servername: target.host })
      : net.connect({ host: target.host, port: target.port });
    const finish = (ok) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.setNoDelay(true);
    socket.once(target.tls ? 'secureConnect' : 'connect', () => socket.write(commands.join('')));
    socket.on('data', (chunk) => {
      buffered += chunk.toString('latin1');
      let newline;
      while ((newline = buffered.indexOf('\r\n')) !== -1) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 2);
        repliesSeen += 1;
        // A server without a password answers AUTH with an error yet still
        // PONGs; one that wants a password answers PING with -NOAUTH. Only
        // the PONG counts.
        if (line === '+PONG') return finish(true);
        if (repliesSeen >= commands.length) return finish(false);
      }
    });
    socket.on('error', () => finish(false));
    socket.on('close', () => finish(false));
  });
}

/**
 * Polls {@link pingRedis} until it answers or the deadline passes.
 * @param {string} url
 * @param {{timeoutMs?: number, intervalMs?: number, isAlive?: () => boolean}} [options]
 *   timeoutMs: total deadline, default 10 000; intervalMs: pause between
 *   tries, default 100; isAlive: stop early (false) once this returns false.
 * @returns {Promise<boolean>}
 */
export async function waitForRedis(url, { timeoutMs = 10_000, intervalMs = 100, isAlive = () => true } = {}) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive()) return false;
    if (await pingRedis(url, Math.min(1000, Math.max(100, deadline - Date.now())))) return true;
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  return false;
}

/**
 * The path of `redis-server` on PATH, or null when it is not installed.
 * @returns {string | null}
 */
export function findRedisServer() {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, 'redis-server');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return null;
}

/**
 * Whether something accepts TCP connections on host:port.
 * @param {string} host
 * @param {number} port
 * @returns {Promise<boolean>}
 */
function isListening(host, port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (listening) => {
      socket.destroy();
      resolve(listening);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/**
 * Starts `redis-server` in the foreground as a child process (not daemonized,
 * so killing the child stops it) with AOF persistence in `dataDir`, and waits
 * until it answers PING.
 *
 * The child is started in its own process group, so a Ctrl-C in the terminal
 * reaches only the parent, which decides when Redis stops (after the apps).
 * Stop it with {@link stopRedis}.
 *
 * @param {object} options
 * @param {number} options.port
 * @param {string} options.dataDir  created if missing; AOF files go here
 * @param {string} [options.bind='127.0.0.1']
 * @param {string} [options.password]  sets `requirepass` (and is used for the readiness PING)
 * @param {string[]} [options.extraArgs]  appended to the command line
 * @param {number} [options.timeoutMs=10000]  deadline for the first PONG
 * @param {(line: string) => void} [options.onLog]  each line Redis prints; default: dropped
 * @param {string} [options.redisServer]  path of the binary; default {@link findRedisServer}
 * @returns {Promise<import('node:child_process').ChildProcess>} the running child
 * @throws {Error} when redis-server is missing, the port is taken, it exits
 *   early or does not answer in time; the message carries the last lines it printed.
 */
export async function startLocalRedis({
  port,
  dataDir,
  bind = '127.0.0.1',
  password,
  extraArgs = [],
  timeoutMs = 10_000,
  onLog = () => {},
  redisServer = findRedisServer(),
}) {
  if (!redisServer) throw new Error('redis-server is not installed (Debian: apt-get install redis-server)');
  // Otherwise the readiness PING below could be answered by whatever already
  // listens there, while our child fails to bind and exits.
  if (await isListening(bind, port)) throw new Error(`port ${bind}:${port} is already in use`);
  mkdirSync(dataDir, { recursive: true });
  const args = [
    '--port', String(port),
    '--bind', bind,
    '--appendonly', 'yes',
    '--appendfsync', 'everysec',
    '--dir', path.resolve(dataDir),
    '--daemonize', 'no',
    ...(password ? ['--requirepass', password] : []),
    ...extraArgs,
  ];
  const child = spawn(redisServer, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });

  // Keep draining the pipes for the child's whole life, else Redis blocks on
  // a full pipe; keep the last lines for the error message.
  const recent = [];
  const onChunk = (chunk) => {
    for (const line of chunk.toString('utf8').split(/\r?\n/)) {
      if (!line.trim()) continue;
      recent.push(line);
      if (recent.length > 20) recent.shift();
      onLog(line);
    }
  };
  child.stdout.on('data', onChunk);
  child.stderr.on('data', onChunk);

  let exited = false;
  let spawnError;
  child.once('exit', () => { exited = true; });
  child.once('error', (err) => { spawnError = err; exited = true; });

  const auth = password ? `:${encodeURIComponent(password)}@` : '';
  const host = bind.includes(':') ? `[${bind}]` : bind;
  const ready = await waitForRedis(`redis://${auth}${host}:${port}`, { timeoutMs, isAlive: () => !exited });
  if (ready) return child;

  if (!exited) await stopRedis(child, 2000);
  const why = spawnError
    ? spawnError.message
    : exited
      ? `exited with code ${child.exitCode ?? child.signalCode}`
      : `did not answer PING within ${timeoutMs} ms`;
  const tail = recent.length ? `\n  ${recent.slice(-8).join('\n  ')}` : '';
  throw new Error(`redis-server on ${bind}:${port} ${why}${tail}`);
}

/**
 * Stops a redis-server child: SIGTERM (Redis flushes the AOF and exits),
 * then SIGKILL if it is still running after `timeoutMs` (Redis 7 refuses a
 * SIGTERM whose final save fails, e.g. when its data dir is gone).
 * @param {import('node:child_process').ChildProcess} child
 * @param {number} [timeoutMs=10000]
 * @returns {Promise<void>} once the child has exited
 */
export function stopRedis(child, timeoutMs = 10_000) {
  const gone = child.pid === undefined || child.exitCode !== null || child.signalCode !== null;
  if (gone) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

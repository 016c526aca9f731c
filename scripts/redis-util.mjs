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
export async function pingRedis(url, timeoutMs = 1000) {
  return (await probeRedis(url, { timeoutMs })).ok;
}

/** Error codes of a server certificate Node would not accept. */
const CERTIFICATE_CODES = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * @typedef {{ok: true} | {ok: false, stage: 'url' | 'connect' | 'tls' | 'auth' | 'reply', code: string, message: string}} RedisProbe
 *   What {@link probeRedis} found: `url` the URL does not parse; `connect` no TCP connection
 *   (`ECONNREFUSED`, `ENOTFOUND`, `ETIMEDOUT`…); `tls` connected but no TLS session: a certificate
 *   refused (`code` as Node names it), a handshake error, or `TLS_NO_ANSWER` (the server never
 *   answered the handshake: it does not speak TLS); `auth` Redis refused the credentials (`code` its
 *   error word, `NOAUTH`, `WRONGPASS`); `reply` anything else (no PONG, `LOADING`, a closed connection).
 */

/**
 * Asks the Redis at `url` for PING, like {@link pingRedis}, and says what went wrong when it does
 * not answer, so a script can name the problem instead of guessing.
 * @param {string} url  redis:// or rediss:// (TLS) URL
 * @param {object} [options]
 * @param {number} [options.timeoutMs=1000]  whole exchange, connect and handshake included
 * @param {boolean} [options.tls]  TLS even for a redis:// URL (`REDIS_TLS=true`); default: rediss:// only
 * @param {string | Buffer} [options.ca]  PEM of the CA that signed the server's certificate (default: Node's list)
 * @param {string | Buffer} [options.cert]  PEM client certificate (mutual TLS), with `key`
 * @param {string | Buffer} [options.key]
 * @param {string} [options.servername]  the name the certificate carries (default: the host)
 * @param {string} [options.username]  overrides the URL's
 * @param {string} [options.password]  overrides the URL's
 * @returns {Promise<RedisProbe>} never rejects
 */
export function probeRedis(url, options = {}) {
  const { timeoutMs = 1000 } = options;
  let target;
  try {
    target = parseRedisUrl(url);
  } catch (err) {
    return Promise.resolve({ ok: false, stage: 'url', code: 'ERR_INVALID_URL', message: String(err.message) });
  }
  const useTls = options.tls ?? target.tls;
  const username = options.username || target.username;
  const password = options.password || target.password;
  return new Promise((resolve) => {
    const commands = [];
    if (password) commands.push(username ? encodeCommand(['AUTH', username, password]) : encodeCommand(['AUTH', password]));
    // Inline PING, as the protocol allows; what redis-cli and a human would send.
    commands.push('PING\r\n');

    let settled = false;
    let buffered = '';
    let repliesSeen = 0;
    let connected = false;
    let secured = !useTls;
    /** @type {string | null} the first error reply, e.g. `-NOAUTH Authentication required.` */
    let refusal = null;
    const socket = useTls
      ? tls.connect({
          host: target.host,
          port: target.port,
          // Without a name the certificate is checked against the host; an address is sent as no SNI.
          servername: options.servername || (net.isIP(target.host) ? undefined : target.host),
          ...(options.ca ? { ca: options.ca } : {}),
          ...(options.cert ? { cert: options.cert, key: options.key } : {}),
        })
      : net.connect({ host: target.host, port: target.port });
    /** @param {RedisProbe} result */
    const finish = (result) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const failed = (stage, code, message) => finish({ ok: false, stage, code, message });
    const timer = setTimeout(() => {
      if (!connected) failed('connect', 'ETIMEDOUT', `no connection within ${timeoutMs} ms`);
      else if (!secured) failed('tls', 'TLS_NO_ANSWER', `connected, but no answer to the TLS handshake within ${timeoutMs} ms`);
      else failed('reply', 'ETIMEDOUT', `no answer to PING within ${timeoutMs} ms`);
    }, timeoutMs);
    socket.setNoDelay(true);
    socket.once('connect', () => {
      connected = true;
    });
    socket.once(useTls ? 'secureConnect' : 'connect', () => {
      connected = true;
      secured = true;
      socket.write(commands.join(''));
    });
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
        if (line === '+PONG') return finish({ ok: true });
        if (line.startsWith('-') && refusal === null) refusal = line.slice(1);
        if (repliesSeen >= commands.length) {
          const word = (refusal ?? line).split(' ')[0] ?? '';
          const auth = /^(NOAUTH|WRONGPASS|NOPERM)$/.test(word) || /invalid (username-)?password|AUTH.*without any password/i.test(refusal ?? '');
          return failed(auth ? 'auth' : 'reply', word || 'NO_PONG', refusal ?? line);
        }
      }
    });
    socket.on('error', (err) => {
      const code = /** @type {NodeJS.ErrnoException} */ (err).code ?? 'ERROR';
      const tlsTrouble = CERTIFICATE_CODES.has(code) || code.startsWith('ERR_SSL') || code.startsWith('ERR_TLS') || code === 'EPROTO';
      if (tlsTrouble || (connected && !secured)) failed('tls', code, err.message);
      else failed(connected ? 'reply' : 'connect', code, err.message);
    });
    socket.on('close', () => {
      if (!connected) failed('connect', 'ECONNREFUSED', 'the connection was closed before it was made');
      else if (!secured) failed('tls', 'ECONNRESET', 'the server closed the connection during the TLS handshake');
      else failed('reply', 'ECONNRESET', 'the server closed the connection before answering PING');
    });
  });
}

/**
 * OpenSSL's reason out of its error string (`…:SSL routines:ssl3_read_bytes:tlsv13 alert certificate
 * required:…` → `tlsv13 alert certificate required`); any other message's first line.
 * @param {string} message
 */
function readableTlsError(message) {
  return /SSL routines:[^:]*:([^:]+)/.exec(message)?.[1] ?? message.split('\n')[0] ?? message;
}

/**
 * Whether a certificate code means the server's certificate was not trusted or did not match.
 * @param {string} code
 */
function isCertificateProblem(code) {
  return CERTIFICATE_CODES.has(code);
}

/**
 * What to tell a person whose Redis did not answer {@link probeRedis}: what was tried (plain TCP or
 * TLS to host:port), what happened, and what to check. `plainRedisAnswers` says whether a plain
 * (non-TLS) PING to the same address got an answer: a TLS handshake that went unanswered then means
 * the port serves Redis without TLS.
 * @param {{host: string, port: number}} where
 * @param {Exclude<RedisProbe, {ok: true}>} probe
 * @param {{tls: boolean, tlsBecause?: string, plainRedisAnswers?: boolean}} how  `tlsBecause`: what
 *   turned TLS on, for the message (default `REDIS_URL is rediss://`)
 * @returns {string} one paragraph, without a trailing newline
 */
export function explainRedisProbe(where, probe, how) {
  const address = `${where.host.includes(':') ? `[${where.host}]` : where.host}:${where.port}`;
  const tried = how.tls ? `TLS to ${address} (${how.tlsBecause ?? 'REDIS_URL is rediss://'})` : `plain TCP to ${address} (REDIS_URL)`;
  const head = `could not reach Redis: tried ${tried}`;
  switch (probe.stage) {
    case 'url':
      return `REDIS_URL is not a redis:// or rediss:// URL (${probe.message}).`;
    case 'connect':
      if (probe.code === 'ECONNREFUSED') {
        return `${head}: nothing listens there (connection refused). Check the port; ${how.tls ? 'a Redis serving TLS listens on its tls-port (redis-server --tls-port <port> --port 0 …), which npm start does not start for you' : 'start that Redis'}.`;
      }
      if (probe.code === 'ENOTFOUND' || probe.code === 'EAI_AGAIN') return `${head}: the host name does not resolve (${probe.code}). Check the host in REDIS_URL.`;
      if (probe.code === 'ETIMEDOUT') return `${head}: no connection within the time allowed. Check the host, the port and any firewall between.`;
      return `${head}: the connection failed (${probe.code}: ${probe.message}). Check the host and port in REDIS_URL.`;
    case 'tls':
      if (probe.code === 'TLS_NO_ANSWER' || (probe.code === 'ECONNRESET' && how.plainRedisAnswers)) {
        return how.plainRedisAnswers
          ? `${head}: a Redis answers there without TLS, so the TLS handshake went unanswered. Use redis:// for a plain Redis, or the port your Redis serves TLS on (its tls-port).`
          : `${head}: the connection was made but nothing answered the TLS handshake. Check that the port is the one Redis serves TLS on (its tls-port), not a plain port or another service.`;
      }
      if (isCertificateProblem(probe.code)) {
        return `${head}: the server's certificate was not accepted (${probe.code}: ${probe.message}). Set REDIS_TLS_CA_FILE to the PEM file of the CA that signed it, and REDIS_TLS_SERVERNAME when the certificate names another host than the one in REDIS_URL.`;
      }
      if (/CERTIFICATE_REQUIRED/.test(probe.code)) {
        return `${head}: Redis asks for a client certificate (tls-auth-clients) and none was given. Set REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE to a certificate its CA signed, and its key.`;
      }
      return `${head}: the TLS handshake failed (${probe.code}: ${readableTlsError(probe.message)}). If Redis asks for client certificates (tls-auth-clients), set REDIS_TLS_CERT_FILE and REDIS_TLS_KEY_FILE; check too that the port serves TLS.`;
    case 'auth':
      return `${head}: Redis refused the credentials (${probe.message}). Check the user and password in REDIS_URL, or REDIS_USERNAME and REDIS_PASSWORD.`;
    default:
      if (!how.tls && probe.code === 'ECONNRESET') {
        return `${head}: the server closed the connection without answering PING. If that port serves TLS, use rediss:// (with REDIS_TLS_CA_FILE for a private CA).`;
      }
      return `${head}: connected, but no PONG (${probe.code}: ${probe.message}). Check that it is a Redis server and that it is ready.`;
  }
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

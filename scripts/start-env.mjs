// The environment `npm start` gives the apps: the caller's, plus development defaults.

import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { DEFAULT_REDIS_URL } from './redis-util.mjs';

/**
 * The development `SECRETS_KEY` kept in `file` (`.data/secrets-key` under `npm start`): read when
 * it exists, else 32 random bytes (base64) written there, readable by the owner only.
 *
 * @param {string} file
 * @returns {{ key: string, created: boolean }}
 */
export function developmentSecretsKey(file) {
  let missing = false;
  try {
    const key = readFileSync(file, 'utf8').trim();
    if (key) return { key, created: false };
  } catch (err) {
    if (/** @type {NodeJS.ErrnoException} */ (err).code !== 'ENOENT') throw err;
    missing = true;
  }
  const key = randomBytes(32).toString('base64');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${key}\n`, { mode: 0o600, flag: missing ? 'wx' : 'w' });
  return { key, created: true };
}

/**
 * The lines `npm start` prints once ingest answers: where the API, the dashboard and the
 * operations pages are, and in development how to create the first org.
 *
 * @param {number} apiPort
 * @param {Record<string, string | undefined>} env  the apps' environment ({@link startEnvironment})
 * @returns {string[]}
 */
export function readyBanner(apiPort, env) {
  const base = `http://127.0.0.1:${apiPort}`;
  const lines = [
    `Postern API: ${base}   (health: /healthz, metrics: /metrics, queues: /admin/queues)`,
    `Dashboard:   ${base}/dashboard/   (paste an API key of your org)`,
  ];
  if (env.NODE_ENV === 'development' && env.ADMIN_TOKEN) {
    const token = env.ADMIN_TOKEN.replace(/'/g, `'\\''`);
    lines.push(
      'create an org (the answer holds its API key, shown once):',
      `  curl -s -X POST localhost:${apiPort}/v1/orgs -H 'authorization: Bearer ${token}' -H 'content-type: application/json' -d '{"name":"acme"}'`,
    );
  }
  return lines;
}

/** Loopback, IPv4 and IPv6: what `npm start` lets endpoints reach in development. */
export const DEVELOPMENT_ALLOWED_ADDRESSES = '127.0.0.1,::1';

/**
 * The apps' environment under `npm start`: `NODE_ENV` defaults to `development`, and in
 * development a well-known admin token, loopback delivery and loopback-only listening are
 * defaults. A default replaces only an *unset* variable: `ALLOWED_ADDRESSES=` (set, empty) means
 * no private address is allowed, and stays empty.
 *
 * @param {Record<string, string | undefined>} processEnv  the caller's environment (not changed)
 * @returns {Record<string, string | undefined>} a new object
 */
export function startEnvironment(processEnv) {
  const env = { ...processEnv };
  env.NODE_ENV ||= 'development';
  env.REDIS_URL ||= DEFAULT_REDIS_URL;
  if (env.NODE_ENV === 'development') {
    // A well-known admin token is fine on a laptop, never in production: there
    // the app's own config check refuses to start without one.
    env.ADMIN_TOKEN ||= 'dev-admin-token-local'; // ingest wants ≥ 16 characters
    env.ALLOWED_ADDRESSES ??= DEVELOPMENT_ALLOWED_ADDRESSES;
    // A published admin token and loopback delivery must not be reachable from the network.
    env.HOST ||= '127.0.0.1';
    env.SENDER_HOST ||= '127.0.0.1';
  }
  return env;
}

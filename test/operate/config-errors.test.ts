import { spawnApp, type SpawnedApp } from '../support/spawn-app.js';

/**
 * Issue 6, graceful config errors: a bad or missing setting stops start-up with exit code 1 and
 * one line on stderr naming it — no stack trace, no log noise. Runs the real `main.ts` of each app.
 */

const spawned: SpawnedApp[] = [];

afterAll(async () => {
  for (const app of spawned) await app.stop();
});

/** Settings every case starts from; each case breaks one. The Redis is never reached. */
const BASE = {
  REDIS_URL: 'redis://127.0.0.1:1',
  ADMIN_TOKEN: 'a-valid-admin-token-0123456789',
  PORT: '0',
  SENDER_PORT: '0',
  LOG_LEVEL: 'info',
};

const CASES: { app: 'ingest' | 'sender'; env: Record<string, string | undefined>; line: RegExp }[] = [
  { app: 'ingest', env: { ADMIN_TOKEN: undefined }, line: /^postern-ingest: invalid configuration: ADMIN_TOKEN: is required$/ },
  { app: 'ingest', env: { PORT: 'eighty' }, line: /^postern-ingest: invalid configuration: PORT: / },
  { app: 'ingest', env: { BULL_BOARD_READ_ONLY: 'maybe' }, line: /^postern-ingest: invalid configuration: BULL_BOARD_READ_ONLY: must be true or false$/ },
  { app: 'sender', env: { SENDER_CONCURRENCY: '0' }, line: /^postern-sender: invalid configuration: SENDER_CONCURRENCY: / },
  { app: 'sender', env: { SENDER_PORT: '70000' }, line: /^postern-sender: invalid configuration: SENDER_PORT: / },
  { app: 'sender', env: { REDIS_URL: 'http://127.0.0.1:6379' }, line: /^postern-sender: invalid configuration: REDIS_URL: must start with redis:\/\/ or rediss:\/\/$/ },
  { app: 'sender', env: { HTTP_HEADERS_TIMEOUT_MS: '5000', HTTP_REQUEST_TIMEOUT_MS: '1000' }, line: /^postern-sender: invalid configuration: HTTP_HEADERS_TIMEOUT_MS: must not be longer than HTTP_REQUEST_TIMEOUT_MS$/ },
  // Production: no stored secret in clear, no portal link built from a request's Host header.
  { app: 'ingest', env: { NODE_ENV: 'production', PUBLIC_URL: 'https://postern.example.com', SECRETS_KEY: undefined }, line: /^postern-ingest: invalid configuration: SECRETS_KEY: is required when NODE_ENV=production \(32 random bytes, base64: openssl rand -base64 32\)$/ },
  { app: 'sender', env: { NODE_ENV: 'production', SECRETS_KEY: undefined }, line: /^postern-sender: invalid configuration: SECRETS_KEY: is required when NODE_ENV=production / },
  { app: 'ingest', env: { NODE_ENV: 'production', PUBLIC_URL: undefined }, line: /^postern-ingest: invalid configuration: PUBLIC_URL: is required when NODE_ENV=production / },
  { app: 'sender', env: { SECRETS_KEY: 'dG9vIHNob3J0' }, line: /^postern-sender: invalid configuration: SECRETS_KEY: must be 32 bytes, base64 \(openssl rand -base64 32\)$/ },
  { app: 'ingest', env: { SECRETS_KEY_PREVIOUS: 'no-colon-here' }, line: /^postern-ingest: invalid configuration: SECRETS_KEY_PREVIOUS: must be id:key,id:key/ },
];

test.each(CASES)('$app with $env stops with exit code 1 and one line naming the setting', async ({ app, env, line }) => {
  const child = spawnApp(app, { ...BASE, ...env });
  spawned.push(child);
  const code = await child.exited;
  // Let the pipes drain: 'exit' can come before the last chunk of output.
  await new Promise<void>((resolve) => (child.child.stderr!.readableEnded ? resolve() : child.child.stderr!.once('end', () => resolve())));
  expect(code).toBe(1);
  const lines = child.stderr.filter((l) => l.trim() !== '');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(line);
  expect(child.stdout.filter((l) => l.trim() !== '')).toEqual([]);
}, 30_000);

test('ingest with a HOST it cannot listen on stops with exit code 1 and one line, never claiming to listen', async () => {
  const child = spawnApp('ingest', { ...BASE, HOST: 'no-such-host.invalid' });
  spawned.push(child);
  const code = await child.exited;
  await new Promise<void>((resolve) => (child.child.stderr!.readableEnded ? resolve() : child.child.stderr!.once('end', () => resolve())));
  expect(code).toBe(1);
  const lines = child.stderr.filter((l) => l.trim() !== '');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/^postern-ingest: cannot listen on no-such-host\.invalid:0: .*ENOTFOUND/);
  expect(child.stdout.filter((l) => /listening/i.test(l))).toEqual([]);
}, 30_000);

test("ingest's start-up line names the address it actually bound, not the HOST setting", async () => {
  const child = spawnApp('ingest', { ...BASE, HOST: 'localhost' });
  spawned.push(child);
  const port = await child.port();
  const banner = child.stdout.map((l) => JSON.parse(l) as { msg: string; address?: string; port?: number }).find((e) => e.port === port)!;
  expect(banner.address).toMatch(/^(127\.0\.0\.1|::1)$/);
  const shown = banner.address!.includes(':') ? `[${banner.address}]` : banner.address;
  expect(banner.msg).toBe(`ingest listening on http://${shown}:${port}`);
  expect(await child.stop()).toBe(0);
}, 30_000);

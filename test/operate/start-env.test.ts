import { DEVELOPMENT_ALLOWED_ADDRESSES, developmentSecretsKey, readyBanner, startEnvironment } from '../../scripts/start-env.mjs';

/**
 * Issue 11 item 3: under `npm start`, only an unset `ALLOWED_ADDRESSES` gets the development
 * default (loopback); `ALLOWED_ADDRESSES=` (set, empty) means nothing private is allowed.
 */

test('an unset ALLOWED_ADDRESSES gets loopback in development', () => {
  expect(startEnvironment({}).ALLOWED_ADDRESSES).toBe(DEVELOPMENT_ALLOWED_ADDRESSES);
});

test('ALLOWED_ADDRESSES set but empty stays empty: no private address is allowed', () => {
  const env = startEnvironment({ ALLOWED_ADDRESSES: '' });
  expect(env.ALLOWED_ADDRESSES).toBe('');
  expect(env.NODE_ENV).toBe('development');
});

test('a given ALLOWED_ADDRESSES is kept, and production gets no development defaults', () => {
  expect(startEnvironment({ ALLOWED_ADDRESSES: '10.0.0.0/8' }).ALLOWED_ADDRESSES).toBe('10.0.0.0/8');
  const production = startEnvironment({ NODE_ENV: 'production' });
  expect(production.ALLOWED_ADDRESSES).toBeUndefined();
  expect(production.ADMIN_TOKEN).toBeUndefined();
});

test('the ready banner names the API and the dashboard, and in development how to create an org', () => {
  const lines = readyBanner(3000, startEnvironment({ ADMIN_TOKEN: "it's-a-token-0123456789" }));
  expect(lines[0]).toContain('http://127.0.0.1:3000');
  expect(lines.some((l) => l.includes('http://127.0.0.1:3000/dashboard/'))).toBe(true);
  expect(lines.find((l) => l.includes('/v1/orgs'))).toContain(`Bearer it'\\''s-a-token-0123456789'`);
  expect(readyBanner(3000, startEnvironment({ NODE_ENV: 'production' })).some((l) => l.includes('/v1/orgs'))).toBe(false);
});

test('npm start keeps one development SECRETS_KEY in a file: generated once (32 bytes, owner-only), then read back', async () => {
  const { mkdtempSync, statSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const path = await import('node:path');
  const dir = mkdtempSync(path.join(tmpdir(), 'postern-key-'));
  try {
    const file = path.join(dir, '.data', 'secrets-key');
    const first = developmentSecretsKey(file);
    expect(first.created).toBe(true);
    expect(Buffer.from(first.key, 'base64')).toHaveLength(32);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(developmentSecretsKey(file)).toEqual({ key: first.key, created: false });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

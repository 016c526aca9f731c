import { randomBytes } from 'node:crypto';
import { createSecretBox } from '@postern/shared';
import { checkSecretsKey, connectRedis, createKeySchema, type RedisClient } from '@postern/store';
import { TEST_ADMIN_TOKEN, TEST_REDIS_URL, TEST_SECRETS_ENV, deleteByPrefix, testSecretKeyring } from '../support/postern.js';
import { spawnApp, type SpawnedApp } from '../support/spawn-app.js';

/**
 * Secrets at rest (README): an app whose keys cannot open the secrets stored under its prefix stops
 * at start-up with one line naming the key id, never running to send unsigned requests.
 */

const prefix = `test:${randomBytes(6).toString('hex')}`;
const spawned: SpawnedApp[] = [];
let redis: RedisClient;

beforeAll(async () => {
  redis = connectRedis({ url: TEST_REDIS_URL }, 'worker');
  // What the first app to start with the tests' key leaves: the check value, sealed with it.
  expect(await checkSecretsKey(redis, createKeySchema(prefix), createSecretBox(testSecretKeyring()))).toBe('created');
  expect(await checkSecretsKey(redis, createKeySchema(prefix), createSecretBox(testSecretKeyring()))).toBe('opened');
});
afterAll(async () => {
  for (const app of spawned) await app.stop();
  await deleteByPrefix(redis, prefix);
  await redis.quit();
});

const otherKey = randomBytes(32).toString('base64');
const BASE = { ADMIN_TOKEN: TEST_ADMIN_TOKEN, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix, PORT: '0', HOST: '127.0.0.1', SENDER_PORT: '0', SENDER_HOST: '127.0.0.1', LOG_LEVEL: 'warn' };

const CASES: { name: string; app: 'ingest' | 'sender'; env: Record<string, string | undefined>; line: RegExp }[] = [
  { name: 'another key under the same id', app: 'ingest', env: { SECRETS_KEY: otherKey }, line: /^postern-ingest: SECRETS_KEY: cannot open stored secrets sealed with key id test1 / },
  { name: 'another key under the same id', app: 'sender', env: { SECRETS_KEY: otherKey }, line: /^postern-sender: SECRETS_KEY: cannot open stored secrets sealed with key id test1 / },
  { name: 'a new key id without the old key', app: 'sender', env: { SECRETS_KEY: otherKey, SECRETS_KEY_ID: 'k9' }, line: /^postern-sender: SECRETS_KEY_PREVIOUS: has no key id test1, which sealed stored secrets \(SECRETS_KEY_ID is k9\)$/ },
  { name: 'no key at all', app: 'ingest', env: { SECRETS_KEY: undefined, SECRETS_KEY_ID: undefined }, line: /^postern-ingest: SECRETS_KEY: is required: stored secrets are sealed with key id test1$/ },
];

test.each(CASES)('$app with $name stops at start-up with exit code 1 and one line naming the key id', async ({ app, env, line }) => {
  const child = spawnApp(app, { ...BASE, ...env });
  spawned.push(child);
  const code = await child.exited;
  await new Promise<void>((resolve) => (child.child.stderr!.readableEnded ? resolve() : child.child.stderr!.once('end', () => resolve())));
  expect(code).toBe(1);
  const lines = child.stderr.filter((l) => l.trim() !== '');
  expect(lines).toEqual([expect.stringMatching(line)]);
  // It never got as far as listening.
  expect(child.stdout.filter((l) => /listening/i.test(l))).toEqual([]);
}, 30_000);

test('with the right key, and with it moved to SECRETS_KEY_PREVIOUS under a new key, it starts', async () => {
  for (const env of [{}, { SECRETS_KEY: otherKey, SECRETS_KEY_ID: 'k2', SECRETS_KEY_PREVIOUS: `${TEST_SECRETS_ENV.SECRETS_KEY_ID}:${TEST_SECRETS_ENV.SECRETS_KEY}` }]) {
    const child = spawnApp('ingest', { ...BASE, LOG_LEVEL: 'info', ...env });
    spawned.push(child);
    expect(await child.port()).toBeGreaterThan(0);
    expect(await child.stop()).toBe(0);
  }
}, 40_000);

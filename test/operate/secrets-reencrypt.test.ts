import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { createSecretBox } from '@postern/shared';
import { createStore } from '@postern/store';
import { startPostern, TEST_REDIS_URL, TEST_SECRETS_ENV, type TestPostern } from '../support/postern.js';
import { REPO_ROOT } from '../support/spawn-app.js';

/**
 * `npm run secrets:reencrypt` (README, "Secrets at rest"), run as operators run it: after a key
 * rotation it moves every stored secret to the new key, seals plain legacy values, prints counts,
 * and a second run changes nothing.
 */

let postern: TestPostern;
beforeAll(async () => {
  postern = await startPostern({ sender: false });
});
afterAll(async () => {
  await postern.close();
});

const newKey = randomBytes(32).toString('base64');
const rotatedEnv = { SECRETS_KEY: newKey, SECRETS_KEY_ID: 'k2', SECRETS_KEY_PREVIOUS: `${TEST_SECRETS_ENV.SECRETS_KEY_ID}:${TEST_SECRETS_ENV.SECRETS_KEY}` };

async function reencrypt(env: Record<string, string>): Promise<{ code: number; stdout: string }> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: postern.prefix, ...env };
  delete childEnv.NODE_OPTIONS;
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ['--conditions=development', '--import', 'tsx', 'scripts/secrets-reencrypt.ts'], { cwd: REPO_ROOT, env: childEnv });
    return { code: 0, stdout };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout + e.stderr };
  }
}

test('it re-seals what the old key sealed and seals plain values; a second run changes nothing; every secret opens with the new key alone', async () => {
  const org = await postern.createOrg('reencrypt');
  expect((await postern.api('PATCH', '/v1/org', { key: org.apiKey, body: { preAttemptCheckUrl: 'https://check.example.com/' } })).status).toBe(200);
  const a = await postern.createEndpoint(org.apiKey, { url: 'https://a.example.com/hook' });
  const b = await postern.createEndpoint(org.apiKey, { url: 'https://b.example.com/hook', signatureScheme: 'ed25519' });
  const legacy = await postern.createEndpoint(org.apiKey, { url: 'https://c.example.com/hook' });
  await postern.redis.hset(postern.store.keys.endpoint(org.id, legacy.id), 'secrets', JSON.stringify([{ secret: legacy.secret, expiresAt: null }]));

  // Without the old key among the previous ones, nothing it sealed can move (said, exit 1); the
  // plain value is sealed all the same.
  const blind = await reencrypt({ SECRETS_KEY: newKey, SECRETS_KEY_ID: 'k2' });
  expect(blind.code).toBe(1);
  expect(blind.stdout).toMatch(/4 secrets in \d+ keys — 0 re-sealed from an older key, 1 sealed from plain text, 0 already current, 3 unreadable/);

  const first = await reencrypt(rotatedEnv);
  expect(first.code).toBe(0);
  expect(first.stdout).toMatch(/key id k2: 4 secrets in \d+ keys — 3 re-sealed from an older key, 0 sealed from plain text, 1 already current, 0 unreadable, 0 changing/);
  const second = await reencrypt(rotatedEnv);
  expect(second.stdout).toMatch(/4 secrets in \d+ keys — 0 re-sealed from an older key, 0 sealed from plain text, 4 already current, 0 unreadable/);

  const newOnly = createStore({ redis: postern.redis, prefix: postern.prefix, secretBox: createSecretBox({ current: { id: 'k2', key: Buffer.from(newKey, 'base64') }, previous: [] }) });
  for (const ep of [a, b, legacy]) expect((await newOnly.endpoints.get(org.id, ep.id))!.secrets).toEqual([{ secret: ep.secret, expiresAt: null }]);
  expect((await newOnly.orgs.get(org.id))!.preAttemptCheckSecret).toMatch(/^whsec_/);
  expect(await postern.redis.hget(postern.store.keys.org(org.id), 'preAttemptCheckSecret')).toMatch(/^sealed:v1:k2:/);
}, 60_000);

import { randomBytes } from 'node:crypto';
import { createRedisConnection } from '@postern/store';
import { deleteByPrefix, TEST_ADMIN_TOKEN, TEST_REDIS_URL } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { spawnApp, type SpawnedApp } from '../support/spawn-app.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Logs a person can read: LOG_FORMAT=pretty (what `npm start` gets through NODE_ENV=development)
 * writes one readable line per event accepted and per attempt finished, request lines only at
 * debug; NODE_ENV=production keeps one JSON object a line with its request lines, as before.
 */

const prefix = `test:${randomBytes(6).toString('hex')}`;
const env = { REDIS_URL: TEST_REDIS_URL, REDIS_PREFIX: prefix, ADMIN_TOKEN: TEST_ADMIN_TOKEN, ALLOWED_ADDRESSES: '127.0.0.1', LOG_LEVEL: 'info', NO_COLOR: '1' };
const apps: SpawnedApp[] = [];
let receiver: TestReceiver;

beforeAll(async () => {
  receiver = await startReceiver(() => 200);
});

afterAll(async () => {
  for (const app of apps) await app.stop();
  await receiver.close();
  const redis = createRedisConnection(TEST_REDIS_URL, 'worker');
  await deleteByPrefix(redis, prefix);
  await redis.quit();
});

const isJson = (line: string) => {
  try {
    return typeof JSON.parse(line) === 'object';
  } catch {
    return false;
  }
};

/** Creates an org, an endpoint to the receiver and one event through ingest at `base`; returns the event id. */
async function sendOneEvent(base: string): Promise<string> {
  const post = async (path: string, key: string, body: unknown) => (await fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json() as Promise<any>;
  const org = await post('/v1/orgs', TEST_ADMIN_TOKEN, { name: 'logs' });
  await post('/v1/endpoints', org.apiKey, { url: receiver.url, policy: { preset: 'standard', maxAttempts: 1 } });
  return (await post('/v1/events', org.apiKey, { type: 'invoice.paid', data: { n: 1 } })).id;
}

test('pretty: one line per event accepted and per attempt finished, no request lines, no JSON', async () => {
  const ingest = spawnApp('ingest', { ...env, PORT: '0', HOST: '127.0.0.1', LOG_FORMAT: 'pretty', NODE_ENV: undefined });
  const sender = spawnApp('sender', { ...env, SENDER_PORT: '0', SENDER_HOST: '127.0.0.1', LOG_FORMAT: 'pretty', NODE_ENV: undefined });
  apps.push(ingest, sender);
  const port = await waitUntil('ingest to say where it listens', () => ingest.stdout.map((l) => /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(l)?.[1]).find(Boolean), 30_000);
  const eventId = await sendOneEvent(`http://127.0.0.1:${port}`);

  const finished = await waitUntil('the attempt line', () => sender.stdout.find((l) => l.includes('attempt finished')), 30_000);
  expect(finished).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: postern-sender attempt finished /);
  expect(finished).toContain('"status":"succeeded"');
  const accepted = ingest.stdout.filter((l) => l.includes('event accepted'));
  expect(accepted).toHaveLength(1);
  expect(accepted[0]).toMatch(/INFO: postern-ingest event accepted .*"type":"invoice.paid"/);
  expect(accepted[0]).toContain(eventId);
  expect(ingest.stdout.some((l) => l.includes('request completed'))).toBe(false);
  expect([...ingest.stdout, ...sender.stdout].filter((l) => l.trim() !== '' && isJson(l))).toEqual([]);
  for (const app of [ingest, sender]) await app.stop();
}, 90_000);

test('production: JSON lines, the request line at info, no event line', async () => {
  const ingest = spawnApp('ingest', { ...env, PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'production', PUBLIC_URL: 'https://postern.example.com', LOG_FORMAT: undefined });
  apps.push(ingest);
  const port = await ingest.port(30_000);
  await sendOneEvent(`http://127.0.0.1:${port}`);
  await waitUntil('the request line of POST /v1/events', () => ingest.stdout.some((l) => l.includes('"url":"/v1/events"')), 15_000);
  const lines = ingest.stdout.filter((l) => l.trim() !== '');
  expect(lines.every(isJson)).toBe(true);
  const request = JSON.parse(lines.find((l) => l.includes('"url":"/v1/events"'))!);
  expect(request).toMatchObject({ level: 30, name: 'postern-ingest', msg: 'request completed', req: { method: 'POST', url: '/v1/events' }, res: { statusCode: 202 } });
  expect(lines.some((l) => l.includes('event accepted'))).toBe(false);
  await ingest.stop();
}, 90_000);

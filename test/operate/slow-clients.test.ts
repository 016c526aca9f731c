import { randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { createRedisConnection } from '@postern/store';
import { deleteByPrefix, TEST_ADMIN_TOKEN, TEST_REDIS_URL } from '../support/postern.js';
import { spawnApp, type SpawnedApp } from '../support/spawn-app.js';

/**
 * Issue 11 item 1: every HTTP server Postern runs (ingest's API, the sender's health port) has
 * header, request and keep-alive timeouts from the environment. A client that announces
 * `Content-Length: 100` and sends 10 bytes, or never finishes its headers, is answered 408 and
 * disconnected within the limit (plus Node's checking interval), not after Node's 300 s default.
 */

const HEADERS_TIMEOUT_MS = 600;
const REQUEST_TIMEOUT_MS = 1000;
/** Node looks for late requests every tenth of the shorter timeout (httpServerOptions), plus slack for a busy machine. */
const SLACK_MS = 1500;

const prefix = `test:${randomBytes(6).toString('hex')}`;
const apps: SpawnedApp[] = [];
let ingestPort: number;
let senderPort: number;

beforeAll(async () => {
  const env = {
    REDIS_URL: TEST_REDIS_URL,
    REDIS_PREFIX: prefix,
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    LOG_LEVEL: 'warn',
    HTTP_HEADERS_TIMEOUT_MS: String(HEADERS_TIMEOUT_MS),
    HTTP_REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    HTTP_KEEP_ALIVE_TIMEOUT_MS: '300',
  };
  const ingest = spawnApp('ingest', { ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' });
  const sender = spawnApp('sender', { ...env, SENDER_PORT: '0', SENDER_HOST: '127.0.0.1', LOG_LEVEL: 'info' });
  apps.push(ingest, sender);
  [ingestPort, senderPort] = await Promise.all([ingest.port(), sender.port()]);
}, 40_000);

afterAll(async () => {
  for (const app of apps) await app.stop();
  const redis = createRedisConnection(TEST_REDIS_URL, 'worker');
  await deleteByPrefix(redis, prefix);
  await redis.quit();
});

/**
 * Opens a connection, writes `request` and waits (at most `deadlineMs`) for the server to close it.
 * Returns what the server sent and how long the connection lasted.
 */
function stall(port: number, request: string, deadlineMs: number): Promise<{ answer: string; closedAfterMs: number | null }> {
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ answer, closedAfterMs: null });
    }, deadlineMs);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ answer, closedAfterMs: Date.now() - started });
    });
  });
}

const partialBody = (path: string) =>
  `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${TEST_ADMIN_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"name":"a`;
const partialHeaders = (path: string) => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1\r\n`;

test('ingest: a body that stops after 10 of 100 bytes gets 408 and a closed connection within HTTP_REQUEST_TIMEOUT_MS', async () => {
  const { answer, closedAfterMs } = await stall(ingestPort, partialBody('/v1/orgs'), REQUEST_TIMEOUT_MS + SLACK_MS * 2);
  expect(closedAfterMs).not.toBeNull();
  expect(closedAfterMs!).toBeLessThanOrEqual(REQUEST_TIMEOUT_MS + SLACK_MS);
  expect(answer === '' || answer.startsWith('HTTP/1.1 408')).toBe(true);
});

test('ingest: headers that never end get 408 and a closed connection within HTTP_HEADERS_TIMEOUT_MS', async () => {
  const { answer, closedAfterMs } = await stall(ingestPort, partialHeaders('/healthz'), HEADERS_TIMEOUT_MS + SLACK_MS * 2);
  expect(closedAfterMs).not.toBeNull();
  expect(closedAfterMs!).toBeLessThanOrEqual(HEADERS_TIMEOUT_MS + SLACK_MS);
  expect(answer === '' || answer.startsWith('HTTP/1.1 408')).toBe(true);
});

test('sender health port: headers that never end get 408 and a closed connection within HTTP_HEADERS_TIMEOUT_MS', async () => {
  const { answer, closedAfterMs } = await stall(senderPort, partialHeaders('/readyz'), HEADERS_TIMEOUT_MS + SLACK_MS * 2);
  expect(closedAfterMs).not.toBeNull();
  expect(closedAfterMs!).toBeLessThanOrEqual(HEADERS_TIMEOUT_MS + SLACK_MS);
  expect(answer === '' || answer.startsWith('HTTP/1.1 408')).toBe(true);
});

test('an idle keep-alive connection is closed after HTTP_KEEP_ALIVE_TIMEOUT_MS', async () => {
  const { answer, closedAfterMs } = await stall(ingestPort, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', 300 + SLACK_MS * 2);
  expect(answer.startsWith('HTTP/1.1 200')).toBe(true);
  expect(closedAfterMs).not.toBeNull();
  expect(closedAfterMs!).toBeLessThanOrEqual(300 + SLACK_MS);
});

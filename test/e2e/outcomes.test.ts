import { createServer, type AddressInfo } from 'node:net';
import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * What one attempt records for each way a receiver can answer (or not): docs/architecture.md's error codes,
 * seen through the API a user reads (`GET /v1/deliveries/:id`).
 */

let postern: TestPostern;
const receivers: TestReceiver[] = [];
let orgCount = 0;

beforeAll(async () => {
  postern = await startPostern();
});
afterAll(async () => {
  await postern.close();
  await Promise.all(receivers.map((r) => r.close()));
});

async function receiver(...args: Parameters<typeof startReceiver>): Promise<TestReceiver> {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
}

interface Attempt {
  number: number;
  startedAt: string | number;
  durationMs: number;
  responseStatus: number | null;
  error: string | null;
}

/** A fresh org (so fan-out reaches only these endpoints), its endpoints, and one event; returns delivery id by endpoint URL. */
async function sendEvent(endpoints: { url: string; policy: Record<string, unknown> }[]): Promise<{ apiKey: string; deliveryIdByUrl: Map<string, string> }> {
  const { apiKey } = await postern.createOrg(`outcomes-${++orgCount}`);
  const urlById = new Map<string, string>();
  for (const e of endpoints) {
    const created = await postern.createEndpoint(apiKey, e);
    urlById.set(created.id as string, e.url);
  }
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'invoice.paid', data: { amount: 1 } } });
  expect(posted.status).toBe(202);
  const deliveryIdByUrl = new Map<string, string>();
  for (const d of posted.body.deliveries as { id: string; endpointId: string }[]) deliveryIdByUrl.set(urlById.get(d.endpointId)!, d.id);
  expect(deliveryIdByUrl.size).toBe(endpoints.length);
  return { apiKey, deliveryIdByUrl };
}

async function sendOne(url: string, policy: Record<string, unknown>): Promise<{ apiKey: string; deliveryId: string }> {
  const { apiKey, deliveryIdByUrl } = await sendEvent([{ url, policy }]);
  return { apiKey, deliveryId: deliveryIdByUrl.get(url)! };
}

async function finished(apiKey: string, deliveryId: string, timeoutMs = 10_000): Promise<any> {
  return waitUntil(
    `delivery ${deliveryId} finished`,
    async () => {
      const r = await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey });
      return ['succeeded', 'failed', 'cancelled'].includes(r.body?.status) ? r.body : undefined;
    },
    timeoutMs,
  );
}

test('a 302 is recorded as redirect_not_followed and its Location is never requested', async () => {
  const elsewhere = await receiver(() => 200);
  const redirecting = await receiver((_req, _n, res) => {
    res.writeHead(302, { location: elsewhere.url });
    res.end();
    return 'handled';
  });
  const { apiKey, deliveryId } = await sendOne(redirecting.url, fastPolicy(2, 20));

  const delivery = await finished(apiKey, deliveryId);

  expect(delivery.status).toBe('failed');
  expect(delivery.lastError).toBe('redirect_not_followed');
  expect(delivery.attempts.map((a: Attempt) => [a.error, a.responseStatus])).toEqual([
    ['redirect_not_followed', 302],
    ['redirect_not_followed', 302],
  ]);
  expect(redirecting.requests).toHaveLength(2);
  expect(elsewhere.requests).toHaveLength(0);
});

test('a receiver that never answers within a 200 ms whole-response timeout gives timeout', async () => {
  const silent = await receiver(() => 'handled');
  const { apiKey, deliveryId } = await sendOne(silent.url, fastPolicy(1, 20, { timeout: { ms: 200, measures: 'whole-response' } }));

  const delivery = await finished(apiKey, deliveryId);

  expect(delivery.status).toBe('failed');
  expect(delivery.attempts).toHaveLength(1);
  expect(delivery.attempts[0].error).toBe('timeout');
  expect(delivery.attempts[0].responseStatus).toBeNull();
  expect(delivery.attempts[0].durationMs).toBeGreaterThanOrEqual(180);
  expect(delivery.attempts[0].durationMs).toBeLessThan(3000);
  expect(silent.requests).toHaveLength(1);
});

test('a receiver that never sends headers within a 300 ms response-headers timeout gives timeout', async () => {
  const silent = await receiver(() => 'handled');
  const { apiKey, deliveryId } = await sendOne(silent.url, fastPolicy(1, 20, { timeout: { ms: 300, measures: 'response-headers' } }));

  const delivery = await finished(apiKey, deliveryId);

  expect(delivery.attempts.map((a: Attempt) => a.error)).toEqual(['timeout']);
  expect(delivery.attempts[0].durationMs).toBeGreaterThanOrEqual(280);
  expect(delivery.attempts[0].durationMs).toBeLessThan(3000);
});

test('a closed port gives connection_failed:ECONNREFUSED', async () => {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));

  const { apiKey, deliveryId } = await sendOne(`http://127.0.0.1:${port}/hook`, fastPolicy(1));
  const delivery = await finished(apiKey, deliveryId);

  expect(delivery.status).toBe('failed');
  expect(delivery.lastError).toBe('connection_failed:ECONNREFUSED');
  expect(delivery.attempts.map((a: Attempt) => [a.error, a.responseStatus])).toEqual([['connection_failed:ECONNREFUSED', null]]);
});

test.each([
  ['headers larger than Node reads (16 KB)', `HTTP/1.1 200 OK\r\nX-Padding: ${'x'.repeat(20_000)}\r\nContent-Length: 0\r\n\r\n`, 'connection_failed:HPE_HEADER_OVERFLOW'],
  ['an answer that is not HTTP', 'SMTP ready\r\n\r\n', 'connection_failed:HPE_INVALID_CONSTANT'],
])('a receiver sending %s gives the parser\'s code, not delivery_failed', async (_what, answer, code) => {
  const raw = createServer((socket) => {
    socket.once('data', () => socket.end(answer));
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
  try {
    const { apiKey, deliveryId } = await sendOne(`http://127.0.0.1:${(raw.address() as AddressInfo).port}/hook`, fastPolicy(1));
    const delivery = await finished(apiKey, deliveryId);
    expect(delivery.status).toBe('failed');
    expect(delivery.attempts.map((a: Attempt) => [a.error, a.responseStatus])).toEqual([[code, null]]);
  } finally {
    await new Promise<void>((resolve) => raw.close(() => resolve()));
  }
});

test('a 101 Switching Protocols is http_101 at once, not an attempt that never ends', async () => {
  const raw = createServer((socket) => {
    socket.once('data', () => socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n'));
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => raw.listen(0, '127.0.0.1', resolve));
  try {
    // A 60 s timeout: ending well inside it shows the 101 ended the attempt, not the clock.
    const { apiKey, deliveryId } = await sendOne(`http://127.0.0.1:${(raw.address() as AddressInfo).port}/hook`, fastPolicy(1, 20, { timeout: { ms: 60_000, measures: 'whole-response' } }));
    const delivery = await finished(apiKey, deliveryId, 30_000);
    expect(delivery.status).toBe('failed');
    expect(delivery.attempts.map((a: Attempt) => [a.error, a.responseStatus])).toEqual([['http_101', 101]]);
  } finally {
    raw.close();
  }
});

test('headers then a stalled body: timeout when the whole response counts, success when only headers do', async () => {
  const stalling = await receiver((_req, _n, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.flushHeaders();
    return 'handled';
  });
  const wholeUrl = `http://127.0.0.1:${stalling.port}/whole`;
  const headersUrl = `http://127.0.0.1:${stalling.port}/headers`;
  const whole = await sendOne(wholeUrl, fastPolicy(1, 20, { timeout: { ms: 300, measures: 'whole-response' } }));
  const headers = await sendOne(headersUrl, fastPolicy(1, 20, { timeout: { ms: 300, measures: 'response-headers' } }));

  const [wholeDelivery, headersDelivery] = await Promise.all([finished(whole.apiKey, whole.deliveryId), finished(headers.apiKey, headers.deliveryId)]);

  expect(wholeDelivery.status).toBe('failed');
  expect(wholeDelivery.attempts.map((a: Attempt) => a.error)).toEqual(['timeout']);
  expect(wholeDelivery.attempts[0].durationMs).toBeGreaterThanOrEqual(280);
  expect(headersDelivery.status).toBe('succeeded');
  expect(headersDelivery.attempts.map((a: Attempt) => [a.error, a.responseStatus])).toEqual([[null, 200]]);
  expect(headersDelivery.attempts[0].durationMs).toBeLessThan(280);
  expect(stalling.requests.map((r) => r.path).sort()).toEqual(['/headers', '/whole']);
});

describe('Retry-After on a 429', () => {
  /** Receiver answering 429 with `Retry-After: 1` once, then 200; returns the gap between the two arrivals. */
  async function gapMs(policy: Record<string, unknown>): Promise<number> {
    const limited = await receiver((_req, n, res) => {
      if (n > 1) return 200;
      res.writeHead(429, { 'retry-after': '1' });
      res.end();
      return 'handled';
    });
    const { apiKey, deliveryId } = await sendOne(limited.url, policy);
    const delivery = await finished(apiKey, deliveryId);
    expect(delivery.status).toBe('succeeded');
    expect(delivery.attempts.map((a: Attempt) => [a.error, a.responseStatus])).toEqual([
      ['http_429', 429],
      [null, 200],
    ]);
    expect(limited.requests).toHaveLength(2);
    return limited.requests[1]!.at - limited.requests[0]!.at;
  }

  test('honour: a 1 s Retry-After is clamped to 2 × the 100 ms wait', async () => {
    const gap = await gapMs(fastPolicy(2, 100, { retryAfter: 'honour' }));
    // Clamped to [100, 200]: above the plain wait, far below the 1000 ms asked for.
    expect(gap).toBeGreaterThanOrEqual(195);
    expect(gap).toBeLessThan(700);
  });

  test('ignore: the wait is the schedule\'s 300 ms, not the clamped 600 ms', async () => {
    const gap = await gapMs(fastPolicy(2, 300, { retryAfter: 'ignore' }));
    expect(gap).toBeGreaterThanOrEqual(295);
    expect(gap).toBeLessThan(560);
  });
});

describe('each status maps to its outcome (one event fanned out to one endpoint per status, maxAttempts 1)', () => {
  const table: [number, string | null][] = [
    ...[200, 201, 202, 204, 299].map((s): [number, null] => [s, null]),
    ...[301, 303, 307, 308].map((s): [number, string] => [s, 'redirect_not_followed']),
    ...[400, 404, 410, 429, 500, 503].map((s): [number, string] => [s, `http_${s}`]),
  ];
  let answering: TestReceiver;
  const deliveryByStatus = new Map<number, any>();

  beforeAll(async () => {
    answering = await receiver((req, _n, res) => {
      const status = Number(/^\/status\/(\d+)$/.exec(req.path)?.[1] ?? 200);
      if (status >= 300 && status < 400) res.setHeader('location', `http://127.0.0.1:${answering.port}/elsewhere`);
      if (status === 429 || status === 503) res.setHeader('retry-after', '0');
      return status;
    });
    const urlOf = (status: number) => `http://127.0.0.1:${answering.port}/status/${status}`;
    const { apiKey, deliveryIdByUrl } = await sendEvent(table.map(([status]) => ({ url: urlOf(status), policy: fastPolicy(1) })));
    await Promise.all(
      table.map(async ([status]) => deliveryByStatus.set(status, await finished(apiKey, deliveryIdByUrl.get(urlOf(status))!))),
    );
  });

  test.each(table)('%i → %s', (status, error) => {
    const d = deliveryByStatus.get(status);
    expect(d.status).toBe(error === null ? 'succeeded' : 'failed');
    expect(d.lastError ?? null).toBe(error);
    expect(d.lastResponseStatus).toBe(status);
    expect(d.attempts.map((a: Attempt) => [a.error, a.responseStatus])).toEqual([[error, status]]);
  });

  test('each endpoint got exactly one request and no redirect was followed', () => {
    expect(answering.requests.map((r) => r.path).sort()).toEqual(table.map(([s]) => `/status/${s}`).sort());
  });
});

test('webhook-timestamp is fresh on every attempt', async () => {
  const flaky = await receiver((_req, n) => (n === 1 ? 500 : 200));
  const { apiKey, deliveryId } = await sendOne(flaky.url, fastPolicy(2, 1100));

  const delivery = await finished(apiKey, deliveryId);

  expect(delivery.status).toBe('succeeded');
  expect(flaky.requests).toHaveLength(2);
  const stamps = flaky.requests.map((r) => Number(r.headers['webhook-timestamp']));
  expect(stamps.every(Number.isInteger)).toBe(true);
  expect(stamps[1]).toBeGreaterThan(stamps[0]!);
  for (const [i, r] of flaky.requests.entries()) {
    expect(Math.abs(stamps[i]! * 1000 - r.at)).toBeLessThan(2000);
  }
});

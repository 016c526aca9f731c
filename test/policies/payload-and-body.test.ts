import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Size limits on both sides of a request: an envelope over `maxPayloadBytes` is never sent
 * (tourical), and at most `maxResponseBytesRead` of an answer is read (vestiarion: ≤ 1 KB), so a
 * receiver streaming a huge body neither slows the attempt down nor gets read to the end.
 */

let postern: TestPostern;
let apiKey: string;
const receivers: TestReceiver[] = [];

beforeAll(async () => {
  postern = await startPostern();
  apiKey = (await postern.createOrg()).apiKey;
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

async function finished(deliveryId: string): Promise<any> {
  return waitUntil(`delivery ${deliveryId} finished`, async () => {
    const r = await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey });
    return ['succeeded', 'failed', 'cancelled'].includes(r.body.status) ? r.body : undefined;
  });
}

test('an envelope over maxPayloadBytes is never sent and fails payload_too_large; a standard endpoint gets it', async () => {
  const limited = await receiver();
  const unlimited = await receiver();
  const small = await postern.createEndpoint(apiKey, {
    url: limited.url,
    eventTypes: ['bulk.export'],
    policy: { preset: 'tourical', maxAttempts: 1, maxPayloadBytes: 2048 },
  });
  const standard = await postern.createEndpoint(apiKey, { url: unlimited.url, eventTypes: ['bulk.export'] });

  const data = { rows: 'x'.repeat(4096) };
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'bulk.export', data } });
  expect(posted.status).toBe(202);
  const idOf = (endpointId: string) => (posted.body.deliveries as { id: string; endpointId: string }[]).find((d) => d.endpointId === endpointId)!.id;

  const [refused, sent] = await Promise.all([finished(idOf(small.id)), finished(idOf(standard.id))]);
  expect(sent.status).toBe('succeeded');
  expect(unlimited.requests).toHaveLength(1);
  expect(JSON.parse(unlimited.requests[0]!.body).data).toEqual(data);
  expect(Buffer.byteLength(unlimited.requests[0]!.body)).toBeGreaterThan(2048);

  expect(refused.status).toBe('failed');
  expect(refused.lastError).toBe('payload_too_large');
  expect(refused.attempts).toEqual([]);
  expect(limited.requests).toHaveLength(0);
  // Never sent, so nothing is held against the endpoint.
  const ep = await postern.api('GET', `/v1/endpoints/${small.id}`, { key: apiKey });
  expect(ep.body.consecutiveFailures).toBe(0);
});

test('an envelope of exactly maxPayloadBytes is still sent', async () => {
  const r = await receiver();
  const eventType = 'exact.size';
  // Measure the envelope of a first event, then allow exactly that many bytes for an identical second one.
  const probe = await receiver();
  await postern.createEndpoint(apiKey, { url: probe.url, eventTypes: [eventType] });
  const data = { pad: 'y'.repeat(1000) };
  await postern.api('POST', '/v1/events', { key: apiKey, body: { type: eventType, data } });
  const [first] = await probe.waitForRequests(1);
  const size = Buffer.byteLength(first!.body);

  const exact = await postern.createEndpoint(apiKey, { url: r.url, eventTypes: [eventType], policy: { ...fastPolicy(1), maxPayloadBytes: size } });
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: eventType, data } });
  const deliveryId = (posted.body.deliveries as { id: string; endpointId: string }[]).find((d) => d.endpointId === exact.id)!.id;
  const delivery = await finished(deliveryId);
  expect(delivery.status).toBe('succeeded');
  expect(Buffer.byteLength(r.requests[0]!.body)).toBe(size);
});

test('a 5 MB answer streamed slowly is cut off after maxResponseBytesRead: the attempt succeeds fast', async () => {
  const CHUNK = 64 * 1024;
  const TOTAL = 5 * 1024 * 1024;
  const stream = { written: 0, closedAt: null as number | null, writtenAtClose: null as number | null, startedAt: 0 };
  const slow = await receiver((_req, _n, res) => {
    stream.startedAt = Date.now();
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(TOTAL) });
    let stopped = false;
    res.on('close', () => {
      stopped = true;
      stream.closedAt = Date.now();
      stream.writtenAtClose = stream.written;
    });
    // 80 chunks, one every 30 ms: about 2.4 s to send it all, longer than the 2 s timeout.
    const writeNext = () => {
      if (stopped) return;
      if (stream.written >= TOTAL) {
        res.end();
        return;
      }
      res.write(Buffer.alloc(CHUNK, 0x61));
      stream.written += CHUNK;
      setTimeout(writeNext, 30);
    };
    writeNext();
    return 'handled';
  });
  const endpoint = await postern.createEndpoint(apiKey, {
    url: slow.url,
    eventTypes: ['big.answer'],
    policy: { ...fastPolicy(1), maxResponseBytesRead: 1024, timeout: { ms: 2000, measures: 'whole-response' } },
  });
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'big.answer', data: {} } });
  const deliveryId = (posted.body.deliveries as { id: string; endpointId: string }[]).find((d) => d.endpointId === endpoint.id)!.id;

  const delivery = await finished(deliveryId);
  expect(delivery.status).toBe('succeeded');
  expect(delivery.lastResponseStatus).toBe(200);
  // Reading it all would take over 2 s and end in a timeout.
  expect(delivery.lastDurationMs).toBeLessThan(1000);

  // Postern hung up long before the body was done.
  await waitUntil('the receiver saw the connection close', () => stream.closedAt !== null);
  expect(stream.writtenAtClose).toBeLessThan(TOTAL);
  expect(stream.writtenAtClose).toBeLessThanOrEqual(4 * CHUNK);
  expect((stream.closedAt as number) - stream.startedAt).toBeLessThan(1000);
});

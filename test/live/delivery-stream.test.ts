import { PosternApiError, type LiveStreamMessage } from '@postern/client';
import { fastPolicy, startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * GET /v1/deliveries/stream: live delivery changes as Server-Sent Events, written by the finish
 * script into the org's capped feed, read by one reader per org and fanned out; filters,
 * Last-Event-ID resume, heartbeats, the per-key limit and revocation.
 */

/** A raw SSE reader: collects the text of the answer until `until(text)` holds or the deadline passes. */
async function readSse(url: string, headers: Record<string, string>, until: (text: string) => boolean, timeoutMs = 10_000): Promise<{ status: number; text: string }> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  let text = '';
  try {
    const res = await fetch(url, { headers, signal: controller.signal });
    if (!res.ok || !res.body) return { status: res.status, text: await res.text() };
    const decoder = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      text += decoder.decode(chunk, { stream: true });
      if (until(text)) return { status: res.status, text };
    }
    return { status: res.status, text };
  } catch (err) {
    throw new Error(`readSse: ${String(err)}; got so far: ${text}`);
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}

/** Collects messages from a client stream in the background. */
function collect(iterable: AsyncIterable<LiveStreamMessage>) {
  const messages: LiveStreamMessage[] = [];
  let error: unknown = null;
  const done = (async () => {
    try {
      for await (const m of iterable) messages.push(m);
    } catch (err) {
      error = err;
    }
  })();
  return { messages, done, get error() { return error; } };
}

describe('live deliveries', () => {
  let postern: TestPostern;
  let receiver: TestReceiver;
  let apiKey: string;
  let flaky: string;
  let other: string;

  beforeAll(async () => {
    postern = await startPostern({ liveStream: { heartbeatMs: 200, credentialCheckMs: 200, maxPerKey: 3 } });
    // The first request of each event fails with 500, the second succeeds.
    const seen = new Map<string, number>();
    receiver = await startReceiver((req) => {
      const id = String(req.headers['webhook-id']);
      const n = (seen.get(id) ?? 0) + 1;
      seen.set(id, n);
      return n === 1 ? 500 : 200;
    });
    apiKey = (await postern.createOrg()).apiKey;
    flaky = (await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: ['invoice.paid'], policy: fastPolicy(2, 20) })).id;
    other = (await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: ['order.created'], policy: fastPolicy(1) })).id;
  });

  // A failed expectation must not leave its streams holding the key's slots.
  const controllers: AbortController[] = [];
  const newController = () => {
    const c = new AbortController();
    controllers.push(c);
    return c;
  };

  afterAll(async () => {
    await postern.close();
    await receiver.close();
  });

  afterEach(() => {
    for (const c of controllers.splice(0)) c.abort();
  });

  test('an attempt that finishes shows at once, filtered, with its outcome; one reader serves every stream of the org', async () => {
    const controller = newController();
    const client = postern.client(apiKey);
    let connected = 0;
    const mine = collect(client.deliveries.stream({ endpointId: flaky }, { signal: controller.signal, onConnect: () => connected++ }));
    const succeeded = collect(client.deliveries.stream({ status: 'succeeded', eventType: 'invoice.*' }, { signal: controller.signal, onConnect: () => connected++ }));
    await waitUntil('both streams to connect', () => connected === 2);
    expect(postern.liveHub.readerCount).toBe(1);

    const accepted = await client.events.create({ type: 'invoice.paid', data: { n: 1 } });
    await client.events.create({ type: 'order.created', data: { n: 2 } });
    const deliveryId = accepted.deliveries[0]!.id;
    await waitUntil('the retry and the success on the endpoint stream', () => mine.messages.length >= 2);
    const [first, second] = mine.messages.map((m) => (m.type === 'delivery' ? m.delivery : null));
    expect(first).toMatchObject({ deliveryId, endpointId: flaky, eventId: accepted.id, eventType: 'invoice.paid', status: 'pending', attempt: 1, responseStatus: 500, error: 'http_500' });
    expect(typeof first!.nextAttemptAt).toBe('string');
    expect(second).toMatchObject({ deliveryId, status: 'succeeded', attempt: 2, responseStatus: 200, error: null, nextAttemptAt: null });
    expect(second!.durationMs).toEqual(expect.any(Number));
    await waitUntil('the success on the status-filtered stream', () => succeeded.messages.length >= 1);
    expect(succeeded.messages.every((m) => m.type === 'delivery' && m.delivery.status === 'succeeded' && m.delivery.eventType === 'invoice.paid')).toBe(true);
    // The other endpoint's delivery finished too, yet reached neither stream.
    // (Its one attempt got the receiver's first-request 500: it failed.)
    await waitUntil('the other endpoint to have its attempt', async () => (await postern.api('GET', `/v1/endpoints/${other}/deliveries`, { key: apiKey })).body.data[0]?.status === 'failed');
    expect(mine.messages.some((m) => m.type === 'delivery' && m.delivery.endpointId === other)).toBe(false);

    controller.abort();
    await Promise.all([mine.done, succeeded.done]);
    await waitUntil('the reader to stop with its last stream', () => postern.liveHub.readerCount === 0);
  });

  test('Last-Event-ID replays what came after it; an id older than the window kept says reset first', async () => {
    const stream = `${postern.baseUrl}/v1/deliveries/stream?endpointId=${flaky}`;
    const auth = { authorization: `Bearer ${apiKey}` };
    const all = await readSse(`${stream}`, { ...auth, 'last-event-id': '0-1' }, (t) => (t.match(/event: delivery/g) ?? []).length >= 2);
    expect(all.status).toBe(200);
    const ids = [...all.text.matchAll(/^id: (\S+)$/gm)].map((m) => m[1]!);
    expect(ids.length).toBeGreaterThanOrEqual(2);
    // 0-1 is before the oldest entry kept: the client is told it missed some.
    expect(all.text.indexOf('event: reset')).toBeGreaterThanOrEqual(0);
    expect(all.text.indexOf('event: reset')).toBeLessThan(all.text.indexOf('event: delivery'));

    const resumed = await readSse(stream, { ...auth, 'last-event-id': ids[0]! }, (t) => t.includes('event: delivery'));
    expect(resumed.text).not.toContain('event: reset');
    expect([...resumed.text.matchAll(/^id: (\S+)$/gm)].map((m) => m[1])[0]).toBe(ids[1]);
    expect(resumed.text).toContain('"status":"succeeded"');
  });

  test('heartbeats keep the stream alive while nothing happens', async () => {
    const r = await readSse(`${postern.baseUrl}/v1/deliveries/stream`, { authorization: `Bearer ${apiKey}` }, (t) => t.includes(': heartbeat'));
    expect(r.status).toBe(200);
    expect(r.text).toContain(': heartbeat');
  });

  test('bad input is refused before the stream starts', async () => {
    const get = (query: string, headers: Record<string, string> = {}) => fetch(`${postern.baseUrl}/v1/deliveries/stream${query}`, { headers: { authorization: `Bearer ${apiKey}`, ...headers } });
    const badId = await get('', { 'last-event-id': 'yesterday' });
    expect(badId.status).toBe(400);
    expect(((await badId.json()) as any).error.code).toBe('invalid_request');
    // An id from the future was never sent: resuming after it would silently skip everything.
    const future = await get('', { 'last-event-id': '99999999999999-0' });
    expect(future.status).toBe(400);
    expect(((await future.json()) as any).error.message).toMatch(/^Last-Event-ID: later than anything/);
    const badStatus = await get('?status=done');
    expect(badStatus.status).toBe(400);
    expect(((await badStatus.json()) as any).error.message).toMatch(/status/);
    const unknown = await get('?endpointId=ep_00000000000000000000000000');
    expect(unknown.status).toBe(404);
    const noKey = await fetch(`${postern.baseUrl}/v1/deliveries/stream`);
    expect(noKey.status).toBe(401);
  });

  test('a filter no change can ever match is 400 naming the parameter and what it takes, instead of a silent stream', async () => {
    const get = (query: string) => fetch(`${postern.baseUrl}/v1/deliveries/stream${query}`, { headers: { authorization: `Bearer ${apiKey}` } });
    const refused = async (query: string) => {
      const r = await get(query);
      const body = (await r.json()) as { error: { code: string; message: string } };
      return { status: r.status, code: body.error.code, message: body.error.message };
    };
    // The feed records a delivery's status once an attempt ended (or it ended without one): never in_flight.
    expect(await refused('?status=in_flight')).toEqual({ status: 400, code: 'invalid_request', message: expect.stringMatching(/^status: status must be one of pending, succeeded, failed, cancelled: .*never in_flight/) });
    for (const pattern of ['invoice*', '*.paid', 'invoice.*.paid', 'inv?ice.paid', '**', '.*', '']) {
      expect({ pattern, ...(await refused(`?eventType=${encodeURIComponent(pattern)}`)) }).toEqual({
        pattern,
        status: 400,
        code: 'invalid_request',
        message: expect.stringMatching(/^eventType: eventType must be an event type \(invoice\.paid\), a group ending in "\.\*" \(invoice\.\*\) or "\*"/),
      });
    }
    // A parameter given twice is not two filters.
    expect(await refused(`?endpointId=${flaky}&endpointId=${other}`)).toEqual({ status: 400, code: 'invalid_request', message: expect.stringMatching(/^endpointId: endpointId must be given once/) });
    // What can match opens the stream.
    for (const query of ['?status=pending', '?status=cancelled', '?eventType=*', '?eventType=invoice.*', '?eventType=invoice.paid&status=failed']) {
      const r = await readSse(`${postern.baseUrl}/v1/deliveries/stream${query}`, { authorization: `Bearer ${apiKey}` }, (t) => t.includes(': live deliveries of'));
      expect({ query, status: r.status }).toEqual({ query, status: 200 });
    }
  });

  test('one key holds at most maxPerKey streams: 429 too_many_streams past that, room again once one closes', async () => {
    const controller = newController();
    const client = postern.client(apiKey);
    let connected = 0;
    const open = [0, 1, 2].map(() => collect(client.deliveries.stream({}, { signal: controller.signal, onConnect: () => connected++ })));
    await waitUntil('three streams to connect', () => connected === 3);
    const refused = collect(client.deliveries.stream({}, { reconnect: false }));
    await refused.done;
    expect(refused.error).toBeInstanceOf(PosternApiError);
    expect((refused.error as PosternApiError).status).toBe(429);
    expect((refused.error as PosternApiError).code).toBe('too_many_streams');
    controller.abort();
    await Promise.all(open.map((o) => o.done));
    const again = await readSse(`${postern.baseUrl}/v1/deliveries/stream`, { authorization: `Bearer ${apiKey}` }, (t) => t.includes('retry:'));
    expect(again.status).toBe(200);
  });

  test('revoking the key ends its stream with credential_revoked', async () => {
    const client = postern.client(apiKey);
    const created = await client.apiKeys.create({ name: 'watcher', scopes: ['webhooks:read'] });
    let connected = false;
    const watching = collect(postern.client(created.apiKey).deliveries.stream({}, { onConnect: () => (connected = true) }));
    await waitUntil('the stream to connect', () => connected);
    await client.apiKeys.revoke(created.id);
    await watching.done;
    expect(watching.error).toBeInstanceOf(PosternApiError);
    expect((watching.error as PosternApiError).code).toBe('credential_revoked');
  });
});

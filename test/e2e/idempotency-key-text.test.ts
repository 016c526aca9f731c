import { request } from 'node:http';
import { startPostern, type TestPostern } from '../support/postern.js';

/**
 * An idempotency key is printable text: a key with a newline, a tab or another control character
 * (which logs, terminals and exports would show differently than it was sent) is refused with 400
 * naming the field, on POST /v1/events (body field and header) and for each event of a batch.
 */

let postern: TestPostern;
let apiKey: string;

beforeAll(async () => {
  postern = await startPostern({ sender: false });
  apiKey = (await postern.createOrg()).apiKey;
});
afterAll(async () => {
  await postern.close();
});

const NOT_PRINTABLE: [string, string][] = [
  ['a newline', 'order-1\nX-Injected: 1'],
  ['a carriage return and newline', 'order-1\r\n'],
  ['a tab', 'order\t1'],
  ['a NUL', 'order-1\u0000'],
  ['a DEL', 'order-1\u007f'],
  ['a C1 next line', 'order-1\u0085'],
  ['a line separator', 'order\u20281'],
  ['a right-to-left override', '\u202eorder-1'],
  ['an unpaired surrogate', 'order-\ud8001'],
];

/** The org's events, as the API lists them. */
async function eventCount(): Promise<number> {
  return (await postern.api('GET', '/v1/events', { key: apiKey })).body.data.length;
}

test.each(NOT_PRINTABLE)('a body idempotencyKey holding %s is 400 naming the field; nothing is stored', async (_name, key) => {
  const before = await eventCount();
  const r = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'a.b', data: {}, idempotencyKey: key } });
  expect({ status: r.status, code: r.body.error?.code, message: r.body.error?.message }).toEqual({
    status: 400,
    code: 'invalid_request',
    message: 'idempotencyKey: idempotencyKey must be printable text: no newline, tab or other control character, no line separator, no bidirectional control (U+202A–U+202E, U+2066–U+2069) and no unpaired surrogate',
  });
  expect(await eventCount()).toBe(before);
});

test('printable Unicode, spaces and punctuation are kept as the key', async () => {
  const key = 'Commande été 🙂 #42 / "quoted"';
  const first = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'a.b', data: { n: 1 }, idempotencyKey: key } });
  expect(first.status).toBe(202);
  const again = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'a.b', data: { n: 1 }, idempotencyKey: key } });
  expect({ status: again.status, id: again.body.id }).toEqual({ status: 202, id: first.body.id });
  expect(again.headers.get('idempotent-replayed')).toBe('true');
});

/** POST /v1/events with a raw `Idempotency-Key` header value. */
function postWithHeader(value: string): Promise<{ status: number; body: any }> {
  const url = new URL('/v1/events', postern.baseUrl);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': value } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify({ type: 'a.b', data: {} }));
  });
}

test('an Idempotency-Key header with a tab inside is 400 naming the header', async () => {
  const before = await eventCount();
  const r = await postWithHeader('order\t1');
  expect({ status: r.status, code: r.body.error.code }).toEqual({ status: 400, code: 'invalid_request' });
  expect(r.body.error.message).toMatch(/^Idempotency-Key: header must be printable ASCII, .*no tab or other control character/);
  expect(await eventCount()).toBe(before);
  expect((await postWithHeader('order 1')).status).toBe(202);
});

test('in a batch, each event whose key is not printable gets its own 400 naming idempotencyKey; the others are accepted', async () => {
  const before = await eventCount();
  const events = [
    { type: 'a.b', data: { i: 0 }, idempotencyKey: 'batch-ok-0' },
    ...NOT_PRINTABLE.map(([, key], i) => ({ type: 'a.b', data: { i: i + 1 }, idempotencyKey: key })),
    { type: 'a.b', data: { i: 99 }, idempotencyKey: 'batch-ok-99' },
  ];
  const r = await postern.api('POST', '/v1/events/batch', { key: apiKey, body: { events } });
  expect(r.status).toBe(207);
  const results = r.body.results as { status: number; error?: { code: string; message: string } }[];
  expect(results.map((x) => x.status)).toEqual([202, ...NOT_PRINTABLE.map(() => 400), 202]);
  results.slice(1, -1).forEach((x, i) => expect(x.error).toEqual({ code: 'invalid_request', message: expect.stringMatching(new RegExp(`^events\\[${i + 1}\\]\\.idempotencyKey: idempotencyKey must be printable text`)) }));
  expect(await eventCount()).toBe(before + 2);
});

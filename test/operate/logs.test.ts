import { Writable } from 'node:stream';
import { pino } from 'pino';
import { loggerOptions } from '@postern/shared';
import { startPostern, TEST_ADMIN_TOKEN, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Issue 6 logs: JSON lines keyed by a request id (ingest: X-Request-Id or a generated one; attempts:
 * the webhook-request-id), never a secret, an API key, the admin token or a payload. Both apps log
 * through the same root-logger options as `main.ts`.
 */

let postern: TestPostern;
let receiver: TestReceiver;
const lines: string[] = [];

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  postern = await startPostern({ logger: pino(loggerOptions('postern-test', 'info'), sink) });
  receiver = await startReceiver(() => 200);
});

afterAll(async () => {
  await postern.close();
  await receiver.close();
});

const entries = () => lines.map((l) => JSON.parse(l) as Record<string, any>);

test('requests and attempts are logged with their request id, and no secret or payload is', async () => {
  const org = await postern.api('POST', '/v1/orgs', { key: TEST_ADMIN_TOKEN, body: { name: 'logs' }, headers: { 'x-request-id': 'caller-chosen-1' } });
  expect(org.status).toBe(201);
  expect(org.headers.get('x-request-id')).toBe('caller-chosen-1');
  const apiKey = org.body.apiKey as string;
  const endpoint = await postern.createEndpoint(apiKey, { url: receiver.url, policy: { concurrency: { perEndpoint: 5, perOrg: 5 } } });
  const marker = 'PAYLOAD-MARKER-7d1e';
  const event = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'log.check', data: { card: marker } }, headers: { 'x-request-id': 'bad id with spaces' } });
  expect(event.status).toBe(202);
  // An unusable caller id is replaced, not logged as given.
  expect(event.headers.get('x-request-id')).toMatch(/^req_[0-9a-f-]{36}$/);
  const deliveryId = event.body.deliveries[0].id as string;
  await receiver.waitForRequests(1);
  await waitUntil('the attempt to be logged', () => entries().some((e) => e.msg === 'attempt finished'));

  const all = entries();
  const request = all.find((e) => e.requestId === 'caller-chosen-1' && e.res);
  expect(request).toMatchObject({ req: { method: 'POST', url: '/v1/orgs' }, res: { statusCode: 201 }, level: 30 });
  expect(request!.req.headers).toBeUndefined();
  expect(all.some((e) => e.requestId === event.headers.get('x-request-id') && e.req?.url === '/v1/events')).toBe(true);
  expect(all.find((e) => e.msg === 'attempt finished')).toMatchObject({ requestId: `${deliveryId}.1`, status: 'succeeded', endpointId: endpoint.id });

  const text = lines.join('\n');
  for (const secret of [TEST_ADMIN_TOKEN, apiKey, endpoint.secret as string, marker]) expect(text).not.toContain(secret);
});

test('the root logger redacts secrets, API keys and credentials wherever a caller puts them', () => {
  const out: string[] = [];
  const logger = pino(loggerOptions('redaction', 'info'), { write: (s: string) => void out.push(s) });
  logger.info({ secret: 'whsec_top', apiKey: 'pk_top', endpoint: { secret: 'whsec_nested', url: 'https://example.test/' }, org: { apiKey: 'pk_nested' }, req: { headers: { authorization: 'Bearer pk_header', cookie: 'c=1' } }, envelope: '{"data":1}' }, 'x');
  const entry = JSON.parse(out[0]!);
  expect(entry).toMatchObject({ secret: '[redacted]', apiKey: '[redacted]', endpoint: { secret: '[redacted]', url: 'https://example.test/' }, org: { apiKey: '[redacted]' }, req: { headers: { authorization: '[redacted]', cookie: '[redacted]' } }, envelope: '[redacted]' });
});

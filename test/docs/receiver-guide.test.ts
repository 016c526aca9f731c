import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fastPolicy, startPostern, type TestPostern } from '../support/postern.js';
import { REPO_ROOT } from '../support/spawn-app.js';
import { freePort } from '../faults/support/free-port.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * The receiver guide (docs/receiving-webhooks.md): its Node receiver, taken from the page as it is and run
 * as its own process, against a real Postern. Deliveries verify and are answered 204; a forged
 * request is refused with 400; a redelivery (same `webhook-id`) is answered 200 without being
 * handled twice; and the body it verified is one that parsing and re-serializing would change.
 */

const guide = readFileSync(path.join(REPO_ROOT, 'docs/receiving-webhooks.md'), 'utf8');

function nodeReceiverSource(): string {
  const start = guide.indexOf('<!-- receiver-node:start -->');
  const end = guide.indexOf('<!-- receiver-node:end -->');
  expect(start).toBeGreaterThan(-1);
  const block = /```js\n([\s\S]*?)```/.exec(guide.slice(start, end));
  expect(block).not.toBeNull();
  return block![1]!;
}

let postern: TestPostern;
let receiver: ChildProcess;
let port: number;
let apiKey: string;
let endpoint: { id: string; secret: string };
const lines: string[] = [];

beforeAll(async () => {
  postern = await startPostern();
  apiKey = (await postern.createOrg('guide')).apiKey;
  port = await freePort();
  endpoint = await postern.createEndpoint(apiKey, { url: `http://127.0.0.1:${port}/webhooks`, policy: fastPolicy(3, 50) });
  // Under the repository, so that `express` and `standardwebhooks` resolve from its node_modules.
  const dir = path.join(REPO_ROOT, 'test-artifacts', 'receiver-guide');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `receiver-${process.pid}.mjs`);
  writeFileSync(file, nodeReceiverSource());
  receiver = spawn(process.execPath, [file], { env: { PATH: process.env.PATH ?? '', PORT: String(port), POSTERN_WEBHOOK_SECRET: endpoint.secret }, stdio: ['ignore', 'pipe', 'inherit'] });
  receiver.stdout!.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
  await waitUntil('the guide\'s receiver to listen', async () => (await fetch(`http://127.0.0.1:${port}/webhooks`, { method: 'POST' }).catch(() => null)) !== null, 20_000);
});

afterAll(async () => {
  if (receiver && receiver.exitCode === null) {
    const exited = new Promise((resolve) => receiver.once('exit', resolve));
    receiver.kill('SIGTERM');
    await exited;
  }
  await postern?.close();
});

test('a delivery verifies with the endpoint secret and is answered 204, then handled', async () => {
  // A number past 2^53: re-serialized JSON would change it, and the signature would not match.
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, rawBody: '{"type":"invoice.paid","data":{"amount":12345678901234567890, "note":"caf\\u00e9"}}', headers: { 'content-type': 'application/json' } });
  expect(posted.status).toBe(202);
  const deliveryId = posted.body.deliveries[0].id as string;
  const delivery = await waitUntil('the delivery succeeded', async () => {
    const d = (await postern.api('GET', `/v1/deliveries/${deliveryId}`, { key: apiKey })).body;
    return d.status === 'succeeded' ? d : undefined;
  }, 15_000);
  expect({ attempts: delivery.attemptCount, status: delivery.lastResponseStatus }).toEqual({ attempts: 1, status: 204 });
  await waitUntil('the receiver handled it', () => lines.includes(`received invoice.paid ${posted.body.id}`));
  // What the guide warns about: the bytes sent are not what parsing and serializing them gives.
  const { envelope } = (await postern.api('GET', `/v1/events/${posted.body.id}`, { key: apiKey })).body as { envelope: string };
  expect(envelope).toContain('"amount":12345678901234567890');
  expect(JSON.stringify(JSON.parse(envelope))).not.toBe(envelope);
});

test('a forged request is refused with 400', async () => {
  const res = await fetch(`http://127.0.0.1:${port}/webhooks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'webhook-id': 'evt_forged', 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'webhook-signature': 'v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' },
    body: '{"id":"evt_forged","type":"invoice.paid","data":{}}',
  });
  expect(res.status).toBe(400);
  expect(lines.some((l) => l.includes('evt_forged'))).toBe(false);
});

test('a redelivery carries the same webhook-id: answered 200, not handled again', async () => {
  const posted = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'order.created', data: { n: 1 } } });
  const first = posted.body.deliveries[0].id as string;
  await waitUntil('the first delivery succeeded', async () => (await postern.api('GET', `/v1/deliveries/${first}`, { key: apiKey })).body.status === 'succeeded', 15_000);
  await waitUntil('the receiver handled it', () => lines.includes(`received order.created ${posted.body.id}`));
  const again = await postern.api('POST', `/v1/deliveries/${first}/redeliver`, { key: apiKey });
  expect(again.status).toBe(202);
  const redelivery = await waitUntil('the redelivery succeeded', async () => {
    const d = (await postern.api('GET', `/v1/deliveries/${again.body.delivery.id}`, { key: apiKey })).body;
    return d.status === 'succeeded' ? d : undefined;
  }, 15_000);
  expect(redelivery.lastResponseStatus).toBe(200);
  expect(lines.filter((l) => l === `received order.created ${posted.body.id}`)).toHaveLength(1);
});

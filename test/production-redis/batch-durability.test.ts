import { Redis } from 'ioredis';
import { startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';
import { freePort, startRedisServer, type TestRedisServer } from './support.js';

/**
 * `POST /v1/events/batch` under `ACCEPT_DURABILITY=replica`, on a primary with one replica: a 202
 * for an event only once the replica has it (one WAIT per connection for the whole batch); with
 * the replica stopped, every event is 503 `not_durable` with `Retry-After`, and the retry with the
 * same idempotency keys answers the same events once the replica is back.
 */

const plain = ['--save', '', '--appendonly', 'no', '--bind', '127.0.0.1'];

let primary: TestRedisServer;
let replica: TestRedisServer;
let postern: TestPostern;
let receiver: TestReceiver;
let key: string;

beforeAll(async () => {
  const [primaryPort, replicaPort] = [await freePort(), await freePort()];
  primary = await startRedisServer(['--port', String(primaryPort), ...plain], { host: '127.0.0.1', port: primaryPort });
  replica = await startRedisServer(['--port', String(replicaPort), '--replicaof', '127.0.0.1', String(primaryPort), ...plain], { host: '127.0.0.1', port: replicaPort });
  await waitUntil('the replica is in sync', async () => {
    const r = new Redis({ port: replicaPort, lazyConnect: true });
    try {
      await r.connect();
      return /master_link_status:up/.test(await r.info('replication'));
    } finally {
      r.disconnect();
    }
  }, 20_000, 100);
  postern = await startPostern({ redisTarget: { url: `redis://127.0.0.1:${primaryPort}` }, acceptDurability: { mode: 'replica', replicas: 1, waitMs: 300 } });
  receiver = await startReceiver();
  key = (await postern.createOrg('batch-durability')).apiKey;
  await postern.createEndpoint(key, { url: receiver.url });
}, 60_000);
afterAll(async () => {
  await postern?.close();
  await receiver?.close();
  for (const s of [replica, primary]) await s?.kill();
});

const events = (from: number) => Array.from({ length: 5 }, (_, i) => ({ type: 'durable.batch', data: { n: from + i }, idempotencyKey: `durable-${from + i}` }));
const postBatch = (body: unknown) => postern.api('POST', '/v1/events/batch', { key, body: { events: body } });

test('with the replica answering, every event of a batch is 202 and delivered', async () => {
  const r = await postBatch(events(0));
  expect(r.body.results.map((x: { status: number }) => x.status)).toEqual([202, 202, 202, 202, 202]);
  await receiver.waitForRequests(5, 20_000);
});

test('with the replica stopped, every event is 503 not_durable; the retry with the same keys answers the same events', async () => {
  replica.child.kill('SIGSTOP');
  let refused;
  try {
    refused = await postBatch([...events(10), { type: 'durable.batch' }]);
  } finally {
    replica.child.kill('SIGCONT');
  }
  expect(refused.status).toBe(207);
  expect(refused.body.results.map((x: { status: number; error?: { code: string } }) => `${x.status} ${x.error?.code}`)).toEqual([...Array(5).fill('503 not_durable'), '400 invalid_request']);
  expect(refused.headers.get('retry-after')).toBe('1');

  const retried = await waitUntil('the retry is accepted', async () => {
    const again = await postBatch(events(10));
    return again.body.results.every((x: { status: number }) => x.status === 202) ? again : false;
  }, 20_000, 200);
  expect(retried.body.results.every((x: { idempotentReplayed?: boolean }) => x.idempotentReplayed === true)).toBe(true);
  const listed = await postern.api('GET', '/v1/events?limit=100', { key });
  expect(listed.body.data).toHaveLength(10);
  await receiver.waitForRequests(10, 20_000);
  expect(new Set(receiver.requests.map((q) => q.headers['webhook-id'])).size).toBe(10);
});

// `npm run demo`: Postern end to end, in one process, against real Redis.
//
// Starts ingest (HTTP API) and a sender (BullMQ worker) on a fresh key prefix, plus a receiver
// that fails the first two attempts of every event. Then, through the public HTTP API only, it
// creates an org, registers the receiver with a fast retry policy and posts 200 events with
// awkward payloads (unicode, big integers, 1.0, escapes, nesting, a ~10 KB one). It shows live
// progress, and at the end proves that every request carried a valid Standard Webhooks signature
// (checked with the `standardwebhooks` package), that `webhook-attempt` counted 1, 2, 3, that the
// body never changed between attempts and that `data` arrived byte for byte as posted.
// Exit 0 only if all of that holds; its Redis keys are deleted either way.

import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { Webhook } from 'standardwebhooks';
import { classifyAddress, createIdFactory } from '@postern/shared';
import { createDeliveryQueues, createRedisConnection, createStore } from '@postern/store';
import { createApp } from '@postern/ingest';
import { Postern, rawJson, type Delivery } from '@postern/client';
import { createGotTransport, createSender, type Sender } from '@postern/sender';
import type { Redis } from 'ioredis';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const PREFIX = `demo:${randomBytes(6).toString('hex')}`;
const ADMIN_TOKEN = `demo-admin-${randomBytes(12).toString('hex')}`;
const ALLOW_LIST = ['127.0.0.1', '::1'];
const EVENT_COUNT = 200;
const FAILS_PER_EVENT = 2; // the receiver answers 500 this many times per webhook-id, then 200
const DEADLINE_MS = 60_000;
const POLICY = { maxAttempts: 5, schedule: { kind: 'fixed' as const, waitsMs: [200, 400, 800, 1600] }, jitterRatio: 0.1 };
const TYPES = ['invoice.paid', 'invoice.created', 'customer.updated', 'order.shipped', 'user.deleted', 'payment:failed', 'report_ready-v2'];
const tty = process.stdout.isTTY === true;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---- payloads: raw JSON text, posted as is, so the receiver can check it arrives byte for byte ----
function payload(i: number): string {
  if (i === 100) {
    const items = Array.from({ length: 230 }, (_, n) => ({ sku: `SKU-${n}`, qty: n % 7, note: 'ünïcødé ✓' }));
    return JSON.stringify({ big: true, items });
  }
  const variants = [
    `{"invoice":"inv_${i}","amount":12345678901234567890123,"currency":"EUR"}`,
    `{"ratio":1.0,"price":19.90,"tiny":1.5e-7,"neg":-0.0,"sci":1E+2}`,
    `{"name":"Zoë Ångström","city":"東京","emoji":"🦊🚀","rtl":"مرحبا","pair":"\\ud83e\\udd8a"}`,
    `{"text":"line1\\nline2\\ttab \\"quoted\\" back\\\\slash \\u00e9 \\/","html":"<b>&amp;</b>"}`,
    `{"customer":{"id":"cus_${i}","address":{"lines":["1 Main St",null],"geo":{"lat":51.5,"lng":-0.12}}},"flags":{"vip":true}}`,
    `[1,"two",3.0,[4,[5,{"six":6}]],null,true]`,
    `{ "spaced" :  [ 1 , 2 ] ,\n  "dup": 1, "dup": 2 }`,
    `"just a string #${i}"`,
    `${i}`,
  ];
  return variants[i % variants.length] as string;
}

// ---- receiver: verifies every request, fails the first attempts, checks attempt numbers and bodies ----
const stats = { requests: 0, signatureFailures: 0, bodyMismatches: 0, attemptMismatches: 0, dataMismatches: 0 };
const seen = new Map<string, { count: number; body: string }>();
let verifier: Webhook | null = null; // set once the endpoint (and its secret) exists

function receive(body: string, headers: IncomingHttpHeaders): number {
  stats.requests++;
  const id = String(headers['webhook-id'] ?? '');
  const prior = seen.get(id);
  const count = (prior?.count ?? 0) + 1;
  seen.set(id, { count, body: prior?.body ?? body });
  if (prior && prior.body !== body) stats.bodyMismatches++;
  if (headers['webhook-attempt'] !== String(count)) stats.attemptMismatches++;
  try {
    if (!verifier) throw new Error('no secret yet');
    verifier.verify(body, headers as Record<string, string>);
  } catch {
    stats.signatureFailures++;
    return 401;
  }
  return count <= FAILS_PER_EVENT ? 500 : 200;
}

async function startReceiver(): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.statusCode = receive(Buffer.concat(chunks).toString('utf8'), req.headers);
      res.end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/postern` };
}

// ---- Postern in-process, wired like test/support/postern.ts ----
async function startPostern(apiRedis: Redis) {
  const workerRedis = createRedisConnection(REDIS_URL, 'worker');
  const logger = pino({ level: process.env.DEMO_LOG_LEVEL ?? 'silent' });
  const store = createStore({ redis: apiRedis, prefix: PREFIX });
  const queues = createDeliveryQueues(apiRedis, store.keys);
  const queue = queues.partitions[0]!;
  const app = createApp({
    redis: apiRedis, store, queues, clock: { now: () => Date.now() }, ids: createIdFactory(), logger,
    config: { adminToken: ADMIN_TOKEN, maxBodyBytes: 1024 * 1024, allowList: ALLOW_LIST, secretRotationGraceMs: 60_000 },
  });
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const classify = (address: string) => classifyAddress(address, ALLOW_LIST);
  const transport = createGotTransport({ allowList: ALLOW_LIST, classifyAddress: classify });
  const workerQueues = createDeliveryQueues(workerRedis, store.keys);
  const sender: Sender = createSender({
    redis: workerRedis, store: createStore({ redis: workerRedis, prefix: PREFIX }), queues: workerQueues, transport,
    clock: { now: () => Date.now() }, random: Math.random, logger, classifyAddress: classify,
    config: { concurrency: 20, reconcileIntervalMs: 0, reconcileGraceMs: 300_000, userAgent: 'Postern/demo' },
  });
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      await sender.close();
      transport.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await queue.obliterate({ force: true }).catch(() => undefined);
      await queue.close();
      await workerQueues.close();
      await workerRedis.quit();
    },
  };
}

async function deleteKeys(redis: Redis): Promise<number> {
  let cursor = '0';
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${PREFIX}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) deleted += await redis.del(...keys);
  } while (cursor !== '0');
  return deleted;
}

// ---- the HTTP API, through @postern/client ----
let baseUrl = '';

/** Every delivery of the endpoint in one status: the client follows `nextCursor`. */
function listDeliveries(client: Postern, endpointId: string, status: Delivery['status']): Promise<Delivery[]> {
  return client.deliveries.list({ endpointId, status, limit: 100 }).toArray(1_000_000);
}

async function progress(client: Postern, endpointId: string) {
  const [succeeded, failed, cancelled, pending, inFlight] = await Promise.all(
    (['succeeded', 'failed', 'cancelled', 'pending', 'in_flight'] as const).map((s) => listDeliveries(client, endpointId, s)),
  );
  const retrying = pending!.filter((d) => d.attemptCount > 0).length + inFlight!.filter((d) => d.attemptCount > 1).length;
  const lastFinishedAt = Math.max(0, ...[...succeeded!, ...failed!, ...cancelled!].map((d) => Date.parse(d.finishedAt ?? d.deliveredAt ?? '') || 0));
  return { delivered: succeeded!.length, failed: failed!.length + cancelled!.length, retrying, unfinished: pending!.length + inFlight!.length, lastFinishedAt };
}

// ---- main ----
async function main(): Promise<number> {
  const apiRedis = createRedisConnection(REDIS_URL, 'api');
  apiRedis.on('error', () => undefined); // reported below, or by the API as 503
  const up = await Promise.race([new Promise<boolean>((r) => apiRedis.once('ready', () => r(true))), sleep(3000).then(() => false)]);
  if (!up) {
    apiRedis.disconnect();
    console.error(`No Redis answers at ${REDIS_URL}. Start one, then run npm run demo again:\n` +
      '  redis-server                       (if installed; Debian/Ubuntu: apt-get install redis-server)\n' +
      '  docker compose up -d redis         (from the repo root)\n' +
      'or set REDIS_URL to a Redis you already run.');
    return 1;
  }
  const receiver = await startReceiver();
  const postern = await startPostern(apiRedis);
  baseUrl = postern.baseUrl;
  let ok = false;
  try {
    console.log(`Postern on ${baseUrl} (Redis ${REDIS_URL}, prefix ${PREFIX}); receiver on ${receiver.url}`);
    const org = await new Postern({ baseUrl, adminToken: ADMIN_TOKEN }).orgs.create({ name: 'Demo Corp' });
    const client = new Postern({ baseUrl, apiKey: org.apiKey });
    const endpoint = await client.endpoints.create({ url: receiver.url, description: 'demo receiver', policy: POLICY });
    verifier = new Webhook(endpoint.secret);
    console.log(`org ${org.id}, endpoint ${endpoint.id}: ${POLICY.maxAttempts} attempts, waits ${POLICY.schedule.waitsMs.join('/')} ms ±10%`);
    console.log(`receiver answers 500 to the first ${FAILS_PER_EVENT} attempts of each event, then 200\n`);

    // Producers: 20 at a time, while progress is shown. Each `data` is sent as raw JSON text, so it
    // keeps its exact bytes (1.0, big integers, escapes, spacing).
    const started = Date.now();
    const posted: { eventId: string; deliveryId: string; data: string }[] = [];
    let postingMs: number | null = null;
    let postingError: unknown = null;
    void (async () => {
      for (let i = 0; i < EVENT_COUNT; i += 20) {
        await Promise.all(Array.from({ length: Math.min(20, EVENT_COUNT - i) }, async (_, n) => {
          const data = payload(i + n);
          const answer = await client.events.create({ type: TYPES[(i + n) % TYPES.length]!, data: rawJson(data) });
          posted.push({ eventId: answer.id, deliveryId: answer.deliveries[0]!.id, data });
        }));
      }
      postingMs = Date.now() - started;
    })().catch((err: unknown) => (postingError = err));

    // Live progress, from the API's delivery log: ~5 redraws a second on a terminal, else a line a second.
    let counts: Awaited<ReturnType<typeof progress>>;
    let lastPrint = 0;
    let timedOut = false;
    for (;;) {
      const tick = Date.now();
      if (postingError) throw postingError;
      counts = await progress(client, endpoint.id);
      const done = postingMs !== null && counts.delivered + counts.failed >= posted.length && counts.unfinished === 0;
      const line = `posted ${posted.length}/${EVENT_COUNT} · delivered ${counts.delivered} · retrying ${counts.retrying} · failed ${counts.failed} · requests received ${stats.requests} · ${((Date.now() - started) / 1000).toFixed(1)} s`;
      if (tty) process.stdout.write(`\r${line}\x1b[K`);
      else if (done || Date.now() - lastPrint >= 1000) {
        console.log(line);
        lastPrint = Date.now();
      }
      if (done) break;
      if (Date.now() - started > DEADLINE_MS) {
        timedOut = true;
        break;
      }
      await sleep(Math.max(20, tick + (tty ? 200 : 1000) - Date.now()));
    }
    const wallMs = (timedOut ? Date.now() : counts.lastFinishedAt) - started; // to the last delivery's finishedAt
    if (tty) process.stdout.write('\n');

    // The data the receiver got must be the data that was posted, byte for byte.
    for (const p of posted) {
      const body = seen.get(p.eventId)?.body;
      if (body === undefined || !body.endsWith(`,"data":${p.data}}`)) stats.dataMismatches++;
    }
    const all = counts.delivered === posted.length && posted.length === EVENT_COUNT;
    const clean = stats.signatureFailures === 0 && stats.bodyMismatches === 0 && stats.attemptMismatches === 0 && stats.dataMismatches === 0;
    console.log('\nSummary');
    console.log(`  events posted               ${posted.length}  (${TYPES.length} types, largest data ${Math.max(...posted.map((p) => p.data.length))} bytes, posting took ${postingMs ?? '?'} ms)`);
    console.log(`  delivered                   ${counts.delivered}`);
    console.log(`  failed                      ${counts.failed}${timedOut ? `  (gave up after ${DEADLINE_MS / 1000} s; ${counts.unfinished} unfinished)` : ''}`);
    console.log(`  attempts (requests seen)    ${stats.requests}  (expected ${posted.length * (FAILS_PER_EVENT + 1)})`);
    console.log(`  signature failures          ${stats.signatureFailures}`);
    console.log(`  body changed across retries ${stats.bodyMismatches}`);
    console.log(`  wrong webhook-attempt       ${stats.attemptMismatches}`);
    console.log(`  data not byte-identical     ${stats.dataMismatches}`);
    console.log(`  wall time                   ${(wallMs / 1000).toFixed(2)} s (first POST to last delivery finished)`);

    const sample = posted.find((p) => p.data.length > 5000) ?? posted[0]!;
    const detail = await client.deliveries.get(sample.deliveryId);
    console.log(`\nDelivery ${detail.id} (event ${detail.eventId}, ${detail.eventType}, ${sample.data.length}-byte data): ${detail.status}`);
    for (const a of detail.attempts) {
      const status = a.responseStatus === null ? '—' : String(a.responseStatus);
      console.log(`  #${a.number}  ${a.startedAt}  ${String(a.durationMs ?? '?').padStart(4)} ms  ${status}  ${a.error ?? 'ok'}`);
    }
    ok = all && clean && !timedOut;
    console.log(ok ? '\nPASS: every event delivered, every request verified.' : '\nFAIL: see the figures above.');
  } catch (err) {
    if (tty) process.stdout.write('\n');
    console.error(`demo failed: ${(err as Error).stack ?? String(err)}`);
  } finally {
    await postern.close().catch((err: Error) => console.error(`closing Postern: ${err.message}`));
    receiver.server.closeAllConnections();
    await new Promise<void>((r) => receiver.server.close(() => r()));
    const deleted = await deleteKeys(apiRedis).catch(() => -1);
    console.log(deleted >= 0 ? `cleaned up ${deleted} Redis keys under ${PREFIX}:` : `could not delete keys under ${PREFIX}:`);
    await apiRedis.quit().catch(() => undefined);
  }
  return ok ? 0 : 1;
}

process.exitCode = await main();

/**
 * Redis bytes per pending and per finished delivery, payload excluded, with a breakdown of where
 * each byte goes: by key class (delivery hash, event hash, envelope, BullMQ job, each index…) and,
 * inside the hashes, by field (the bytes `MEMORY USAGE` drops when the field is removed from a
 * scratch copy). In-process Postern on the local Redis (`REDIS_URL`, own key prefix), one org and
 * endpoint per run, `maxAttempts: 1`, N events (one delivery each):
 *
 * - pending: the sender is not started; every delivery waits with its BullMQ job;
 * - finished, answered 200: the sender delivers them all; one attempt each;
 * - finished, answered 500: the same with a 500 and a 19-byte body, so each attempt keeps its
 *   response (issue 14's detail, policy `keepResponseBody: 'failed'`).
 *
 *   node --conditions=development --import tsx bench/finished-memory.ts [--json]
 *   (MEMORY_N deliveries per run, default 300; `npm run bench` runs it on its private Redis)
 *
 * Bytes per delivery are the growth of each key class over the run divided by N, so shared keys
 * (indexes, the queue's lists) count by what one more member costs. Indexes past 128 members are
 * skiplists, as they are in production. The envelope (the payload) is subtracted from the total.
 */
import type { ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { startPostern, type TestPostern } from '../test/support/postern.js';
import { startReceiver } from '../test/support/receiver.js';
import { waitUntil } from '../test/support/wait-until.js';
import { fieldCosts, keyBytesByClass, printDeliveryMemory, type DeliveryMemory } from '../test/support/memory-breakdown.js';

const N = Number(process.env.MEMORY_N ?? process.env.FINISHED_N ?? 300);

async function measure(postern: TestPostern, orgId: string, before: Map<string, number>, ids: string[], envelopeBytes: number, state: DeliveryMemory['state']): Promise<DeliveryMemory> {
  const after = await keyBytesByClass(postern.redis, [postern.prefix, `{${postern.prefix}:`], orgId);
  const byKey: Record<string, number> = {};
  let total = 0;
  for (const [cls, bytes] of after) {
    const grown = bytes - (before.get(cls) ?? 0);
    // Fixed costs, not per delivery: counters per hour, the queue's bounded events stream and markers.
    if (cls.startsWith('stats ') || /^\{q\}:deliveries:(events|id|marker|meta|stalled-check)$/.test(cls)) continue;
    if (grown === 0) continue;
    byKey[cls] = Math.round(grown / ids.length);
    total += grown;
  }
  const sorted = Object.fromEntries(Object.entries(byKey).sort((a, b) => b[1] - a[1]));
  const k = postern.store.keys;
  const sample = ids[Math.floor(ids.length / 2)]!;
  const delivery = await postern.store.deliveries.get(orgId, sample);
  const hashes: [string, string][] = [
    ['delivery', k.delivery(orgId, sample)],
    ['attempts', k.deliveryAttempts(orgId, sample)],
    ['event', k.event(orgId, delivery!.eventId)],
    ['job', k.deliveryJob(orgId, sample)],
  ];
  const byField: DeliveryMemory['byField'] = {};
  for (const [name, key] of hashes) {
    const costs = await fieldCosts(postern.redis, key);
    if (costs) byField[name] = costs;
  }
  return { state, deliveries: ids.length, envelopeBytes, perDeliveryExcludingPayload: Math.round(total / ids.length - envelopeBytes), byKey: sorted, byField };
}

async function run(status: 200 | 500 | null): Promise<DeliveryMemory> {
  // A prefix as long as the default `postern` (7 characters), so key names cost what they do in production.
  const postern = await startPostern({ sender: false, prefix: `pb:${randomBytes(2).toString('hex')}` });
  const receiver = await startReceiver((_q, _n, res: ServerResponse) => {
    res.writeHead(status ?? 200, { 'content-type': 'application/json' }).end(status === 500 ? '{"error":"db down"}' : 'ok');
    return 'handled';
  });
  try {
    const key = (await postern.createOrg('bench')).apiKey;
    await postern.createEndpoint(key, { url: receiver.url, policy: { preset: 'standard', maxAttempts: 1 } });
    const orgId = (await postern.api('GET', '/v1/me', { key })).body.orgId as string;
    const before = await keyBytesByClass(postern.redis, [postern.prefix, `{${postern.prefix}:`], orgId);
    const ids: string[] = [];
    let envelopeBytes = 0;
    for (let i = 0; i < N; i++) {
      const body = (await postern.api('POST', '/v1/events', { key, body: { type: 'invoice.paid', data: { invoice: `in_${String(i).padStart(5, '0')}`, amount: 1234 } } })).body;
      ids.push(body.deliveries[0].id);
      if (i === 0) envelopeBytes = Buffer.byteLength((await postern.store.events.get(orgId, body.id))!.envelope);
    }
    if (status === null) return await measure(postern, orgId, before, ids, envelopeBytes, 'pending');
    await postern.startSender();
    await waitUntil('every delivery finished', async () => (await postern.store.unfinished.count(orgId)) === 0 || undefined, 120_000, 100);
    // The queue's own bookkeeping (its stalled-check marker, the events stream) is not per delivery.
    return await measure(postern, orgId, before, ids, envelopeBytes, status === 200 ? 'finished (answered 200)' : 'finished (answered 500, response kept)');
  } finally {
    await removeKeys(postern);
    await postern.close();
    await receiver.close();
  }
}

/** Deletes the run's keys (its prefix and its queue's), one SCAN batch at a time: the local Redis is shared. */
async function removeKeys(postern: TestPostern): Promise<void> {
  for (const match of [`${postern.prefix}:*`, `{${postern.prefix}:*`]) {
    let cursor = '0';
    do {
      const [next, keys] = await postern.redis.scan(cursor, 'MATCH', match.replace(/[{}]/g, '\\$&'), 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await postern.redis.unlink(...keys);
    } while (cursor !== '0');
  }
}

const results = [await run(null), await run(200), await run(500)];
// `--json`: one line for `npm run bench`, which runs this against its private Redis.
if (process.argv.includes('--json')) console.log(JSON.stringify(results));
else for (const r of results) printDeliveryMemory(r);
process.exit(0);

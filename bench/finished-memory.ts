/**
 * Redis bytes per finished delivery, and what issue 14 added to them: the attempt's request
 * fields (`sent`) and, for a failed attempt, its kept response (headers and body excerpt); the
 * event's entry in the org's events index; the per-endpoint/org attempt counters (a fixed cost per
 * hour, not per delivery). In-process Postern on the local Redis (`REDIS_URL`), 1 endpoint,
 * `maxAttempts: 1`; one run whose receiver answers 200, one that answers 500 with a 19-byte body.
 *
 *   node --conditions=development --import tsx bench/finished-memory.ts [--json]
 *   (FINISHED_N deliveries per run, default 500; `npm run bench` runs it on its private Redis)
 */
import type { ServerResponse } from 'node:http';
import { startPostern } from '../test/support/postern.js';
import { startReceiver } from '../test/support/receiver.js';
import { waitUntil } from '../test/support/wait-until.js';

const N = Number(process.env.FINISHED_N ?? 500);

async function run(status: 200 | 500) {
  const postern = await startPostern();
  const receiver = await startReceiver((_q, _n, res: ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(status === 200 ? 'ok' : '{"error":"db down"}');
    return 'handled';
  });
  try {
    const key = (await postern.createOrg('bench')).apiKey;
    await postern.createEndpoint(key, { url: receiver.url, policy: { preset: 'standard', maxAttempts: 1 } });
    const orgId = (await postern.api('GET', '/v1/me', { key })).body.orgId as string;
    const ids: string[] = [];
    for (let i = 0; i < N; i++) ids.push((await postern.api('POST', '/v1/events', { key, body: { type: 'invoice.paid', data: { invoice: `in_${i}`, amount: 1234 } } })).body.deliveries[0].id);
    await waitUntil('every delivery finished', async () => (await postern.redis.zcard(postern.store.keys.unfinishedDeliveries(orgId))) === 0 || undefined, 120_000, 200);

    const r = postern.redis;
    const k = postern.store.keys;
    const usage = async (key: string) => Number((await r.memory('USAGE', key, 'SAMPLES', 0)) ?? 0);
    let attempts = 0;
    let attemptsWithoutDetail = 0;
    const scratch = `${postern.prefix}:scratch`;
    for (const id of ids) {
      attempts += await usage(k.deliveryAttempts(orgId, id));
      const plain: string[] = [];
      for (const [field, json] of Object.entries(await r.hgetall(k.deliveryAttempts(orgId, id)))) {
        const { sent: _sent, response: _response, ...rest } = JSON.parse(json) as Record<string, unknown>;
        plain.push(field, JSON.stringify(rest));
      }
      await r.hset(scratch, ...plain);
      attemptsWithoutDetail += await usage(scratch);
      await r.del(scratch);
    }
    let all = 0;
    let stats = 0;
    let cursor = '0';
    do {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${postern.prefix}:*`, 'COUNT', 1000);
      cursor = next;
      for (const key of keys) {
        const bytes = await usage(key);
        all += bytes;
        if (key.includes(':stats:')) stats += bytes;
      }
    } while (cursor !== '0');
    return {
      receiverAnswers: status,
      deliveries: N,
      allKeysPerDelivery: Math.round((all - stats) / N),
      attemptDetailPerDelivery: Math.round((attempts - attemptsWithoutDetail) / N),
      orgEventsIndexPerDelivery: Math.round((await usage(k.orgEvents(orgId))) / N),
      statsCountersFixedBytes: stats,
    };
  } finally {
    await postern.close();
    await receiver.close();
  }
}

const results = [await run(200), await run(500)];
// `--json`: one line for `npm run bench`, which runs this against its private Redis.
if (process.argv.includes('--json')) console.log(JSON.stringify(results));
else console.table(results);
process.exit(0);

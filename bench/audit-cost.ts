/**
 * The audit log's cost: sequential appends (one MULTI round trip each: XADD with MINID trim,
 * PEXPIRE) and a filtered page read, on the local Redis. `npm run bench:audit`; figures in
 * docs/audit-log.md.
 */
import { buildAuditEntry, createIdFactory } from '@postern/shared';
import { createRedisConnection, createStore } from '@postern/store';
const redis = createRedisConnection('redis://127.0.0.1:6379', 'worker');
const store = createStore({ redis, prefix: 'bench-audit-tmp' });
const ids = createIdFactory();
const N = 5000;
const org = 'org_01KB2Z3R8Q5T7V9X1Y3Z5A7C9E';
const t0 = performance.now();
for (let i = 0; i < N; i++) {
  const now = Date.now();
  await store.auditLog.append(org, buildAuditEntry({ id: ids('aud', now), atMs: now, actor: { kind: 'api_key', id: ids('key', now), name: 'first key' }, action: 'endpoint.updated', target: { type: 'endpoint', id: ids('ep', now) }, changes: ['auth', 'policy.maxAttempts', 'url'], requestId: `req_${crypto.randomUUID()}` }), now);
}
const ms = performance.now() - t0;
const bytes = Number(await redis.call('MEMORY', 'USAGE', store.keys.orgAuditLog(org), 'SAMPLES', '0'));
const t1 = performance.now();
for (let i = 0; i < 200; i++) await store.auditLog.list(org, { limit: 50, action: 'endpoint.updated' }, Date.now());
const listMs = (performance.now() - t1) / 200;
console.log(JSON.stringify({ appends: N, perAppendUs: Math.round((ms / N) * 1000), bytesPerEntry: Math.round(bytes / N), listPageMs: listMs.toFixed(2) }));
await redis.del(store.keys.orgAuditLog(org));
await redis.quit();

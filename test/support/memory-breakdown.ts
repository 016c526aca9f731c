/**
 * Where Redis bytes go: `MEMORY USAGE` summed by key class, and the cost of each field of a hash.
 * Used by bench/finished-memory.ts (pending and finished deliveries, with the breakdown) and
 * test/engine/compact-records.test.ts (the bounds).
 */
import type { RedisClient } from '@postern/store';

/**
 * A key's class: the key with its instance prefix, org hash tag and ids replaced by placeholders,
 * e.g. `{o}:delivery:<dlv>`, `{o}:endpoint:<ep>:deliveries:failed`, `{q}:deliveries:<job>`.
 */
export function classOfKey(key: string, prefix: string): string {
  let k = key;
  if (k.startsWith(`{${prefix}:q`)) k = k.replace(/^\{[^}]*\}:deliveries:/, '{q}:deliveries:').replace(/^\{q\}:deliveries:dlv_[0-9A-Z]+$/, '{q}:deliveries:<job>');
  else if (k.startsWith(`${prefix}:`)) k = k.slice(prefix.length + 1);
  return k
    .replace(/\{o:org_[0-9A-Z]+\}/, '{o}')
    .replace(/\{k:[0-9a-f]+\}/, '{k}')
    .replace(/dlv_[0-9A-Z]+/g, '<dlv>')
    .replace(/evt_[0-9A-Z]+/g, '<evt>')
    .replace(/ep_[0-9A-Z]+/g, '<ep>')
    .replace(/key_[0-9A-Z]+/g, '<key>')
    .replace(/org_[0-9A-Z]+/g, '<org>')
    .replace(/:stats:(endpoint|org):<(ep|org)>:\d+$/, ':stats:$1:<hour>')
    .replace(/^(\{o\}:stats)/, 'stats $1');
}

/**
 * Sums `MEMORY USAGE … SAMPLES 0` (exact) of every key starting with one of `prefixes`, by
 * {@link classOfKey}. Only keys of org `orgId` (or of no org) are counted, so two orgs of one run
 * can be measured apart; the org's live feed (bounded per org) is left out.
 */
export async function keyBytesByClass(redis: RedisClient, prefixes: string[], orgId: string): Promise<Map<string, number>> {
  const byClass = new Map<string, number>();
  const instance = prefixes[0]!;
  for (const p of prefixes) {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${p.replace(/[{}[\]*?]/g, '\\$&')}*`, 'COUNT', 1000);
      cursor = next;
      const pipe = redis.pipeline();
      // The org's live feed is capped per org (LIVE_FEED_MAX_ENTRIES), not a cost of each delivery:
      // the bench reports it on its own (`liveFeed`, docs/live-deliveries.md).
      const mine = keys.filter((k) => (!k.includes('{o:') || k.includes(`{o:${orgId}}`)) && classOfKey(k, instance) !== '{o}:live');
      for (const k of mine) pipe.memory('USAGE', k, 'SAMPLES', 0);
      const sizes = (await pipe.exec()) ?? [];
      mine.forEach((k, i) => {
        const cls = classOfKey(k, instance);
        byClass.set(cls, (byClass.get(cls) ?? 0) + Number(sizes[i]?.[1] ?? 0));
      });
    } while (cursor !== '0');
  }
  return byClass;
}

/** What one field of a hash costs: its name and value bytes as the encoding stores them. */
export interface FieldCost {
  field: string;
  bytes: number;
}

/** jemalloc's size class of an allocation of `n` bytes (the small classes Redis' records fall in). */
function allocated(n: number): number {
  const classes = [8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384, 448, 512, 640, 768, 896, 1024];
  for (const c of classes) if (n <= c) return c;
  return Math.ceil(n / 256) * 256;
}

/** Bytes of one listpack entry holding `s` (Redis stores integer-looking strings as integers). */
export function listpackEntryBytes(s: string): number {
  let body: number;
  if (/^(0|-?[1-9][0-9]{0,18})$/.test(s) && Math.abs(Number(s)) <= Number.MAX_SAFE_INTEGER) {
    const n = Number(s);
    if (n >= 0 && n <= 127) body = 1;
    else if (n >= -4096 && n <= 4095) body = 2;
    else if (n >= -32768 && n <= 32767) body = 3;
    else if (n >= -8388608 && n <= 8388607) body = 4;
    else if (n >= -2147483648 && n <= 2147483647) body = 5;
    else body = 9;
  } else {
    const len = Buffer.byteLength(s);
    body = len <= 63 ? 1 + len : len <= 4095 ? 2 + len : 5 + len;
  }
  return body + (body <= 127 ? 1 : body < 16383 ? 2 : 3);
}

/** Bytes of one hashtable entry: the dict entry and the two strings. */
function hashtableEntryBytes(field: string, value: string): number {
  const sds = (s: string) => {
    const len = Buffer.byteLength(s);
    return allocated((len < 32 ? 1 : len < 256 ? 3 : 5) + len + 1);
  };
  return 24 + sds(field) + sds(value);
}

/**
 * The cost of each field of the hash at `key` (listpack: its two entries; hashtable: its dict
 * entry and strings), largest first, plus `(key and overhead)`: `MEMORY USAGE` minus the fields.
 * Null when the key is not a hash.
 */
export async function fieldCosts(redis: RedisClient, key: string): Promise<{ encoding: string; fields: FieldCost[] } | null> {
  if ((await redis.type(key)) !== 'hash') return null;
  const encoding = String(await redis.object('ENCODING', key));
  const total = Number(await redis.memory('USAGE', key, 'SAMPLES', 0));
  const h = await redis.hgetall(key);
  const fields = Object.entries(h).map(([f, v]) => ({ field: f, bytes: encoding === 'listpack' ? listpackEntryBytes(f) + listpackEntryBytes(v) : hashtableEntryBytes(f, v) }));
  fields.sort((a, b) => b.bytes - a.bytes);
  const sum = fields.reduce((s, f) => s + f.bytes, 0);
  return { encoding, fields: [{ field: '(key and overhead)', bytes: total - sum }, ...fields] };
}

/** One measured state: bytes per delivery in all and by key class, and the per-field costs of one sample delivery's hashes. */
export interface DeliveryMemory {
  state: 'pending' | 'finished (answered 200)' | 'finished (answered 500, response kept)';
  deliveries: number;
  /** Envelope bytes of one event (the payload), subtracted from {@link perDeliveryExcludingPayload}. */
  envelopeBytes: number;
  perDeliveryExcludingPayload: number;
  /** Key class → bytes per delivery (sum of `MEMORY USAGE` growth / N), largest first. */
  byKey: Record<string, number>;
  /** Hash key class → field → bytes that field costs in one sample, with the hash's encoding. */
  byField: Record<string, { encoding: string; fields: FieldCost[] }>;
}

/** Prints one state: the total, then bytes by key class, then each hash's fields. */
export function printDeliveryMemory(m: DeliveryMemory): void {
  console.log(`\n${m.state}: ${m.perDeliveryExcludingPayload} B per delivery, payload (${m.envelopeBytes} B envelope) excluded; ${m.deliveries} deliveries`);
  console.table(Object.entries(m.byKey).map(([key, bytes]) => ({ key: key, 'B per delivery': bytes })));
  for (const [name, { encoding, fields }] of Object.entries(m.byField)) {
    console.log(`  ${name} hash (${encoding}), bytes each field costs in one sample:`);
    console.log(`    ${fields.map((f) => `${f.field}=${f.bytes}`).join('  ')}`);
  }
}


import type { RecordWithTtl } from 'node:dns';
import { createDnsCache, type DnsResolver } from './dns-cache.js';

/** A resolver answering from a table (TTL in s), counting queries; a name not listed has no records. */
function fakeResolver(table: Record<string, { v4?: RecordWithTtl[]; v6?: RecordWithTtl[] }>) {
  const queries: string[] = [];
  const answer = (family: 'v4' | 'v6') => async (hostname: string) => {
    queries.push(`${family}:${hostname}`);
    const records = table[hostname]?.[family];
    if (records && records.length > 0) return records;
    throw Object.assign(new Error(`query ENODATA ${hostname}`), { code: table[hostname] ? 'ENODATA' : 'ENOTFOUND' });
  };
  const resolver: DnsResolver = { resolve4: answer('v4'), resolve6: answer('v6') };
  return { resolver, queries };
}

function manualClock(startMs = 1_000_000) {
  let now = startMs;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

const noFallback = async (hostname: string): Promise<string[]> => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
};

test('a second lookup within the TTL is answered from the cache; after the TTL DNS is asked again', async () => {
  const { resolver, queries } = fakeResolver({ 'hooks.example': { v4: [{ address: '93.184.216.34', ttl: 30 }] } });
  const clock = manualClock();
  const dns = createDnsCache({ resolver, clock, fallback: noFallback });

  expect(await dns.lookupAll('hooks.example')).toEqual(['93.184.216.34']);
  expect(queries).toEqual(['v4:hooks.example', 'v6:hooks.example']);

  clock.advance(29_999);
  expect(await dns.lookupAll('hooks.example')).toEqual(['93.184.216.34']);
  expect(queries).toHaveLength(2);

  clock.advance(1);
  expect(await dns.lookupAll('hooks.example')).toEqual(['93.184.216.34']);
  expect(queries).toEqual(['v4:hooks.example', 'v6:hooks.example', 'v4:hooks.example', 'v6:hooks.example']);
});

test('the answer lasts as long as its shortest TTL, capped at maxTtlMs; IPv4 addresses come first', async () => {
  const { resolver, queries } = fakeResolver({
    'short.example': { v4: [{ address: '93.184.216.34', ttl: 300 }], v6: [{ address: '2606:2800:220:1::1', ttl: 5 }] },
    'long.example': { v4: [{ address: '93.184.216.35', ttl: 86_400 }] },
  });
  const clock = manualClock();
  const dns = createDnsCache({ resolver, clock, fallback: noFallback, maxTtlMs: 60_000 });

  expect(await dns.lookupAll('short.example')).toEqual(['93.184.216.34', '2606:2800:220:1::1']);
  await dns.lookupAll('long.example');
  clock.advance(5_000);
  await dns.lookupAll('short.example');
  await dns.lookupAll('long.example');
  expect(queries.filter((q) => q.endsWith('short.example'))).toHaveLength(4);
  expect(queries.filter((q) => q.endsWith('long.example'))).toHaveLength(2);
  clock.advance(55_000);
  await dns.lookupAll('long.example');
  expect(queries.filter((q) => q.endsWith('long.example'))).toHaveLength(4);
});

test('a TTL of 0 is not cached', async () => {
  const { resolver, queries } = fakeResolver({ 'zero.example': { v4: [{ address: '93.184.216.34', ttl: 0 }] } });
  const dns = createDnsCache({ resolver, clock: manualClock(), fallback: noFallback });
  await dns.lookupAll('zero.example');
  await dns.lookupAll('zero.example');
  expect(queries).toHaveLength(4);
});

test('concurrent lookups of one name share one query; names are case-insensitive and a trailing dot is ignored', async () => {
  const { resolver, queries } = fakeResolver({ 'hooks.example': { v4: [{ address: '93.184.216.34', ttl: 30 }] } });
  const dns = createDnsCache({ resolver, clock: manualClock(), fallback: noFallback });
  const answers = await Promise.all([dns.lookupAll('hooks.example'), dns.lookupAll('HOOKS.example'), dns.lookupAll('hooks.example.')]);
  expect(answers).toEqual([['93.184.216.34'], ['93.184.216.34'], ['93.184.216.34']]);
  expect(queries).toEqual(['v4:hooks.example', 'v6:hooks.example']);
});

test('when DNS has no address the fallback (getaddrinfo) answers, kept for fallbackTtlMs; its errors are what callers see and are not cached', async () => {
  const { resolver, queries } = fakeResolver({});
  const clock = manualClock();
  const asked: string[] = [];
  const hosts: Record<string, string[]> = { 'intranet-name': ['93.184.216.36'] };
  const fallback = async (hostname: string) => {
    asked.push(hostname);
    const answer = hosts[hostname];
    if (answer) return answer;
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  };
  const dns = createDnsCache({ resolver, clock, fallback, fallbackTtlMs: 10_000 });

  expect(await dns.lookupAll('intranet-name')).toEqual(['93.184.216.36']);
  clock.advance(9_999);
  expect(await dns.lookupAll('intranet-name')).toEqual(['93.184.216.36']);
  expect(asked).toEqual(['intranet-name']);
  clock.advance(1);
  await dns.lookupAll('intranet-name');
  expect(asked).toEqual(['intranet-name', 'intranet-name']);

  await expect(dns.lookupAll('nowhere.example')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  await expect(dns.lookupAll('nowhere.example')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  expect(asked.filter((h) => h === 'nowhere.example')).toHaveLength(2);
  expect(queries.filter((q) => q.endsWith('nowhere.example'))).toHaveLength(4);
});

test('localhost names never go to DNS; IP addresses are returned as they are', async () => {
  const { resolver, queries } = fakeResolver({ localhost: { v4: [{ address: '93.184.216.34', ttl: 30 }] } });
  const dns = createDnsCache({ resolver, clock: manualClock(), fallback: async () => ['127.0.0.1'] });
  expect(await dns.lookupAll('localhost')).toEqual(['127.0.0.1']);
  expect(await dns.lookupAll('api.localhost')).toEqual(['127.0.0.1']);
  expect(await dns.lookupAll('10.0.0.1')).toEqual(['10.0.0.1']);
  expect(await dns.lookupAll('::7f00:1')).toEqual(['::7f00:1']);
  expect(queries).toEqual([]);
});

test('at most maxEntries names are kept, the oldest dropped first', async () => {
  const { resolver, queries } = fakeResolver({
    'a.example': { v4: [{ address: '93.184.216.1', ttl: 60 }] },
    'b.example': { v4: [{ address: '93.184.216.2', ttl: 60 }] },
    'c.example': { v4: [{ address: '93.184.216.3', ttl: 60 }] },
  });
  const dns = createDnsCache({ resolver, clock: manualClock(), fallback: noFallback, maxEntries: 2 });
  for (const host of ['a.example', 'b.example', 'c.example', 'c.example', 'b.example', 'a.example']) await dns.lookupAll(host);
  expect(queries.filter((q) => q.startsWith('v4:'))).toEqual(['v4:a.example', 'v4:b.example', 'v4:c.example', 'v4:a.example']);
});

test('a cached answer cannot be changed by a caller', async () => {
  const { resolver } = fakeResolver({ 'hooks.example': { v4: [{ address: '93.184.216.34', ttl: 30 }] } });
  const dns = createDnsCache({ resolver, clock: manualClock(), fallback: noFallback });
  (await dns.lookupAll('hooks.example')).push('10.0.0.1');
  expect(await dns.lookupAll('hooks.example')).toEqual(['93.184.216.34']);
});

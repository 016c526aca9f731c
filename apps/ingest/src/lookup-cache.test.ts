import type { OrgSnapshot, Store } from '@postern/store';
import { LookupCache } from './lookup-cache.js';

/** A fake of the store's snapshot reads: one org per key hash (`h-<org>`), a version per org, and a log of calls. */
function fakeSnapshots() {
  const versions = new Map<string, number>();
  const revoked = new Set<string>();
  const calls: string[] = [];
  const orgSnapshots = {
    async orgIdOfApiKey(keyHash: string) {
      calls.push(`orgIdOf ${keyHash}`);
      return revoked.has(keyHash) ? null : keyHash.replace(/^h-/, '');
    },
    async version(orgId: string) {
      calls.push(`version ${orgId}`);
      return versions.get(orgId) ?? 0;
    },
    async read(orgId: string, keyHash: string): Promise<OrgSnapshot> {
      calls.push(`read ${orgId}`);
      const key = { id: `key_${orgId}`, orgId, name: 'k', scopes: [], prefix: 'p', keyHash, createdAt: 0, revokedAt: null };
      return {
        version: versions.get(orgId) ?? 0,
        org: { id: orgId, name: orgId, status: 'active', createdAt: 0 },
        apiKey: revoked.has(keyHash) ? null : { orgId, key },
        endpoints: [],
      };
    },
  };
  return { store: { orgSnapshots } as unknown as Pick<Store, 'orgSnapshots'>, versions, revoked, calls };
}

test('a cached key costs one version read; a new version, the TTL or a revocation makes it read again', async () => {
  const fake = fakeSnapshots();
  let now = 1_000;
  const cache = new LookupCache({ store: fake.store, clock: { now: () => now } }, { ttlMs: 5_000, maxEntries: 10 });

  expect((await cache.lookup('h-org1'))?.orgId).toBe('org1');
  expect(fake.calls.splice(0)).toEqual(['orgIdOf h-org1', 'read org1']);
  await cache.lookup('h-org1');
  expect(fake.calls.splice(0)).toEqual(['version org1']);

  fake.versions.set('org1', 1);
  expect((await cache.lookup('h-org1'))?.version).toBe(1);
  expect(fake.calls.splice(0)).toEqual(['version org1', 'read org1']);

  now += 5_000;
  await cache.lookup('h-org1');
  expect(fake.calls.splice(0)).toEqual(['read org1']);

  fake.revoked.add('h-org1');
  fake.versions.set('org1', 2);
  expect(await cache.lookup('h-org1')).toBeNull();
  expect(await cache.lookup('h-org1')).toBeNull();
  expect(cache.size).toBe(0);
});

test('the cache holds at most maxEntries keys, dropping the one loaded longest ago', async () => {
  const fake = fakeSnapshots();
  const cache = new LookupCache({ store: fake.store, clock: { now: () => 0 } }, { ttlMs: 60_000, maxEntries: 2 });
  for (const org of ['a', 'b', 'c']) await cache.lookup(`h-${org}`);
  expect(cache.size).toBe(2);
  fake.calls.length = 0;
  await cache.lookup('h-c');
  await cache.lookup('h-a');
  expect(fake.calls).toEqual(['version c', 'orgIdOf h-a', 'read a']);
});

test('ttlMs 0 caches nothing', async () => {
  const fake = fakeSnapshots();
  const cache = new LookupCache({ store: fake.store, clock: { now: () => 0 } }, { ttlMs: 0, maxEntries: 10 });
  await cache.lookup('h-a');
  await cache.lookup('h-a');
  expect(cache.size).toBe(0);
  expect(fake.calls).toEqual(['orgIdOf h-a', 'read a', 'orgIdOf h-a', 'read a']);
});

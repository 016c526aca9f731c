import type { Redis } from 'ioredis';
import { hashApiKey } from '@postern/ingest';
import { TEST_ADMIN_TOKEN, startPostern, type TestPostern } from '../support/postern.js';
import { clusterMasters, crossSlotErrors, describeOnCluster } from './cluster-support.js';

/**
 * Portal sessions (issue 15, item 4) on a real three-master Redis Cluster: minted, used, revoked
 * and read back for several orgs, with the token lookups and the records in their own slots, and
 * not one command refused with CROSSSLOT.
 */

describeOnCluster('portal sessions on Redis Cluster', () => {
  let postern: TestPostern;
  let masters: Redis[];
  let crossSlotBefore: number;

  beforeAll(async () => {
    masters = await clusterMasters();
    crossSlotBefore = await crossSlotErrors(masters);
    postern = await startPostern({ cluster: true, sender: false });
  });
  afterAll(async () => {
    await postern?.close();
    for (const m of masters ?? []) m.disconnect();
  });

  test('each org’s session works for that org only, is revoked at once, and no command crosses slots', async () => {
    for (let i = 0; i < 6; i++) {
      const org = await postern.createOrg(`portal-${i}`);
      await postern.createEndpoint(org.apiKey, { url: `http://127.0.0.1:9/org-${i}` });
      const minted = await postern.api('POST', `/v1/orgs/${org.id}/portal-sessions`, { key: TEST_ADMIN_TOKEN, body: { ttlSeconds: 120 } });
      expect(minted.status).toBe(201);
      const { token, id } = minted.body as { token: string; id: string };
      const list = await postern.api('GET', '/v1/endpoints', { key: token });
      expect(list.body.data.map((e: { url: string }) => e.url)).toEqual([`http://127.0.0.1:9/org-${i}`]);
      expect(await postern.redis.pttl(postern.store.keys.portalSessionByToken(hashApiKey(token)))).toBeGreaterThan(120_000);
      expect((await postern.api('DELETE', `/v1/orgs/${org.id}/portal-sessions/${id}`, { key: TEST_ADMIN_TOKEN })).status).toBe(200);
      const refused = await postern.api('GET', '/v1/endpoints', { key: token });
      expect({ status: refused.status, code: refused.body.error.code }).toEqual({ status: 401, code: 'session_revoked' });
      expect((await postern.api('GET', `/v1/orgs/${org.id}/portal-sessions/${id}`, { key: TEST_ADMIN_TOKEN })).body.revokedAt).toEqual(expect.any(String));
    }
    expect(await crossSlotErrors(masters)).toBe(crossSlotBefore);
  });
});

import { apiClient } from '../test/support/api-client.js';
import { TEST_ADMIN_TOKEN } from '../test/support/postern.js';
import { killAllApps, spawnIngest } from '../test/faults/support/app-process.js';
const ingest = await spawnIngest({ REDIS_URL: 'redis://127.0.0.1:6379', REDIS_PREFIX: 'probe:rate' });
const api = apiClient(ingest.baseUrl);
const org = (await api('POST', '/v1/orgs', { key: TEST_ADMIN_TOKEN, body: { name: 'x' } })).body;
await api('POST', '/v1/endpoints', { key: org.apiKey, body: { url: 'http://127.0.0.1:9/x', policy: { concurrency: { perEndpoint: 4, perOrg: 20 } } } });
for (const lanes of [1, 4, 16]) {
  const t = Date.now(); let n = 0;
  await Promise.all(Array.from({ length: lanes }, async () => { while (n < 600) { n++; const r = await api('POST', '/v1/events', { key: org.apiKey, body: { type: 'a', data: {} } }); if (r.status !== 202) throw new Error(String(r.status)); } }));
  console.log(`lanes ${lanes}: ${(600 / ((Date.now() - t) / 1000)).toFixed(0)} events/s`);
}
await killAllApps();

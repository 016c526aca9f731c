import { apiClient } from '../test/support/api-client.js';
const api = apiClient(process.env.BASE!);
const org = (await api('POST', '/v1/orgs', { key: 'test-admin-token-0123456789', body: { name: 'x' } })).body;
await api('POST', '/v1/endpoints', { key: org.apiKey, body: { url: 'http://127.0.0.1:9/x', policy: { concurrency: { perEndpoint: 4, perOrg: 20 } } } });
const t = Date.now();
for (let i = 0; i < 300; i++) { const r = await api('POST', '/v1/events', { key: org.apiKey, body: { type: 'a', data: {} } }); if (r.status !== 202) throw new Error(String(r.status)); }
console.log(`sequential: ${((Date.now() - t) / 300).toFixed(1)} ms/event`);

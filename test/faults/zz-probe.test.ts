import { startPostern, fastPolicy } from '../support/postern.js';
import { postEvents } from './support/load.js';
test('probe', async () => {
  const postern = await startPostern({ sender: false });
  const { apiKey } = await postern.createOrg();
  for (let i = 0; i < 10; i++) await postern.createEndpoint(apiKey, { url: `http://127.0.0.1:9/ep${i}`, policy: fastPolicy(3, 20) });
  const t0 = Date.now();
  await postEvents(postern.api, apiKey, 200, 10);
  console.log(`DEBUG posted 200 in ${Date.now() - t0}`);
  await postern.close();
}, 60000);

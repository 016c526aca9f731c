import { startPostern, fastPolicy, TEST_ADMIN_TOKEN, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

let postern: TestPostern;
let receiver: TestReceiver;

beforeAll(async () => {
  postern = await startPostern();
  receiver = await startReceiver(() => 500);
});
afterAll(async () => {
  await postern.close();
  await receiver.close();
});

test('a suspended org: its keys get 403 org_suspended and its queued deliveries end as the policy says, sending nothing more', async () => {
  const org = await postern.createOrg('suspended');
  const endpoint = await postern.createEndpoint(org.apiKey, { url: receiver.url, policy: fastPolicy(3, 300, { onEndpointInactive: 'cancel' }) });
  const posted = await postern.api('POST', '/v1/events', { key: org.apiKey, body: { type: 'a.b', data: 1 } });
  await receiver.waitForRequests(1);

  expect((await postern.api('POST', `/v1/orgs/${org.id}/suspend`, { key: 'wrong-token-wrong-token' })).status).toBe(401);
  const suspended = await postern.api('POST', `/v1/orgs/${org.id}/suspend`, { key: TEST_ADMIN_TOKEN });
  expect(suspended.body).toMatchObject({ id: org.id, status: 'suspended' });
  const refused = await postern.api('GET', `/v1/endpoints/${endpoint.id}`, { key: org.apiKey });
  expect(refused.status).toBe(403);
  expect(refused.body.error.code).toBe('org_suspended');

  const deliveryId = posted.body.deliveries[0].id as string;
  const d = await waitUntil('delivery cancelled', async () => {
    const row = await postern.store.deliveries.get(org.id, deliveryId);
    return row?.status === 'cancelled' ? row : undefined;
  });
  expect(d.cancelReason).toBe('org_suspended');
  expect(receiver.requests).toHaveLength(1);

  expect((await postern.api('POST', `/v1/orgs/${org.id}/reactivate`, { key: TEST_ADMIN_TOKEN })).body.status).toBe('active');
  expect((await postern.api('GET', `/v1/endpoints/${endpoint.id}`, { key: org.apiKey })).status).toBe(200);
  expect((await postern.api('POST', '/v1/orgs/org_nope/suspend', { key: TEST_ADMIN_TOKEN })).status).toBe(404);
});

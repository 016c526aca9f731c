import { startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Deliveries held while their endpoint was paused have no attempt coming: deleting the endpoint
 * ends them at once (`cancelled`, `endpoint_deleted`, no longer held), not when the reconciler's
 * grace (5 minutes here, as in production) runs out.
 */

let postern: TestPostern;
let receiver: TestReceiver;
let apiKey: string;

beforeAll(async () => {
  postern = await startPostern();
  receiver = await startReceiver(() => 200);
  ({ apiKey } = await postern.createOrg());
});
afterAll(async () => {
  await postern.close();
  await receiver.close();
});

test('deleting a paused endpoint cancels its held deliveries at once', async () => {
  const endpoint = await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: ['held.deleted'], policy: 'standard' });
  expect((await postern.api('POST', `/v1/endpoints/${endpoint.id}/pause`, { key: apiKey })).status).toBe(200);
  const ids: string[] = [];
  for (let n = 0; n < 3; n++) {
    const r = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'held.deleted', data: { n } } });
    expect(r.status).toBe(202);
    ids.push(r.body.deliveries[0].id as string);
  }
  const get = async (id: string) => (await postern.api('GET', `/v1/deliveries/${id}`, { key: apiKey })).body;
  await waitUntil('every delivery held', async () => ((await Promise.all(ids.map(get))).every((d) => d.held && d.status === 'pending') ? true : undefined));

  expect((await postern.api('DELETE', `/v1/endpoints/${endpoint.id}`, { key: apiKey })).status).toBe(204);
  const ended = await waitUntil('every held delivery cancelled', async () => {
    const all = await Promise.all(ids.map(get));
    return all.every((d) => d.status === 'cancelled') ? all : undefined;
  });
  for (const d of ended) expect(d).toMatchObject({ status: 'cancelled', cancelReason: 'endpoint_deleted', held: false, attemptCount: 0 });
  expect(receiver.requests).toHaveLength(0);
});

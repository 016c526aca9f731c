import { startPostern, type TestPostern } from '../support/postern.js';

/**
 * Fan-out limits: an org has at most MAX_ENDPOINTS_PER_ORG endpoints (409 endpoint_limit_reached
 * beyond it), and one request creates at most MAX_DELIVERIES_PER_REQUEST deliveries (422
 * too_many_deliveries for the event that would pass it; in a batch, that event alone).
 */

let postern: TestPostern;
let key: string;

beforeAll(async () => {
  postern = await startPostern({ sender: false, maxEndpointsPerOrg: 6, maxDeliveriesPerRequest: 5 });
  key = (await postern.createOrg('fan-out-limits')).apiKey;
});

afterAll(async () => {
  await postern?.close();
});

const api = (method: string, path: string, body?: unknown) => postern.api(method, path, { key, body });
const createEndpoint = (eventTypes: string[]) => api('POST', '/v1/endpoints', { url: 'http://127.0.0.1:9/hook', eventTypes });

test('an org past MAX_ENDPOINTS_PER_ORG gets 409 endpoint_limit_reached; deleting one makes room', async () => {
  const ids: string[] = [];
  // Two endpoints take every type, four only x.big: x.big fans out to 6, x.small to 2.
  for (const eventTypes of [['*'], ['*'], ['x.big'], ['x.big'], ['x.big'], ['x.big']]) {
    const r = await createEndpoint(eventTypes);
    expect(r.status).toBe(201);
    ids.push(r.body.id);
  }
  const over = await createEndpoint(['*']);
  expect([over.status, over.body.error.code]).toEqual([409, 'endpoint_limit_reached']);
  expect(over.body.error.message).toBe('the org has 6 endpoints, the most it may have (MAX_ENDPOINTS_PER_ORG); delete one first');
  expect((await api('GET', '/v1/endpoints')).body.data).toHaveLength(6);
  expect((await api('DELETE', `/v1/endpoints/${ids.pop()}`)).status).toBe(204);
  const again = await createEndpoint(['x.big']);
  expect(again.status).toBe(201);
});

test('an event whose fan-out is over MAX_DELIVERIES_PER_REQUEST is 422 too_many_deliveries and nothing of it is stored', async () => {
  const big = await api('POST', '/v1/events', { type: 'x.big', data: { n: 1 } });
  expect([big.status, big.body.error.code]).toEqual([422, 'too_many_deliveries']);
  expect(big.body.error.message).toMatch(/^the event would create 6 deliveries; one request creates at most 5 \(MAX_DELIVERIES_PER_REQUEST\)/);
  expect((await api('GET', '/v1/events?type=x.big')).body.data).toEqual([]);
  const small = await api('POST', '/v1/events', { type: 'x.small', data: { n: 1 } });
  expect([small.status, small.body.deliveries.length]).toEqual([202, 2]);
});

test("a batch counts its events' deliveries in order; the event that would pass the limit is refused alone", async () => {
  const r = await api('POST', '/v1/events/batch', {
    events: [
      { type: 'x.small', data: { i: 0 } },
      { type: 'x.big', data: { i: 1 } },
      { type: 'x.small', data: { i: 2 } },
      { type: 'x.small', data: { i: 3 } },
    ],
  });
  expect(r.status).toBe(207);
  expect(r.body.results.map((x: { status: number; error?: { code: string } }) => [x.status, x.error?.code])).toEqual([
    [202, undefined],
    [422, 'too_many_deliveries'],
    [202, undefined],
    [422, 'too_many_deliveries'],
  ]);
  expect(r.body.results[3].error.message).toMatch(/^the event would create 2 deliveries on top of the 4 of this batch's earlier events; one request creates at most 5 \(MAX_DELIVERIES_PER_REQUEST\): send it in another request/);
  const stored = (await api('GET', '/v1/events?type=x.small')).body.data;
  expect(stored).toHaveLength(3);
});

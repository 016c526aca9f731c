import { startPostern, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Pause and resume an endpoint over and over while events arrive (found by a new user: a resume
 * answered 500 when a held delivery's job left the delayed state between the look and the promote,
 * and the held deliveries after it stayed without a job until the reconciler came by). Every
 * resume must answer 200 and, once the endpoint stays active, every event must arrive without
 * the reconciler's help (it is off here).
 */

let postern: TestPostern;
let receiver: TestReceiver;
let apiKey: string;

beforeAll(async () => {
  postern = await startPostern({ senderConcurrency: 10 });
  apiKey = (await postern.createOrg()).apiKey;
  receiver = await startReceiver(() => 200);
});
afterAll(async () => {
  await postern.close();
  await receiver.close();
});

test('resume answers 200 under traffic, and every held delivery is sent once the endpoint stays active', async () => {
  const endpoint = await postern.createEndpoint(apiKey, { url: receiver.url, eventTypes: ['toggle.x'], policy: { preset: 'standard', maxAttempts: 3, schedule: { kind: 'fixed', waitsMs: [50, 50] }, jitterRatio: 0 } });
  const EVENTS = 200;
  let posted = 0;
  const statuses: number[] = [];
  const producers = Array.from({ length: 8 }, async () => {
    while (posted < EVENTS) {
      posted += 1;
      const r = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'toggle.x', data: { n: posted } } });
      expect(r.status).toBe(202);
    }
  });
  const toggling = (async () => {
    for (let i = 0; i < 25; i++) {
      statuses.push((await postern.api('POST', `/v1/endpoints/${endpoint.id}/pause`, { key: apiKey })).status);
      statuses.push((await postern.api('POST', `/v1/endpoints/${endpoint.id}/resume`, { key: apiKey })).status);
    }
  })();
  await Promise.all([...producers, toggling]);
  expect(statuses.filter((s) => s !== 200)).toEqual([]);
  expect((await postern.api('GET', `/v1/endpoints/${endpoint.id}`, { key: apiKey })).body.status).toBe('active');

  await waitUntil(
    `all ${EVENTS} events delivered`,
    async () => {
      const r = await postern.api('GET', `/v1/endpoints/${endpoint.id}/deliveries?status=succeeded&limit=100`, { key: apiKey });
      let count = r.body.data.length as number;
      let cursor = r.body.nextCursor as string | null;
      while (cursor) {
        const next = await postern.api('GET', `/v1/endpoints/${endpoint.id}/deliveries?status=succeeded&limit=100&cursor=${cursor}`, { key: apiKey });
        count += next.body.data.length as number;
        cursor = next.body.nextCursor as string | null;
      }
      return count === EVENTS;
    },
    30_000,
    100,
  );
});

import { startPostern, fastPolicy, type TestPostern } from '../support/postern.js';
import { startReceiver, type TestReceiver } from '../support/receiver.js';
import { waitUntil } from '../support/wait-until.js';

/**
 * Adaptive pacing: a receiver that accepts 10 requests a second and answers 429 with
 * `Retry-After: 1` above that. With `pacing: "adaptive"` every event arrives and, after the first
 * seconds, far fewer requests get 429 than without it. The shares themselves depend on the
 * machine (a receiver whose process is held up counts a burst of late arrivals in one second), so
 * the test compares the two runs; `npm run bench:pace` reports the absolute figures.
 */

const EVENTS = 60;
const ACCEPTED_PER_SECOND = 10;
/** The first seconds, while pacing finds the receiver's rate, are not counted in the share. */
const SETTLE_MS = 3000;

let postern: TestPostern;
const receivers: TestReceiver[] = [];

beforeAll(async () => {
  postern = await startPostern({ senderConcurrency: 20 });
});
afterAll(async () => {
  await postern.close();
  for (const r of receivers) await r.close();
});

/** A receiver that takes at most 10 requests in any second and answers 429 + Retry-After: 1 to the rest. */
async function limitedReceiver(): Promise<{ receiver: TestReceiver; answers: { at: number; status: number; i: number }[] }> {
  const accepted: number[] = [];
  const answers: { at: number; status: number; i: number }[] = [];
  const receiver = await startReceiver((req, _n, res) => {
    const now = Date.now();
    while (accepted.length > 0 && accepted[0]! <= now - 1000) accepted.shift();
    const i = (JSON.parse(req.body) as { data: { i: number } }).data.i;
    if (accepted.length >= ACCEPTED_PER_SECOND) {
      answers.push({ at: now, status: 429, i });
      res.statusCode = 429;
      res.setHeader('retry-after', '1');
      res.end('slow down');
      return 'handled';
    }
    accepted.push(now);
    answers.push({ at: now, status: 200, i });
    return 200;
  });
  receivers.push(receiver);
  return { receiver, answers };
}

async function run(pacing: 'adaptive' | 'none'): Promise<{ share: number; shareAll: number; requests: number; seconds: number; endpoint: any }> {
  const { apiKey, id: orgId } = await postern.createOrg();
  const { receiver, answers } = await limitedReceiver();
  const ep = await postern.createEndpoint(apiKey, { url: receiver.url, policy: fastPolicy(40, 200, { pacing, retryAfter: 'honour', concurrency: { perEndpoint: 4, perOrg: 20 } }) });
  const ids: string[] = [];
  for (let i = 0; i < EVENTS; i++) {
    const r = await postern.api('POST', '/v1/events', { key: apiKey, body: { type: 'pace.test', data: { i } } });
    ids.push(r.body.deliveries[0].id as string);
  }
  await waitUntil('every delivery succeeded', async () => (await postern.store.deliveries.getMany(orgId, ids)).every((d) => d.status === 'succeeded'), 60_000, 100);
  const start = answers[0]!.at;
  const later = answers.filter((a) => a.at - start >= SETTLE_MS);
  const share = later.filter((a) => a.status === 429).length / Math.max(1, later.length);
  const shareAll = answers.filter((a) => a.status === 429).length / answers.length;
  // Every event arrived (and was accepted once at least).
  expect(new Set(answers.filter((a) => a.status === 200).map((a) => a.i)).size).toBe(EVENTS);
  const endpoint = (await postern.api('GET', `/v1/endpoints/${ep.id}`, { key: apiKey })).body;
  return { share, shareAll, requests: answers.length, seconds: (answers[answers.length - 1]!.at - start) / 1000, endpoint };
}

test('adaptive pacing: every event arrives, and after the first seconds at most half as many requests get 429 as without it', async () => {
  const paced = await run('adaptive');
  const unpaced = await run('none');
  const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
  console.log(
    `429 share after the first ${SETTLE_MS / 1000} s — adaptive pacing: ${pct(paced.share)} (${pct(paced.shareAll)} overall, ${paced.requests} requests, ${paced.seconds.toFixed(1)} s); ` +
      `no pacing: ${pct(unpaced.share)} (${pct(unpaced.shareAll)} overall, ${unpaced.requests} requests, ${unpaced.seconds.toFixed(1)} s)`,
  );
  // Seen: 0–11 % with pacing against 60–70 % without.
  expect(paced.share).toBeLessThanOrEqual(unpaced.share / 2);
  // The pace shows on the endpoint: cut below the policy's 4 slots at some point, and a number.
  expect(paced.endpoint.policy.pacing).toBe('adaptive');
  expect(paced.endpoint.pace).toEqual({ perSecond: expect.any(Number), concurrency: expect.any(Number) });
  expect(paced.endpoint).toHaveProperty('pausedUntil');
  expect(unpaced.endpoint.pace).toBeNull();
  const metrics = await postern.senderRegistry.metrics();
  expect(metrics).toMatch(/^postern_pace_cuts_total [1-9]/m);
  expect(metrics).toMatch(new RegExp(`^postern_endpoint_pace_concurrency\\{endpoint="${paced.endpoint.id}"\\} \\d`, 'm'));
}, 120_000);

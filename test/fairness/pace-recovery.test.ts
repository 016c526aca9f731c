import { startPostern, type TestPostern } from '../support/postern.js';
import { createServer } from 'node:net';
import { noAnswer, runPaceRecovery } from '../support/pace-recovery.js';

/**
 * Adaptive pacing through an outage and back: a receiver that answers 429 to everything for the
 * first seconds, then takes 100 requests in any second (429 above that, no Retry-After), while
 * events arrive at 100/s, 4 at a time (`test/support/pace-recovery.ts`).
 *
 * Checked here, whatever the machine's speed: every event arrives; the pace Postern stores climbs
 * back to 60 % of the receiver's rate within seconds of its recovery (the law doubles it each second
 * of successes, from the floor in 8 s); the backlog leaves at the pace, not in one burst. How fast
 * the receiver actually sees its rate again, and the share of 429s, depend on how fast this machine
 * can send: they are measured at full size by `npm run bench:pace` (docs/benchmarks.md).
 */

let postern: TestPostern;

beforeAll(async () => {
  postern = await startPostern({ senderConcurrency: 20 });
});
afterAll(async () => {
  await postern.close();
});

/** The law climbs from the 0.5/s floor to 60/s in 7 doublings, one a second of successes; twice that. */
const PACE_BACK_WITHIN_MS = 15_000;
const ACCEPTED_PER_SECOND = 100;

test('the producer knows a reset connection in this realm: fetch\'s error is sent again, an HTTP answer is not', async () => {
  // A server that resets each connection once a request arrives, as a closed kept-alive socket does.
  const server = createServer((socket) => socket.once('data', () => socket.resetAndDestroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  try {
    const err = await fetch(`http://127.0.0.1:${(server.address() as { port: number }).port}/`, { method: 'POST', body: '{}' }).catch((e: unknown) => e);
    expect(noAnswer(err)).toBe(true);
    expect(noAnswer(new Error('event 1: 500'))).toBe(false);
  } finally {
    server.close();
  }
});

test('after an outage the stored pace comes back to the receiver\'s rate within seconds, and the backlog leaves at the pace', async () => {
  const run = await runPaceRecovery(postern, { events: 1000, postedPerSecond: 100, outageMs: 3000, acceptedPerSecond: ACCEPTED_PER_SECOND, deadlineMs: 120_000 });
  console.log(run.line);

  // Cut during the outage, then back: the stored pace stood low after the outage began and is at
  // 60 % of the receiver's rate (or unbounded) again within the law's time.
  expect(run.paces.some((p) => p.perSecond !== null && p.perSecond < ACCEPTED_PER_SECOND * 0.6)).toBe(true);
  expect(run.paceBackAt60).not.toBeNull();
  expect(run.paceBackAt60!).toBeLessThanOrEqual(PACE_BACK_WITHIN_MS);
  // The backlog goes out at the pace, not in one burst: the pace climbs at most ×2 a second, so it
  // overshoots the receiver's rate by at most about half before the first 429 of that second cuts it.
  expect(run.maxPerSecond).toBeLessThanOrEqual(ACCEPTED_PER_SECOND * 1.5);
}, 180_000);

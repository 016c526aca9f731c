import { gcraStep } from './pace.js';
import { RATE_SEND_LAG_MS, allowedLatenessMs, isTurnStale, rateIntervalMs } from './rate-limit.js';

test('turns are spaced for one second plus the sending lag', () => {
  expect(rateIntervalMs({ perSecond: 20 })).toBeCloseTo((1000 + RATE_SEND_LAG_MS) / 20);
  expect(allowedLatenessMs({ perSecond: 20 })).toBeCloseTo(20);
  expect(allowedLatenessMs({ perSecond: 0.1 })).toBeCloseTo(9245);
  expect(allowedLatenessMs({ perSecond: 7.5 })).toBeCloseTo((1025 * 8) / 7.5 - 1005);
  expect(isTurnStale(1000, 1020, { perSecond: 20 })).toBe(false);
  expect(isTurnStale(1000, 1021, { perSecond: 20 })).toBe(true);
});

test.each([
  [20, 5],
  [20, 0],
  [7.5, 2],
  [100, 10],
  [0.1, 0],
  [0.5, 1],
])('perSecond %p, burst %p: requests sent up to their allowed lateness after their turns never exceed ceil(perSecond) + burst in any 1-s window', (perSecond, burst) => {
  // Greedy senders: every ms, as many turns as the limiter grants (spaced as claim-attempt.lua
  // spaces them), each sent at the worst moment: its turn, or as late as it may go (plus the
  // margin it keeps for leaving the process).
  const late = allowedLatenessMs({ perSecond }) + 5;
  const intervalMs = rateIntervalMs({ perSecond });
  const rate = { perSecond: 1000 / intervalMs, burst };
  let tat = 0;
  const sends: number[] = [];
  for (let now = 0; now < 60_000; now++) {
    for (;;) {
      const step = gcraStep(tat, now, rate);
      if (!step.allowed) break;
      tat = step.tatMs;
      sends.push(now + (sends.length % 2 === 0 ? 0 : Math.floor(late)));
    }
  }
  sends.sort((a, b) => a - b);
  let most = 0;
  for (let i = 0, j = 0; i < sends.length; i++) {
    while (sends[i]! - sends[j]! >= 1000) j++;
    most = Math.max(most, i - j + 1);
  }
  expect(most).toBeLessThanOrEqual(Math.ceil(perSecond) + burst);
  // And the limiter is not much tighter than that: at most the lag's share under the rate.
  expect(most).toBeGreaterThanOrEqual(Math.max(1, Math.floor(rate.perSecond)) + burst - 1);
});

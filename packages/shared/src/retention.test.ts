import { finishedExpiresAt } from './retention.js';

const DAY_MS = 86_400_000;

test('{days}: expires that many days after the finish, by the clock given', () => {
  expect(finishedExpiresAt({ days: 30 }, 1_000)).toBe(1_000 + 30 * DAY_MS);
  expect(finishedExpiresAt({ days: 1 }, 0)).toBe(DAY_MS);
});

test('{lastPerEndpoint}: no expiry, a count trim removes it', () => {
  expect(finishedExpiresAt({ lastPerEndpoint: 100 }, 1_000)).toBe('');
});

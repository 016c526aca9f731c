import { RECENT_FAILURES_WINDOW_MS, RecentFailures } from './recent-failures.js';

const T0 = 1_800_000_000_000;

test('the endpoints failing most in the window, most first, at most `limit`', () => {
  const failures = new RecentFailures();
  for (let i = 0; i < 5; i++) failures.record('org_a', 'ep_a', T0 + i);
  for (let i = 0; i < 3; i++) failures.record('org_b', 'ep_b', T0 + 60_000 + i);
  failures.record('org_c', 'ep_c', T0 + 120_000);
  expect(failures.top(2, T0 + 130_000)).toEqual([
    { orgId: 'org_a', endpointId: 'ep_a', failedAttempts: 5 },
    { orgId: 'org_b', endpointId: 'ep_b', failedAttempts: 3 },
  ]);
});

test('failures older than the window stop counting, and an endpoint with none left is forgotten', () => {
  const failures = new RecentFailures();
  failures.record('org_a', 'ep_a', T0);
  failures.record('org_a', 'ep_a', T0 + 10 * 60_000);
  expect(failures.top(10, T0 + RECENT_FAILURES_WINDOW_MS - 1)).toEqual([{ orgId: 'org_a', endpointId: 'ep_a', failedAttempts: 2 }]);
  expect(failures.top(10, T0 + RECENT_FAILURES_WINDOW_MS + 60_000)).toEqual([{ orgId: 'org_a', endpointId: 'ep_a', failedAttempts: 1 }]);
  expect(failures.top(10, T0 + 10 * 60_000 + RECENT_FAILURES_WINDOW_MS + 60_000)).toEqual([]);
});

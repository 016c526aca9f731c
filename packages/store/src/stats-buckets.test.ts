import { createKeySchema } from './keys.js';
import { attemptStatsIncrements, statsHourStartMs } from './stats-buckets.js';

const keys = createKeySchema('t');
const hour = Date.UTC(2026, 11, 2, 3, 0, 0);
const ids = { orgId: 'org_1', endpointId: 'ep_1' };

test('a success counts under <minute>:ok in the hour hash of its endpoint and of its org', () => {
  const nowMs = hour + 12 * 60_000 + 30_000;
  expect(attemptStatsIncrements(keys, { ...ids, nextStatus: 'succeeded', error: null, nowMs })).toEqual([
    { key: `t:{o:org_1}:stats:endpoint:ep_1:${hour}`, field: '12:ok' },
    { key: `t:{o:org_1}:stats:org:org_1:${hour}`, field: '12:ok' },
  ]);
});

test('a failure counts under <minute>:fail and under its error code, whether the delivery retries or failed', () => {
  const nowMs = hour + 59 * 60_000 + 59_999;
  for (const nextStatus of ['pending', 'failed'] as const) {
    expect(attemptStatsIncrements(keys, { ...ids, nextStatus, error: 'internal:check_timeout', nowMs })).toEqual([
      { key: keys.statsHour('org_1', 'endpoint', 'ep_1', hour), field: '59:fail' },
      { key: keys.statsHour('org_1', 'endpoint', 'ep_1', hour), field: '59:e:internal:check_timeout' },
      { key: keys.statsHour('org_1', 'org', 'org_1', hour), field: '59:fail' },
      { key: keys.statsHour('org_1', 'org', 'org_1', hour), field: '59:e:internal:check_timeout' },
    ]);
  }
});

test('the first millisecond of an hour is minute 0 of the next hash', () => {
  const next = hour + 3_600_000;
  expect(statsHourStartMs(next - 1)).toBe(hour);
  expect(statsHourStartMs(next)).toBe(next);
  expect(attemptStatsIncrements(keys, { ...ids, nextStatus: 'succeeded', error: null, nowMs: next })[0]).toEqual({ key: keys.statsHour('org_1', 'endpoint', 'ep_1', next), field: '0:ok' });
});

test('an attempt cancelled before anything was sent counts nowhere', () => {
  expect(attemptStatsIncrements(keys, { ...ids, nextStatus: 'cancelled', error: null, nowMs: hour })).toEqual([]);
});

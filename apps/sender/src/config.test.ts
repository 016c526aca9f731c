import { loadSenderConfig } from './config.js';

const base = { REDIS_URL: 'redis://127.0.0.1:6379' };

test('the heartbeat defaults to a beat a second and a takeover after 5 s', () => {
  const config = loadSenderConfig(base);
  expect(config.HEARTBEAT_INTERVAL_MS).toBe(1000);
  expect(config.TAKEOVER_AFTER_MS).toBe(5000);
});

test('a takeover lapse of two beats or less is refused, naming the setting; heartbeat 0 switches the check off', () => {
  expect(() => loadSenderConfig({ ...base, HEARTBEAT_INTERVAL_MS: '2000', TAKEOVER_AFTER_MS: '4000' })).toThrow('TAKEOVER_AFTER_MS: must be more than twice HEARTBEAT_INTERVAL_MS');
  expect(loadSenderConfig({ ...base, HEARTBEAT_INTERVAL_MS: '0', TAKEOVER_AFTER_MS: '1000' }).HEARTBEAT_INTERVAL_MS).toBe(0);
});

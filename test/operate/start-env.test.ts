import { DEVELOPMENT_ALLOWED_ADDRESSES, startEnvironment } from '../../scripts/start-env.mjs';

/**
 * Issue 11 item 3: under `npm start`, only an unset `ALLOWED_ADDRESSES` gets the development
 * default (loopback); `ALLOWED_ADDRESSES=` (set, empty) means nothing private is allowed.
 */

test('an unset ALLOWED_ADDRESSES gets loopback in development', () => {
  expect(startEnvironment({}).ALLOWED_ADDRESSES).toBe(DEVELOPMENT_ALLOWED_ADDRESSES);
});

test('ALLOWED_ADDRESSES set but empty stays empty: no private address is allowed', () => {
  const env = startEnvironment({ ALLOWED_ADDRESSES: '' });
  expect(env.ALLOWED_ADDRESSES).toBe('');
  expect(env.NODE_ENV).toBe('development');
});

test('a given ALLOWED_ADDRESSES is kept, and production gets no development defaults', () => {
  expect(startEnvironment({ ALLOWED_ADDRESSES: '10.0.0.0/8' }).ALLOWED_ADDRESSES).toBe('10.0.0.0/8');
  const production = startEnvironment({ NODE_ENV: 'production' });
  expect(production.ALLOWED_ADDRESSES).toBeUndefined();
  expect(production.ADMIN_TOKEN).toBeUndefined();
});

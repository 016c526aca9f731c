import type { Redis } from 'ioredis';
import { isRedisUnreachable } from './api-error.js';

const ready = { status: 'ready' } as Redis;

test('a connection that is not ready means Redis is unreachable, whatever the error', () => {
  expect(isRedisUnreachable(new Error('anything'), { status: 'reconnecting' } as Redis)).toBe(true);
});

test('while ioredis still says ready, the error itself tells a broken connection from a bug', () => {
  // Seen in the Redis kill -9 test: the socket broke before ioredis noticed the close.
  expect(isRedisUnreachable(new Error("Stream isn't writeable and enableOfflineQueue options is false"), ready)).toBe(true);
  expect(isRedisUnreachable(new Error('Connection is closed.'), ready)).toBe(true);
  // Seen in the cluster soak: a read in flight when a failover closed its node's connection.
  expect(isRedisUnreachable(Object.assign(new Error('Command aborted due to connection close'), { name: 'AbortError' }), ready)).toBe(true);
  expect(isRedisUnreachable(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }), ready)).toBe(true);
  expect(isRedisUnreachable(Object.assign(new Error('x'), { name: 'MaxRetriesPerRequestError' }), ready)).toBe(true);
  expect(isRedisUnreachable(new Error('LOADING Redis is loading the dataset in memory'), ready)).toBe(true);
  expect(isRedisUnreachable(new Error("OOM command not allowed when used memory > 'maxmemory'."), ready)).toBe(true);
  expect(isRedisUnreachable(new Error('CLUSTERDOWN The cluster is down'), ready)).toBe(true);
  expect(isRedisUnreachable(new Error('NOREPLICAS Not enough good replicas to write.'), ready)).toBe(true);
  expect(isRedisUnreachable(new Error('TRYAGAIN Multiple keys request during rehashing of slot'), ready)).toBe(true);
  expect(isRedisUnreachable(new Error("READONLY You can't write against a read only replica."), ready)).toBe(true);
  expect(isRedisUnreachable(new Error('MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to no.'), ready)).toBe(true);
  expect(isRedisUnreachable(new Error('Too many Cluster redirections. Last error: Error: connect ECONNREFUSED 127.0.0.1:7001'), ready)).toBe(true);
  expect(isRedisUnreachable(Object.assign(new Error('Failed to refresh slots cache.'), { name: 'ClusterAllFailedError' }), ready)).toBe(true);
  expect(isRedisUnreachable(new TypeError("Cannot read properties of undefined (reading 'id')"), ready)).toBe(false);
  expect(isRedisUnreachable(new Error('ERR wrong number of arguments'), ready)).toBe(false);
});

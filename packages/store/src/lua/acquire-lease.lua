-- Takes one slot of an endpoint's and its org's concurrency limits at once, or none.
-- KEYS[1] endpoint leases zset, KEYS[2] org leases zset, KEYS[3] endpoint parked list, KEYS[4] org parked list.
-- ARGV[1] lease id (the delivery id), ARGV[2] now (ms), ARGV[3] lease expiry (ms),
-- ARGV[4] per-endpoint limit, ARGV[5] per-org limit, ARGV[6] park on refusal: '1' | '0'.
-- Expired leases (a crashed sender's) are dropped first, so their slots come back. Taking a lease
-- already held by the same id renews it (a re-run of the same attempt).
-- Returns 1 when the lease is held, 0 when refused by the endpoint limit, -1 by the org limit.
local now = tonumber(ARGV[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local held = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not held then
  if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then
    if ARGV[6] == '1' then redis.call('RPUSH', KEYS[3], ARGV[1]) end
    return 0
  end
  if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then
    if ARGV[6] == '1' then redis.call('RPUSH', KEYS[4], ARGV[1]) end
    return -1
  end
end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
return 1

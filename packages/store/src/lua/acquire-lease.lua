-- Takes one slot of an endpoint's and its org's concurrency limits, and the claim on the event at
-- that endpoint, all at once or none.
-- KEYS[1] endpoint leases zset, KEYS[2] org leases zset, KEYS[3] endpoint parked zset,
-- KEYS[4] org parked zset, KEYS[5] event claim string, KEYS[6] event claim waiters set.
-- ARGV[1] lease id (the delivery id), ARGV[2] now (ms), ARGV[3] lease expiry (ms),
-- ARGV[4] per-endpoint limit, ARGV[5] per-org limit, ARGV[6] park on refusal: '1' | '0',
-- ARGV[7] park order (the delivery's createdAt, ms), ARGV[8] lease length (ms).
-- Expired leases (a crashed sender's) are dropped first, so their slots come back. Taking a lease
-- already held by the same id renews it (a re-run of the same attempt). A refused delivery is
-- parked where the release that can let it in will find it: on the claim's waiters, the endpoint's
-- or the org's parked set (oldest first; parking again keeps its place).
-- Returns 1 when held, 0 refused by the endpoint limit, -1 by the org limit, -2 by another
-- delivery's claim on the same event at this endpoint (a redelivery racing a retry).
local id = ARGV[1]
local now = tonumber(ARGV[2])
local park = ARGV[6] == '1'
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local claim = redis.call('GET', KEYS[5])
if claim and claim ~= id then
  if park then
    redis.call('SADD', KEYS[6], id)
    redis.call('PEXPIRE', KEYS[6], ARGV[8])
  end
  return -2
end
if not redis.call('ZSCORE', KEYS[1], id) then
  if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then
    if park then redis.call('ZADD', KEYS[3], 'NX', ARGV[7], id) end
    return 0
  end
  if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[5]) then
    if park then redis.call('ZADD', KEYS[4], 'NX', ARGV[7], id) end
    return -1
  end
end
redis.call('ZADD', KEYS[1], ARGV[3], id)
redis.call('ZADD', KEYS[2], ARGV[3], id)
redis.call('SET', KEYS[5], id, 'PX', ARGV[8])
redis.call('ZREM', KEYS[3], id)
redis.call('ZREM', KEYS[4], id)
redis.call('SREM', KEYS[6], id)
return 1

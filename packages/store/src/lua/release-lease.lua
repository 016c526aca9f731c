-- Gives back a lease and its event claim, and picks the parked deliveries that may now have room.
-- KEYS[1] endpoint leases zset, KEYS[2] org leases zset, KEYS[3] endpoint parked zset,
-- KEYS[4] org parked zset, KEYS[5] event claim string, KEYS[6] event claim waiters set.
-- ARGV[1] lease id (the delivery id), ARGV[2] now (ms), ARGV[3] per-endpoint limit,
-- ARGV[4] per-org limit (limits 0 = wake no parked delivery).
-- Woken, each taken off its parked set: every waiter of the claim; the oldest parked deliveries of
-- the endpoint, as many as both limits have free slots; then of the org, as many as are left free.
-- A woken delivery that finds no room after all parks again in its old place.
-- Returns {released (1 | 0), woken delivery ids...}.
local id = ARGV[1]
local now = tonumber(ARGV[2])
local released = redis.call('ZREM', KEYS[1], id) + redis.call('ZREM', KEYS[2], id)
-- A delivery settled while parked (cancelled, held) leaves no stale entry behind.
redis.call('ZREM', KEYS[3], id)
redis.call('ZREM', KEYS[4], id)
redis.call('SREM', KEYS[6], id)
local woken = {}
if redis.call('GET', KEYS[5]) == id then
  redis.call('DEL', KEYS[5])
  for _, waiter in ipairs(redis.call('SMEMBERS', KEYS[6])) do table.insert(woken, waiter) end
  redis.call('DEL', KEYS[6])
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local freeOrg = tonumber(ARGV[4]) - redis.call('ZCARD', KEYS[2])
local freeEndpoint = math.min(tonumber(ARGV[3]) - redis.call('ZCARD', KEYS[1]), freeOrg)
if freeEndpoint > 0 then
  local popped = redis.call('ZPOPMIN', KEYS[3], freeEndpoint)
  for i = 1, #popped, 2 do table.insert(woken, popped[i]) end
  freeOrg = freeOrg - #popped / 2
end
if freeOrg > 0 then
  local popped = redis.call('ZPOPMIN', KEYS[4], freeOrg)
  for i = 1, #popped, 2 do table.insert(woken, popped[i]) end
end
if released > 0 then released = 1 end
return {released, unpack(woken)}

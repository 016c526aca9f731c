-- Gives back a lease. KEYS[1] endpoint leases zset, KEYS[2] org leases zset. ARGV[1] lease id.
-- Returns 1 when a lease was held (in either set), 0 when there was none.
local removed = redis.call('ZREM', KEYS[1], ARGV[1]) + redis.call('ZREM', KEYS[2], ARGV[1])
if removed > 0 then return 1 end
return 0

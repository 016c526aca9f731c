-- Sets hash fields only when the hash exists, so an update racing a delete cannot resurrect it.
-- KEYS[1] hash. ARGV field, value, ... Returns 1 when updated, 0 when the hash does not exist.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1

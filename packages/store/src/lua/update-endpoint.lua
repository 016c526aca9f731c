-- Sets an endpoint's fields only when it exists, so an update racing a delete cannot resurrect it,
-- and bumps its org's version in the same step (ingest's lookup cache compares it per request).
-- KEYS[1] endpoint hash, KEYS[2] the org's version counter. ARGV field, value, ...
-- Returns 1 when updated, 0 when the endpoint does not exist.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
redis.call('INCR', KEYS[2])
return 1

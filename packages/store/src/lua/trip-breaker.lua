-- Trips an endpoint's breaker once: only an `active` endpoint changes, so 20 failures finishing
-- at the same moment produce one trip and one notification. Its pending deliveries are settled
-- afterwards, in bounded batches, by settle-on-trip.lua.
-- KEYS[1] endpoint hash, KEYS[2] org notifications zset, KEYS[3] notification hash, KEYS[4] the org's
-- version (bumped, so every ingest's lookup cache sees the change at once).
-- ARGV[1] now (ms), ARGV[2] new status 'paused' | 'disabled', ARGV[3] reason,
-- ARGV[4] notification id, ARGV[5] notification fields (JSON array field, value, ...),
-- ARGV[6] '1' when only re-creating the endpoint may bring it back (vestiarion), remembered even if
-- its policy is changed later.
-- Returns 1 when tripped, 0 when the endpoint was not active (someone else tripped it, or it is gone).
if redis.call('HGET', KEYS[1], 'status') ~= 'active' then return 0 end
redis.call('HSET', KEYS[1], 'status', ARGV[2], 'disabledAt', ARGV[1], 'disabledReason', ARGV[3], 'updatedAt', ARGV[1], 'recreateRequired', ARGV[6])
redis.call('HSET', KEYS[3], unpack(cjson.decode(ARGV[5])))
redis.call('ZADD', KEYS[2], 0, ARGV[4])
redis.call('INCR', KEYS[4])
return 1

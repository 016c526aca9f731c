-- Sets one field of a hash only while the hash exists, so a write racing a delete never
-- recreates the record (an endpoint deleted while its OAuth token was being fetched stays deleted).
-- KEYS[1] the hash. ARGV[1] field, ARGV[2] value.
-- Returns 1 when set, 0 when the hash does not exist.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1

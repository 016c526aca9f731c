-- Compare-and-set of one hash field: replaces it only while it still holds the value the caller
-- read, so re-sealing a secret (npm run secrets:reencrypt) or dropping expired signing secrets
-- never overwrites a change made in between (a rotation, say), and never recreates a deleted record.
-- KEYS[1] the hash. ARGV[1] field, ARGV[2] the value read, ARGV[3] the new value.
-- Returns 1 when replaced, 0 when the field no longer holds ARGV[2] (or is gone).
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1

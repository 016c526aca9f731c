-- Gives an API key that has no record yet (the key made with its org, or one made before keys had
-- scopes) its record, once: concurrent first uses of the same key agree on one record.
-- KEYS[1] apikey string (org id), KEYS[2] apikey-id string, KEYS[3] key record hash,
-- KEYS[4] org's API key ids zset.
-- ARGV[1] org id, ARGV[2] key id, ARGV[3] record fields (JSON array field, value, ...).
-- Returns the key id now on record, or false when the key no longer belongs to the org (revoked).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return false end
local existing = redis.call('GET', KEYS[2])
if existing then return existing end
redis.call('SET', KEYS[2], ARGV[2])
redis.call('HSET', KEYS[3], unpack(cjson.decode(ARGV[3])))
redis.call('ZADD', KEYS[4], 0, ARGV[2])
return ARGV[2]

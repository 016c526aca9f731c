-- Gives an API key that has no record yet (the key made with its org, or one made before keys had
-- scopes) its record id, once: concurrent first uses of the same key agree on one id. The record
-- itself lives in the org's slot and is written by the caller before this runs.
-- KEYS[1] apikey string (org id), KEYS[2] apikey-id string (both tagged by the key hash: one slot).
-- ARGV[1] org id, ARGV[2] key id.
-- Returns the key id now on record, or false when the key no longer belongs to the org (revoked).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return false end
local existing = redis.call('GET', KEYS[2])
if existing then return existing end
redis.call('SET', KEYS[2], ARGV[2])
return ARGV[2]

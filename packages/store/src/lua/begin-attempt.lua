-- Claims the next attempt of a delivery before its request is sent.
-- KEYS[1] delivery hash, KEYS[2] attempts hash. ARGV[1] key prefix, ARGV[2] now (ms).
-- A delivery found in_flight was interrupted (worker killed mid-attempt): the same attempt
-- number is run again rather than spending a new one.
-- Returns {'missing'} | {'finished', status} | {'started', attemptNumber}.
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'missing'} end
if status == 'succeeded' or status == 'failed' or status == 'cancelled' then
  return {'finished', status}
end
local id = redis.call('HGET', KEYS[1], 'id')
local endpointId = redis.call('HGET', KEYS[1], 'endpointId')
local attempts = tonumber(redis.call('HGET', KEYS[1], 'attempts') or '0')
local number = attempts
if status ~= 'in_flight' then
  number = attempts + 1
  local base = ARGV[1] .. ':endpoint:' .. endpointId .. ':deliveries:'
  redis.call('ZREM', base .. status, id)
  redis.call('ZADD', base .. 'in_flight', 0, id)
end
redis.call('HSET', KEYS[1], 'status', 'in_flight', 'attempts', number, 'held', '0',
  'attemptStartedAt', ARGV[2], 'updatedAt', ARGV[2])
redis.call('ZREM', ARGV[1] .. ':endpoint:' .. endpointId .. ':held', id)
redis.call('HSET', KEYS[2], number, cjson.encode({number = number, startedAt = tonumber(ARGV[2])}))
return {'started', number}

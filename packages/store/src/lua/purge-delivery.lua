-- Removes a finished delivery, its attempts and its index entries; removes its event too when no
-- other delivery refers to it. Unfinished deliveries are never removed.
-- KEYS[1] delivery hash, KEYS[2] attempts hash. ARGV[1] key prefix.
-- Returns 1 when removed, 0 when missing or unfinished.
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= 'succeeded' and status ~= 'failed' and status ~= 'cancelled' then return 0 end
local id = redis.call('HGET', KEYS[1], 'id')
local endpointId = redis.call('HGET', KEYS[1], 'endpointId')
local eventId = redis.call('HGET', KEYS[1], 'eventId')
local endpointBase = ARGV[1] .. ':endpoint:' .. endpointId
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', endpointBase .. ':deliveries', id)
redis.call('ZREM', endpointBase .. ':deliveries:' .. status, id)
redis.call('ZREM', endpointBase .. ':held', id)
redis.call('SREM', endpointBase .. ':bulk-redelivered', id)
local eventKey = ARGV[1] .. ':event:' .. eventId
if redis.call('EXISTS', eventKey) == 1 then
  local left = redis.call('HINCRBY', eventKey, 'liveDeliveries', -1)
  if left <= 0 then redis.call('DEL', eventKey) end
end
return 1

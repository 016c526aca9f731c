-- Ends or holds a delivery without sending anything (endpoint gone or inactive, payload too large).
-- KEYS[1] delivery hash, KEYS[2] unfinished zset. ARGV[1] key prefix, ARGV[2] now (ms),
-- ARGV[3] 'cancelled' | 'failed' | 'held', ARGV[4] reason code.
-- A finished delivery is left as it is. Returns {'missing'} | {'finished', status} | {'ok', newStatus}.
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'missing'} end
if status == 'succeeded' or status == 'failed' or status == 'cancelled' then
  return {'finished', status}
end
local id = redis.call('HGET', KEYS[1], 'id')
local endpointId = redis.call('HGET', KEYS[1], 'endpointId')
local base = ARGV[1] .. ':endpoint:' .. endpointId .. ':deliveries:'
local outcome = ARGV[3]
local nextStatus = outcome
if outcome == 'held' then nextStatus = 'pending' end
redis.call('ZREM', base .. status, id)
redis.call('ZADD', base .. nextStatus, 0, id)
redis.call('HSET', KEYS[1], 'status', nextStatus, 'updatedAt', ARGV[2], 'nextAttemptAt', '')
if outcome == 'held' then
  redis.call('HSET', KEYS[1], 'held', '1', 'heldReason', ARGV[4])
  redis.call('ZADD', ARGV[1] .. ':endpoint:' .. endpointId .. ':held', 0, id)
else
  redis.call('HSET', KEYS[1], 'finishedAt', ARGV[2])
  redis.call('ZREM', KEYS[2], id)
  if outcome == 'cancelled' then
    redis.call('HSET', KEYS[1], 'cancelReason', ARGV[4])
  else
    redis.call('HSET', KEYS[1], 'lastError', ARGV[4])
  end
end
return {'ok', nextStatus}

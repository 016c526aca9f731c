-- Trips an endpoint's breaker once: only an `active` endpoint changes, so 20 failures finishing
-- at the same moment produce one trip and one notification.
-- KEYS[1] endpoint hash, KEYS[2] unfinished zset, KEYS[3] org notifications zset, KEYS[4] notification hash.
-- ARGV[1] key prefix, ARGV[2] now (ms), ARGV[3] new status 'paused' | 'disabled',
-- ARGV[4] reason, ARGV[5] pending deliveries: 'cancel' | 'hold' | 'fail', ARGV[6] notification id,
-- ARGV[7] notification fields (JSON array field, value, ...), ARGV[8] '1' when only re-creating the
-- endpoint may bring it back (seed 004), remembered even if its policy is changed later.
-- Returns {0} when the endpoint was not active (someone else tripped it, or it is gone),
-- else {1, deliveriesSettled}.
if redis.call('HGET', KEYS[1], 'status') ~= 'active' then return {0} end
local endpointId = redis.call('HGET', KEYS[1], 'id')
redis.call('HSET', KEYS[1], 'status', ARGV[3], 'disabledAt', ARGV[2], 'disabledReason', ARGV[4], 'updatedAt', ARGV[2], 'recreateRequired', ARGV[8] or '0')
local base = ARGV[1] .. ':endpoint:' .. endpointId .. ':deliveries:'
local held = ARGV[1] .. ':endpoint:' .. endpointId .. ':held'
local pending = redis.call('ZRANGE', base .. 'pending', 0, -1)
local settled = 0
for _, id in ipairs(pending) do
  local key = ARGV[1] .. ':delivery:' .. id
  if ARGV[5] == 'hold' then
    if redis.call('HGET', key, 'held') ~= '1' then
      redis.call('HSET', key, 'held', '1', 'heldReason', 'breaker_tripped', 'nextAttemptAt', '', 'updatedAt', ARGV[2])
      redis.call('ZADD', held, 0, id)
      settled = settled + 1
    end
  else
    local status = ARGV[5] == 'cancel' and 'cancelled' or 'failed'
    redis.call('ZREM', base .. 'pending', id)
    redis.call('ZADD', base .. status, 0, id)
    redis.call('ZREM', held, id)
    redis.call('ZREM', KEYS[2], id)
    redis.call('HSET', key, 'status', status, 'held', '0', 'nextAttemptAt', '', 'finishedAt', ARGV[2], 'updatedAt', ARGV[2])
    if status == 'cancelled' then
      redis.call('HSET', key, 'cancelReason', 'breaker_tripped')
    else
      redis.call('HSET', key, 'lastError', 'endpoint_inactive')
    end
    settled = settled + 1
  end
end
redis.call('HSET', KEYS[4], unpack(cjson.decode(ARGV[7])))
redis.call('ZADD', KEYS[3], 0, ARGV[6])
return {1, settled}

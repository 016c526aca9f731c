-- Settles a batch of a tripped endpoint's pending deliveries as its breaker's `pendingOnTrip` says:
-- hold (kept pending, held, replayed on resume), cancel (`cancelled`, `breaker_tripped`) or fail
-- (`failed`, `endpoint_inactive`). Deliveries in flight finish their attempt first; the next claim
-- then finds the endpoint inactive.
-- KEYS[1] endpoint's pending index, KEYS[2] endpoint's index of the new status (cancelled or
-- failed; unused for hold), KEYS[3] endpoint's held index, KEYS[4] endpoint's key lines (ended
-- deliveries leave them; the rest of each line is pending too, so is settled here as well or
-- holds), then per delivery its hash, its attempts hash and its event hash.
-- ARGV[1] now (ms), ARGV[2] 'cancel' | 'hold' | 'fail', ARGV[3] when a finished delivery expires
-- (epoch ms; '' = kept until trimmed by count), ARGV[4..] the deliveries' ids, in KEYS' order.
-- Returns how many deliveries it settled.
--- @include "retention"
--- @include "compact-hash"
local settled = 0
for i = 5, #KEYS, 3 do
  local current = redis.call('HMGET', KEYS[i], 'status', 'held', 'keyLine')
  if current[1] == 'pending' then
    local id = ARGV[4 + (i - 5) / 3]
    if ARGV[2] == 'hold' then
      if current[2] ~= '1' then
        hsetOrDel(KEYS[i], {'held', '1', 'heldReason', 'breaker_tripped', 'nextAttemptAt', '', 'updatedAt', ARGV[1]})
        redis.call('ZADD', KEYS[3], 0, id)
        settled = settled + 1
      end
    else
      local status = 'failed'
      local reasonField, reason = 'lastError', 'endpoint_inactive'
      if ARGV[2] == 'cancel' then status, reasonField, reason = 'cancelled', 'cancelReason', 'breaker_tripped' end
      redis.call('ZREM', KEYS[1], id)
      redis.call('ZADD', KEYS[2], 0, id)
      if current[2] == '1' then redis.call('ZREM', KEYS[3], id) end
      hsetOrDel(KEYS[i], {'status', status, 'held', '', 'nextAttemptAt', '', 'finishedAt', '', 'updatedAt', ARGV[1], reasonField, reason})
      keepFinishedUntil(KEYS[i], KEYS[i + 1], KEYS[i + 2], ARGV[3], ARGV[1])
      if current[3] then redis.call('ZREM', KEYS[4], current[3]) end
      settled = settled + 1
    end
  end
end
return settled

-- Keeps the newest N finished deliveries of an endpoint (`{lastPerEndpoint: N}`, run right after a
-- finish): removes the given oldest candidates, in order, while the endpoint has more than N
-- finished ones. Re-checks the count itself, so finishes trimming at once never remove too many.
-- KEYS[1..3] endpoint's succeeded, failed and cancelled indexes, KEYS[4] endpoint's delivery log,
-- KEYS[5] endpoint's held index, KEYS[6] endpoint's bulk-redelivered set, then per candidate (oldest
-- first) its delivery hash, attempts hash and event hash.
-- ARGV[1] N, then per candidate its id.
-- Returns how many were removed.
local keep = tonumber(ARGV[1])
local total = redis.call('ZCARD', KEYS[1]) + redis.call('ZCARD', KEYS[2]) + redis.call('ZCARD', KEYS[3])
local index = { succeeded = KEYS[1], failed = KEYS[2], cancelled = KEYS[3] }
local removed = 0
for i = 7, #KEYS, 3 do
  if total <= keep then break end
  local id = ARGV[2 + (i - 7) / 3]
  local status = redis.call('HGET', KEYS[i], 'status')
  if index[status] then
    redis.call('DEL', KEYS[i], KEYS[i + 1])
    redis.call('ZREM', index[status], id)
    redis.call('ZREM', KEYS[4], id)
    redis.call('ZREM', KEYS[5], id)
    redis.call('SREM', KEYS[6], id)
    -- The event goes with its last delivery.
    if redis.call('EXISTS', KEYS[i + 2]) == 1 then
      local left = redis.call('HINCRBY', KEYS[i + 2], 'liveDeliveries', -1)
      if left <= 0 then redis.call('DEL', KEYS[i + 2]) end
    end
    total = total - 1
    removed = removed + 1
  end
end
return removed

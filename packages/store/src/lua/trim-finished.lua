-- Keeps the newest N finished deliveries of an endpoint (`{lastPerEndpoint}`, run right after a
-- finish): removes the given oldest candidates, in order, while the endpoint has more than N
-- finished ones. Re-checks the count itself, so finishes trimming at once never remove too many.
-- KEYS[1..3] endpoint's succeeded, failed and cancelled indexes, KEYS[4] endpoint's delivery log,
-- KEYS[5] endpoint's held index, KEYS[6] endpoint's bulk-redelivered set, KEYS[7] org's events
-- index, then per candidate (oldest first) its delivery hash, attempts hash, event hash and the
-- event's redeliveries index.
-- ARGV[1] N, ARGV[2] how many to remove at most, ARGV[3] now (epoch ms, the caller's clock), then
-- per candidate its id and event id.
-- Returns {how many were removed, how many finished deliveries the endpoint has left}.
--- @include "retention"
local keep = tonumber(ARGV[1])
local most = tonumber(ARGV[2])
local now = ARGV[3]
local total = redis.call('ZCARD', KEYS[1]) + redis.call('ZCARD', KEYS[2]) + redis.call('ZCARD', KEYS[3])
local index = { succeeded = KEYS[1], failed = KEYS[2], cancelled = KEYS[3] }
local removed = 0
for i = 8, #KEYS, 4 do
  if total <= keep or removed >= most then break end
  local n = (i - 8) / 4
  local id, eventId = ARGV[4 + n * 2], ARGV[5 + n * 2]
  local status = redis.call('HGET', KEYS[i], 'status')
  if index[status] then
    -- The event goes with its last delivery, whatever policies its other deliveries have.
    if releaseFinished(KEYS[i], KEYS[i + 2], now) then
      redis.call('DEL', KEYS[i + 2], KEYS[i + 3])
      redis.call('ZREM', KEYS[7], eventId)
    else
      redis.call('ZREM', KEYS[i + 3], id)
    end
    redis.call('DEL', KEYS[i], KEYS[i + 1])
    redis.call('ZREM', index[status], id)
    redis.call('ZREM', KEYS[4], id)
    redis.call('ZREM', KEYS[5], id)
    redis.call('SREM', KEYS[6], id)
    total = total - 1
    removed = removed + 1
  end
end
return {removed, total}

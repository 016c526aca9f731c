-- Marks the endpoints whose line has members (`lined`, includes/lease.lua), for lines that a
-- Postern before the mark filled: markEndpointsForClaim (claim-marks.ts) runs it at a sender's
-- start. An endpoint hash is written only when it exists and is not marked yet.
-- KEYS: per endpoint its hash, then its parked set (its line).
-- Returns how many endpoints it marked.
--- @include "lease"
local marked = 0
for i = 1, #KEYS, 2 do
  if redis.call('EXISTS', KEYS[i + 1]) == 1 then
    local endpoint = redis.call('HMGET', KEYS[i], 'id', LINED_FIELD)
    if endpoint[1] and not endpoint[2] then
      redis.call('HSET', KEYS[i], LINED_FIELD, '1')
      marked = marked + 1
    end
  end
end
return marked

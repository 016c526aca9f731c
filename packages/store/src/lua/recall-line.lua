-- After an endpoint's policy changed (policy-change.ts, planPolicyChange): calls the first of its
-- line as the new limits leave room for (the release rules of includes/lease.lua, giveBackLease,
-- with nothing given back), and as planned wakes every delivery waiting for its ordering key,
-- drops the rate limiter's state and the adaptive pace learnt under the old limits.
-- KEYS[1..6] lease keys (includes/lease.lua; the event claim keys of no event), KEYS[7] endpoint's
-- key lines, KEYS[8] endpoint's rate state, KEYS[9] endpoint hash.
-- ARGV[1] now (ms), ARGV[2] per-endpoint limit, ARGV[3] per-org limit, ARGV[4] '1' = wake the key
-- lines, ARGV[5] '1' = drop the rate state and the pace, ARGV[6] most key-line deliveries to wake.
-- Returns the delivery ids to wake (their jobs are promoted by the caller).
--- @include "lease"
local woken = {}
if ARGV[5] == '1' then
  redis.call('DEL', KEYS[8])
  redis.call('HDEL', KEYS[9], 'pace')
end
giveBackLease(KEYS, '', tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), woken, false)
if ARGV[4] == '1' then
  for _, entry in ipairs(redis.call('ZRANGE', KEYS[7], 0, tonumber(ARGV[6]) - 1)) do
    table.insert(woken, string.sub(entry, 47))
  end
end
return woken

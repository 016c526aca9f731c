-- Calls an endpoint's line again without giving back a slot (includes/lease.lua, callParked): the
-- parked deliveries that the free slots of both limits let in, as a release does. For a sender
-- that died after a release named whom to wake but before it woke them (its takeover), and after
-- an endpoint's policy changed (policy-change.ts, planPolicyChange), when it may also wake every
-- delivery waiting for its ordering key and drop the rate limiter's state and the adaptive pace
-- learnt under the old limits.
-- KEYS[1] endpoint leases zset, KEYS[2] org leases zset, KEYS[3] endpoint parked zset,
-- KEYS[4] org parked zset, KEYS[5] endpoint's key lines, KEYS[6] endpoint's rate state,
-- KEYS[7] endpoint hash.
-- ARGV[1] now (ms), ARGV[2] per-endpoint limit, ARGV[3] per-org limit, ARGV[4] '1' = wake the key
-- lines, ARGV[5] '1' = drop the rate state and the pace, ARGV[6] most key-line deliveries to wake.
-- Returns the delivery ids to wake (their jobs are promoted by the caller).
--- @include "lease"
local woken = {}
if ARGV[5] == '1' then
  redis.call('DEL', KEYS[6])
  redis.call('HDEL', KEYS[7], 'pace')
end
callParked(KEYS, tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), woken)
if ARGV[4] == '1' then
  for _, entry in ipairs(redis.call('ZRANGE', KEYS[5], 0, tonumber(ARGV[6]) - 1)) do
    table.insert(woken, string.sub(entry, 47))
  end
end
return woken

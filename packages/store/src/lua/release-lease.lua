-- Gives back a lease and its event claim, and picks the parked deliveries that may now have room
-- (the rules: includes/lease.lua, giveBackLease).
-- KEYS[1] endpoint leases zset, KEYS[2] org leases zset, KEYS[3] endpoint parked zset,
-- KEYS[4] org parked zset, KEYS[5] event claim string, KEYS[6] event claim waiters set.
-- ARGV[1] lease id (the delivery id), ARGV[2] now (ms), ARGV[3] per-endpoint limit,
-- ARGV[4] per-org limit (limits 0 = wake no parked delivery).
-- Returns {released (1 | 0), woken delivery ids...}.
--- @include "lease"
local woken = {}
local released = giveBackLease(KEYS, ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), woken, true)
return {released, unpack(woken)}

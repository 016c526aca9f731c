-- Calls an endpoint's line again without giving back a slot: the parked deliveries that the free
-- slots let in, as a release does (includes/lease.lua, callParked). For a sender that died after
-- a release named whom to wake but before it woke them.
-- KEYS[1] endpoint leases zset, KEYS[2] org leases zset, KEYS[3] endpoint parked zset,
-- KEYS[4] org parked zset.
-- ARGV[1] now (ms), ARGV[2] per-endpoint limit, ARGV[3] per-org limit.
-- Returns the woken delivery ids.
--- @include "lease"
local woken = {}
callParked(KEYS, tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), woken)
return woken

-- Takes one slot of an endpoint's and its org's concurrency limits, and the claim on the event at
-- that endpoint, all at once or none (the rules: includes/lease.lua, takeLease).
-- KEYS[1] endpoint leases zset, KEYS[2] org leases zset, KEYS[3] endpoint parked zset,
-- KEYS[4] org parked zset, KEYS[5] event claim string, KEYS[6] event claim waiters set,
-- KEYS[7] endpoint hash (its line's mark; without an endpoint record the line is always looked at
-- and nothing is marked, so no hash is made for an endpoint that does not exist).
-- ARGV[1] lease id (the delivery id), ARGV[2] now (ms), ARGV[3] lease expiry (ms),
-- ARGV[4] per-endpoint limit, ARGV[5] per-org limit, ARGV[6] park order (the delivery's
-- createdAt, ms: a refused delivery is parked), ARGV[7] lease length (ms).
-- Returns 1 when held, 0 refused by the endpoint limit, -1 by the org limit, -2 by the event claim.
--- @include "lease"
local endpoint = redis.call('HMGET', KEYS[7], 'id', LINED_FIELD)
local line = {key = KEYS[7], marked = endpoint[2] == '1'}
if not endpoint[1] then line = {key = nil, marked = true} end
return takeLease(KEYS, ARGV[1], tonumber(ARGV[2]), ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]),
  ARGV[6], ARGV[7], true, true, nil, line)

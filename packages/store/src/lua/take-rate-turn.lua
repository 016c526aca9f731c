-- Takes a new turn under an endpoint's rate limit for an attempt about to be sent too long after
-- the turn its claim took (rate-limit.ts, isTurnStale): the bound is kept where the request is sent.
-- KEYS[1] endpoint's rate state. ARGV[1] now (ms), ARGV[2] interval between turns (ms),
-- ARGV[3] tolerance (ms, burst × interval).
-- Returns 0 when the turn is taken, else when the next turn conforms (ms).
--- @include "lease"
local retryAt = takeRateTurn({key = KEYS[1], intervalMs = tonumber(ARGV[2]), toleranceMs = tonumber(ARGV[3])}, tonumber(ARGV[1]))
if retryAt then return math.ceil(retryAt) end
return 0

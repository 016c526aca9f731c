-- Sets an endpoint's adaptive pace over the one it was computed from (compare and set), for a
-- slow-down the finish could not apply because the pace changed meanwhile (finish-attempt.lua):
-- the sender computes the cut again from the pace now stored (pace.ts, nextPace) and tries again.
-- KEYS[1] endpoint hash. ARGV[1] the pace it was computed from (JSON, '' = none), ARGV[2] the next
-- pace (JSON, '-' = none).
-- Returns '' when set (or the endpoint is gone), else the stored pace ('-' when none).
--- @include "pace"
if redis.call('HEXISTS', KEYS[1], 'id') == 0 then return '' end
return setPaceIf(KEYS[1], ARGV[1], ARGV[2])

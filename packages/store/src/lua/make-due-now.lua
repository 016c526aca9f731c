-- Brings a delivery's next attempt forward to now (send-now), only while it still waits for that
-- attempt: pending, with the next attempt time the caller read. The claim step starts no attempt
-- before the delivery's nextAttemptAt, so this is what lets the promoted job run it.
-- KEYS[1] delivery hash. ARGV[1] now (ms), ARGV[2] the nextAttemptAt the caller read (ms).
-- Returns 1 when brought forward, 0 when the delivery moved on meanwhile.
local current = redis.call('HMGET', KEYS[1], 'status', 'nextAttemptAt')
if current[1] ~= 'pending' or tonumber(current[2] or '') ~= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'nextAttemptAt', ARGV[1])
return 1

-- Removes a finished delivery, its attempts and its index entries; removes its event too when no
-- other delivery keeps it (includes/retention.lua). Unfinished deliveries are never removed.
-- KEYS[1] delivery hash, KEYS[2] attempts hash, KEYS[3] endpoint's delivery log, KEYS[4] endpoint's
-- index of the delivery's status, KEYS[5] endpoint's held index, KEYS[6] endpoint's
-- bulk-redelivered set, KEYS[7] event hash, KEYS[8] org's events index, KEYS[9] the event's
-- redeliveries.
-- ARGV[1] the status the caller read: nothing is removed unless it is still the delivery's status;
-- ARGV[2] the event id, ARGV[3] the delivery id, ARGV[4] now (epoch ms, the caller's clock).
-- Returns 1 when removed, 0 when missing, unfinished or changed since it was read.
--- @include "retention"
local status = redis.call('HGET', KEYS[1], 'status')
if status ~= ARGV[1] then return 0 end
if status ~= 'succeeded' and status ~= 'failed' and status ~= 'cancelled' then return 0 end
local id = ARGV[3]
if releaseFinished(KEYS[1], KEYS[7], ARGV[4]) then
  redis.call('DEL', KEYS[7], KEYS[9])
  redis.call('ZREM', KEYS[8], ARGV[2])
else
  redis.call('ZREM', KEYS[9], id)
end
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('ZREM', KEYS[3], id)
redis.call('ZREM', KEYS[4], id)
redis.call('ZREM', KEYS[5], id)
redis.call('SREM', KEYS[6], id)
return 1

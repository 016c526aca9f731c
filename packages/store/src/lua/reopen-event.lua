-- One more delivery of an event (a redelivery) is on its way: counted among its live and unfinished
-- deliveries, and the event no longer expires until it finishes. An event whose deliveries had all
-- finished may keep the latest keep time of those kept by days only in its expiry
-- (includes/retention.lua): that time goes into `keepUntil` before the expiry is cleared, so the
-- redelivery's finish keeps the event at least as long.
-- KEYS[1] event hash. ARGV[1] now (ms). Returns 1, or 0 when the event is gone (nothing written).
--- @include "retention"
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local stored = redis.call('HGET', KEYS[1], 'keepUntil')
local kept = eventKeptUntil(KEYS[1], stored, ARGV[1])
if kept and kept ~= tonumber(stored) then redis.call('HSET', KEYS[1], 'keepUntil', string.format('%d', kept)) end
redis.call('HINCRBY', KEYS[1], 'liveDeliveries', 1)
redis.call('HINCRBY', KEYS[1], 'unfinishedDeliveries', 1)
redis.call('PERSIST', KEYS[1])
return 1

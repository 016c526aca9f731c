-- Ends or holds a delivery without sending anything, as planBeforeAttempt decided (endpoint gone
-- or inactive, org suspended, payload too large).
-- KEYS[1] delivery hash, KEYS[2] endpoint's pending index, KEYS[3] endpoint's in_flight index,
-- KEYS[4] endpoint's index of the new status (pending when held: a held delivery is pending,
-- in the held index as well), KEYS[5] endpoint's held index, KEYS[6] attempts hash, KEYS[7] event
-- hash, KEYS[8] endpoint's key lines (an ended delivery leaves its ordering key's line: the next
-- one of the key may go), KEYS[9] the org's live feed (includes/live-feed.lua).
-- ARGV[1] now (ms), ARGV[2] 'cancelled' | 'failed' | 'held', ARGV[3] reason code, ARGV[4] when a
-- finished delivery expires (epoch ms; '' = kept until trimmed by count), ARGV[5] the delivery id,
-- ARGV[6] endpoint id, ARGV[7] event id, ARGV[8] live feed's cap ('0' = off), ARGV[9] its time to
-- live (s). The change is appended to the live feed (held: status pending, the reason as error).
-- A finished delivery is left as it is. Returns {'missing'} | {'finished', status} |
-- {'ok', newStatus, woken...} (woken: the delivery now first in its ordering key's line).
--- @include "retention"
--- @include "key-line"
--- @include "compact-hash"
--- @include "live-feed"
local current = redis.call('HMGET', KEYS[1], 'status', 'keyLine', 'eventType')
local status = current[1]
if not status then return {'missing'} end
if status == 'succeeded' or status == 'failed' or status == 'cancelled' then
  return {'finished', status}
end
local id = ARGV[5]
local outcome = ARGV[2]
appendLiveChange(KEYS[9], ARGV[8], ARGV[9], {'d', id, 'p', ARGV[6], 'v', ARGV[7], 't', current[3],
  's', outcome == 'held' and 'pending' or outcome, 'x', ARGV[3], 'at', ARGV[1]})
redis.call('ZREM', KEYS[2], id)
redis.call('ZREM', KEYS[3], id)
redis.call('ZADD', KEYS[4], 0, id)
if outcome == 'held' then
  hsetOrDel(KEYS[1], {'status', 'pending', 'updatedAt', ARGV[1], 'nextAttemptAt', '', 'held', '1', 'heldReason', ARGV[3]})
  redis.call('ZADD', KEYS[5], 0, id)
  return {'ok', 'pending'}
end
local reasonField = 'lastError'
if outcome == 'cancelled' then reasonField = 'cancelReason' end
-- An ended delivery is no longer held (a held one ends when its endpoint is deleted).
hsetOrDel(KEYS[1], {'status', outcome, 'updatedAt', ARGV[1], 'nextAttemptAt', '', 'finishedAt', '', reasonField, ARGV[3], 'held', '', 'heldReason', ''})
redis.call('ZREM', KEYS[5], id)
keepFinishedUntil(KEYS[1], KEYS[6], KEYS[7], ARGV[4], ARGV[1])
local woken = {}
if current[2] then leaveKeyLine(KEYS[8], current[2], woken) end
return {'ok', outcome, unpack(woken)}

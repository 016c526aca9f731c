-- One sender's heartbeat, and the senders whose heartbeat lapsed, in one call. Times are Redis's
-- own clock (TIME), so senders on hosts whose clocks differ agree on who lapsed.
-- KEYS[1] the senders' heartbeats zset (member = sender id, score = its last beat, ms),
-- KEYS[2] this sender's record hash, KEYS[3] this sender's takeover guard.
-- ARGV[1] sender id, ARGV[2] record time to live (ms), ARGV[3] lapse (ms), ARGV[4] how many
-- field, value pairs to set follow (ARGV[5..]); the arguments after them are fields to delete.
-- The record keeps `since`, the first beat of the sender's unbroken run of beats (a gap of more
-- than half the lapse starts a new run). A sender whose own run is younger than half the lapse
-- (it just started, or Redis was out of its reach) names only senders that lapsed while it was
-- beating: after an outage every sender's beat is old, and a sender that reconnected first must
-- not take the others over.
-- Returns {now ms, 1 when the record was missing (new, or taken over: write it whole) else 0,
-- lapsed sender ids...}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local id = ARGV[1]
local lapse = tonumber(ARGV[3])
local record = redis.call('HMGET', KEYS[2], 'beatAt', 'since')
local fresh = not record[1]
local last = tonumber(record[1] or '0')
local since = tonumber(record[2] or '0')
if fresh or now - last > lapse / 2 then since = now end
if redis.call('ZADD', KEYS[1], now, id) == 1 then redis.call('DEL', KEYS[3]) end
local setPairs = tonumber(ARGV[4])
local set = {'beatAt', now, 'since', since}
for i = 5, 4 + 2 * setPairs do table.insert(set, ARGV[i]) end
redis.call('HSET', KEYS[2], unpack(set))
for i = 5 + 2 * setPairs, #ARGV do redis.call('HDEL', KEYS[2], ARGV[i]) end
redis.call('PEXPIRE', KEYS[2], ARGV[2])

local out = {now, fresh and 1 or 0}
local old = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', '(' .. (now - lapse), 'WITHSCORES', 'LIMIT', 0, 20)
for i = 1, #old, 2 do
  local beatAt = tonumber(old[i + 1])
  if old[i] ~= id and (since <= beatAt or now - since >= lapse / 2) then table.insert(out, old[i]) end
end
return out

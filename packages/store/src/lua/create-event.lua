-- Writes one event, its deliveries and their indexes in one step, or returns the first answer
-- stored under the producer's idempotency key.
-- KEYS[1] idempotency key, KEYS[2] event hash, KEYS[3] unfinished-deliveries zset,
-- then per delivery: delivery hash, endpoint pending zset (its delivery log is the union of its
-- status indexes: compact records keep no index of all); last, the
-- org's events index (GET /v1/events) and its index of events that reached no endpoint.
-- ARGV[1] '1' when an idempotency key was given, ARGV[2] idempotency TTL (s), ARGV[3] answer JSON,
-- ARGV[4] event fields (JSON array of field, value, ...), then per delivery its fields (same form);
-- each starts with its 'id', which is used for the indexes but not stored (it is in the key).
-- Last ARGV: the smallest event id of 30 days ago (events that reached no endpoint expire then).
-- Returns {1, answer} when written, {0, storedAnswer} when the key was already used.
--- @include "compact-hash"
if ARGV[1] == '1' then
  local existing = redis.call('GET', KEYS[1])
  if existing then return {0, existing} end
end
local count = (#KEYS - 5) / 2
-- The janitor removes the event when its last delivery is removed; an event that reached no
-- endpoint expires after the default retention instead.
local eventFields = cjson.decode(ARGV[4])
table.insert(eventFields, 'liveDeliveries')
table.insert(eventFields, count)
-- Counted down as they finish: the event expires once none is unfinished (includes/retention.lua).
table.insert(eventFields, 'unfinishedDeliveries')
table.insert(eventFields, count)
-- Long values (the envelope, the ids of a wide fan-out) are split so the hash stays a listpack.
-- The id is in the key: it is not stored (compact records).
local short = {}
for f = 1, #eventFields, 2 do
  local v = eventFields[f + 1]
  if eventFields[f] == 'id' then
  elseif type(v) == 'string' and #v > SPLIT_PIECE_BYTES then hsetSplit(KEYS[2], eventFields[f], v, true)
  else short[#short + 1] = eventFields[f]; short[#short + 1] = v end
end
redis.call('HSET', KEYS[2], unpack(short))
for i = 0, count - 1 do
  local fields = cjson.decode(ARGV[5 + i])
  -- Its id (in the key, so not stored) and createdAt, from the fields given.
  local id, createdAt
  local stored = {}
  for f = 1, #fields, 2 do
    if fields[f] == 'id' then id = fields[f + 1]
    else
      if fields[f] == 'createdAt' then createdAt = fields[f + 1] end
      stored[#stored + 1] = fields[f]
      stored[#stored + 1] = fields[f + 1]
    end
  end
  redis.call('HSET', KEYS[4 + i * 2], unpack(stored))
  redis.call('ZADD', KEYS[5 + i * 2], 0, id)
  redis.call('ZADD', KEYS[3], createdAt, id)
end
-- The event in the org's index (lex by id, which is creation order).
local eventId
for f = 1, #eventFields, 2 do
  if eventFields[f] == 'id' then eventId = eventFields[f + 1] end
end
redis.call('ZADD', KEYS[#KEYS - 1], 0, eventId)
if count == 0 then
  redis.call('EXPIRE', KEYS[2], tonumber(ARGV[2]) * 30)
  -- No delivery will purge it: its index entries go when it expires, a few at each such event.
  redis.call('ZADD', KEYS[#KEYS], 0, eventId)
  local expired = redis.call('ZRANGEBYLEX', KEYS[#KEYS], '-', '(' .. ARGV[#ARGV], 'LIMIT', 0, 20)
  if #expired > 0 then
    redis.call('ZREM', KEYS[#KEYS - 1], unpack(expired))
    redis.call('ZREM', KEYS[#KEYS], unpack(expired))
  end
end
if ARGV[1] == '1' then
  redis.call('SET', KEYS[1], ARGV[3], 'EX', tonumber(ARGV[2]))
end
return {1, ARGV[3]}

-- Writes one event, its deliveries and their indexes in one step, or returns the first answer
-- stored under the producer's idempotency key.
-- KEYS[1] idempotency key, KEYS[2] event hash, KEYS[3] the org's acceptance sequence, then per
-- delivery: delivery hash, endpoint pending zset (its delivery log is the union of its status
-- indexes: compact records keep no index of all; the reconciler finds unfinished deliveries in
-- the pending and in_flight ones, so the org keeps no index of them either); then the org's
-- events index (GET /v1/events) and its index of events that reached no endpoint; last, per
-- delivery in an ordering key's line: the key's sequence counter at its endpoint and the
-- endpoint's key lines.
-- ARGV[1] '1' when an idempotency key was given, ARGV[2] idempotency TTL (s), ARGV[3] answer JSON,
-- ARGV[4] event fields (JSON array of field, value, ...), ARGV[5] how many deliveries, ARGV[6] the
-- deliveries in a key line (JSON array of [delivery index from 0, key hash (32 hex)]), ARGV[7] the
-- smallest event id of 30 days ago (events that reached no endpoint expire then), then per
-- delivery its fields (same form as the event's); each starts with its 'id', which is used for the
-- indexes but not stored (it is in the key).
-- Every delivery gets the event's acceptance sequence (`acceptSeq`: its place in its endpoint's
-- line); one in a key line also gets its key's next `sequence` and its line entry (`keyLine`).
-- Returns {1, answer} when written, {0, storedAnswer} when the key was already used.
--- @include "key-line"
--- @include "compact-hash"
if ARGV[1] == '1' then
  local existing = redis.call('GET', KEYS[1])
  if existing then return {0, existing} end
end
local count = tonumber(ARGV[5])
local eventsIndex, undeliveredIndex = 4 + count * 2, 5 + count * 2
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
local eventId
for f = 1, #eventFields, 2 do
  local v = eventFields[f + 1]
  if eventFields[f] == 'id' then eventId = v
  elseif type(v) == 'string' and #v > SPLIT_PIECE_BYTES then hsetSplit(KEYS[2], eventFields[f], v, true)
  else short[#short + 1] = eventFields[f]; short[#short + 1] = v end
end
redis.call('HSET', KEYS[2], unpack(short))
local acceptSeq = 0
if count > 0 then acceptSeq = redis.call('INCR', KEYS[3]) end
local ids = {}
for i = 0, count - 1 do
  local fields = cjson.decode(ARGV[8 + i])
  -- Its id, from the fields given: in the key, so not stored.
  local id
  local stored = {'acceptSeq', acceptSeq}
  for f = 1, #fields, 2 do
    if fields[f] == 'id' then id = fields[f + 1]
    else
      stored[#stored + 1] = fields[f]
      stored[#stored + 1] = fields[f + 1]
    end
  end
  ids[i] = id
  redis.call('HSET', KEYS[4 + i * 2], unpack(stored))
  redis.call('ZADD', KEYS[5 + i * 2], 0, id)
end
for n, keyed in ipairs(cjson.decode(ARGV[6])) do
  local i, keyHash = keyed[1], keyed[2]
  local counterKey, linesKey = KEYS[undeliveredIndex + n * 2 - 1], KEYS[undeliveredIndex + n * 2]
  local sequence = redis.call('INCR', counterKey)
  redis.call('EXPIRE', counterKey, tonumber(ARGV[2]) * 30)
  local entry = keyLineEntry(keyHash, sequence, ids[i])
  redis.call('ZADD', linesKey, 0, entry)
  redis.call('HSET', KEYS[4 + i * 2], 'sequence', sequence, 'keyLine', entry)
end
-- The event in the org's index (lex by id, which is creation order).
redis.call('ZADD', KEYS[eventsIndex], 0, eventId)
if count == 0 then
  redis.call('EXPIRE', KEYS[2], tonumber(ARGV[2]) * 30)
  -- No delivery will purge it: its index entries go when it expires, a few at each such event.
  redis.call('ZADD', KEYS[undeliveredIndex], 0, eventId)
  local expired = redis.call('ZRANGEBYLEX', KEYS[undeliveredIndex], '-', '(' .. ARGV[7], 'LIMIT', 0, 20)
  if #expired > 0 then
    redis.call('ZREM', KEYS[eventsIndex], unpack(expired))
    redis.call('ZREM', KEYS[undeliveredIndex], unpack(expired))
  end
end
if ARGV[1] == '1' then
  redis.call('SET', KEYS[1], ARGV[3], 'EX', tonumber(ARGV[2]))
end
return {1, ARGV[3]}

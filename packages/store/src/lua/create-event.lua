-- Writes one event, its deliveries and their indexes in one step, or returns the first answer
-- stored under the producer's idempotency key.
-- KEYS[1] idempotency key, KEYS[2] event hash, KEYS[3] unfinished-deliveries zset,
-- then per delivery: delivery hash, endpoint deliveries zset, endpoint pending zset.
-- ARGV[1] '1' when an idempotency key was given, ARGV[2] idempotency TTL (s), ARGV[3] answer JSON,
-- ARGV[4] event fields (JSON array of field, value, ...), then per delivery its fields (same form).
-- Returns {1, answer} when written, {0, storedAnswer} when the key was already used.
if ARGV[1] == '1' then
  local existing = redis.call('GET', KEYS[1])
  if existing then return {0, existing} end
end
redis.call('HSET', KEYS[2], unpack(cjson.decode(ARGV[4])))
local count = (#KEYS - 3) / 3
for i = 0, count - 1 do
  local deliveryKey = KEYS[4 + i * 3]
  local fields = cjson.decode(ARGV[5 + i])
  redis.call('HSET', deliveryKey, unpack(fields))
  local id = redis.call('HGET', deliveryKey, 'id')
  local createdAt = tonumber(redis.call('HGET', deliveryKey, 'createdAt'))
  redis.call('ZADD', KEYS[5 + i * 3], 0, id)
  redis.call('ZADD', KEYS[6 + i * 3], 0, id)
  redis.call('ZADD', KEYS[3], createdAt, id)
end
-- The janitor removes the event when its last delivery is removed; an event that reached no
-- endpoint expires after the default retention instead.
redis.call('HSET', KEYS[2], 'liveDeliveries', count)
if count == 0 then redis.call('EXPIRE', KEYS[2], tonumber(ARGV[2]) * 30) end
if ARGV[1] == '1' then
  redis.call('SET', KEYS[1], ARGV[3], 'EX', tonumber(ARGV[2]))
end
return {1, ARGV[3]}

-- Erases an event's payload (docs/erasure-and-export.md) while keeping its delivery log's
-- metadata: the event's envelope or data, every delivery's frozen body, every stored response
-- of their attempts and the body excerpt of every request a transformation sent go; statuses, attempt times, outcomes and error codes stay. The event and its
-- deliveries are marked (`dataErasedAt` on the event, `dataErased` on each delivery). A pending
-- delivery (queued, waiting for a retry, parked or held) is cancelled with `data_erased`: it has
-- nothing left to send. Refused while any delivery is in flight (its request holds the body now):
-- nothing is changed then.
-- KEYS[1] event hash, KEYS[2] the event's redeliveries, then per delivery: its hash, its attempts
-- hash, its endpoint's pending, cancelled and held indexes and its endpoint's key lines (6 keys).
-- ARGV[1] now (ms), ARGV[2] how many redeliveries the caller saw (a new one since: 'changed', the
-- caller reads again), then per delivery its id and when it expires if cancelled here (epoch ms,
-- '' = kept until trimmed by count).
-- Returns {'changed'} | {'in_flight', deliveryId} | {'ok', cancelled, erasedAt, woken...}
-- (woken: deliveries now first in their ordering key's line).
--- @include "retention"
--- @include "key-line"
--- @include "compact-hash"
local now = ARGV[1]
if redis.call('ZCARD', KEYS[2]) ~= tonumber(ARGV[2]) then return {'changed'} end
local FIRST = 3
local PER = 6
for i = FIRST, #KEYS, PER do
  if redis.call('HGET', KEYS[i], 'status') == 'in_flight' then
    return {'in_flight', ARGV[3 + ((i - FIRST) / PER) * 2]}
  end
end

local erasedAt = redis.call('HGET', KEYS[1], 'dataErasedAt')
hdelSplit(KEYS[1], 'envelope')
hdelSplit(KEYS[1], 'data')
if not erasedAt then
  erasedAt = now
  redis.call('HSET', KEYS[1], 'dataErasedAt', now)
end

-- Every kept response of a delivery's attempts: a compact record keeps it alone under the
-- attempt's number (whole or in pieces); an older record keeps the whole attempt there, whose
-- `response` alone goes.
local function eraseResponses(attemptsKey)
  local numbers = {}
  for _, field in ipairs(redis.call('HKEYS', attemptsKey)) do
    local n = string.match(field, '^(%d+)$') or string.match(field, '^(%d+)~%d+$')
    if n then numbers[n] = true end
  end
  for n in pairs(numbers) do
    local value = hgetSplit(attemptsKey, n)
    hdelSplit(attemptsKey, n)
    if value and string.find(value, '"startedAt"', 1, true) then
      local attempt = cjson.decode(value)
      attempt.response = nil
      if type(attempt.sent) == 'table' and type(attempt.sent.transformed) == 'table' then attempt.sent.transformed.bodyExcerpt = '' end
      redis.call('HSET', attemptsKey, n, cjson.encode(attempt))
    end
  end
end

-- The body a transformation sent, kept as an excerpt in each attempt's core (the tenth element's
-- `b`, `t` marking it cut short): it holds the event's data too, so it goes; the rest of what was
-- sent (method, URL, headers) stays.
local function eraseTransformedBodies(deliveryKey)
  local numbers = {}
  for _, field in ipairs(redis.call('HKEYS', deliveryKey)) do
    local n = string.match(field, '^a(%d+)$') or string.match(field, '^a(%d+)~%d+$')
    if n then numbers[n] = true end
  end
  for n in pairs(numbers) do
    local field = 'a' .. n
    local value = hgetSplit(deliveryKey, field)
    if value and string.find(value, '"b":', 1, true) then
      local core = cjson.decode(value)
      local sent = core[10]
      if type(sent) == 'table' and sent.b ~= nil then
        sent.b = ''
        sent.t = nil
        hsetSplit(deliveryKey, field, cjson.encode(core), false)
      end
    end
  end
end

local cancelled = 0
local woken = {}
for i = FIRST, #KEYS, PER do
  local j = 3 + ((i - FIRST) / PER) * 2
  local id, expiresAt = ARGV[j], ARGV[j + 1]
  local d = redis.call('HMGET', KEYS[i], 'status', 'held', 'keyLine')
  if d[1] then
    hdelSplit(KEYS[i], 'frozenEnvelope')
    redis.call('HSET', KEYS[i], 'dataErased', '1')
    eraseResponses(KEYS[i + 1])
    eraseTransformedBodies(KEYS[i])
    if d[1] == 'pending' then
      redis.call('ZREM', KEYS[i + 2], id)
      redis.call('ZADD', KEYS[i + 3], 0, id)
      if d[2] == '1' then redis.call('ZREM', KEYS[i + 4], id) end
      -- `parked` stays: the claim that its job runs next finds it finished and leaves the parked set.
      hsetOrDel(KEYS[i], {'status', 'cancelled', 'held', '', 'heldReason', '', 'nextAttemptAt', '', 'finishedAt', '', 'updatedAt', now, 'cancelReason', 'data_erased'})
      keepFinishedUntil(KEYS[i], KEYS[i + 1], KEYS[1], expiresAt, now)
      if d[3] then leaveKeyLine(KEYS[i + 5], d[3], woken) end
      cancelled = cancelled + 1
    end
  end
end
return {'ok', cancelled, erasedAt, unpack(woken)}

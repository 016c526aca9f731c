-- Per-key ordering (policy ordering 'per-key'): an endpoint's key lines are one lex-sorted set of
-- entries `<keyHash, 32 hex>|<sequence, 12 digits>|<deliveryId>`, one per unfinished delivery that
-- carries an ordering key; the first entry of a key hash is the delivery that may go.

-- Takes a finished delivery's entry out of its line and appends the delivery now first in that
-- line, if any, to `woken` (its job waits, parked, for this).
local function leaveKeyLine(linesKey, entry, woken)
  if redis.call('ZREM', linesKey, entry) == 0 then return end
  local keyHash = string.sub(entry, 1, 32)
  local first = redis.call('ZRANGEBYLEX', linesKey, '[' .. keyHash .. '|', '(' .. keyHash .. '}', 'LIMIT', 0, 1)[1]
  if first then table.insert(woken, string.sub(first, 47)) end
end

-- The line entry of a delivery: ordered by key, then sequence.
local function keyLineEntry(keyHash, sequence, deliveryId)
  return keyHash .. '|' .. string.format('%012d', sequence) .. '|' .. deliveryId
end

-- Writes that keep a record's hash small enough to stay listpack-encoded (docs/architecture.md,
-- "Compact records"): Redis keeps a hash as one compact listpack while every value is at most
-- `hash-max-listpack-value` (64 bytes by default) and it has at most `hash-max-listpack-entries`
-- (128) fields; one longer value turns the whole hash into a hashtable, several times larger.
-- A value longer than SPLIT_PIECE_BYTES is therefore stored as pieces `<field>~0`, `<field>~1`, …
-- (joined by hgetSplit here and by joinSplitValues in split-values.ts), up to SPLIT_MAX_PIECES;
-- a longer one is stored whole (the hash is large anyway, and pieces would cost more than they save).
local SPLIT_PIECE_BYTES = 64
local SPLIT_MAX_PIECES = 24

-- Removes a field and its pieces.
local function hdelSplit(key, field)
  redis.call('HDEL', key, field)
  local i = 0
  while redis.call('HDEL', key, field .. '~' .. i) == 1 do i = i + 1 end
end

-- Sets one field, split into pieces when long. `fresh`: the field has never been written split
-- (a new record, or a field so far only written whole), so only its whole value is replaced and
-- no stale pieces are looked for; otherwise whatever it held, whole or split, is replaced.
local function hsetSplit(key, field, value, fresh)
  if fresh then redis.call('HDEL', key, field) else hdelSplit(key, field) end
  local n = #value
  if n <= SPLIT_PIECE_BYTES or n > SPLIT_PIECE_BYTES * SPLIT_MAX_PIECES then
    redis.call('HSET', key, field, value)
    return
  end
  local args = {}
  local i = 0
  for at = 1, n, SPLIT_PIECE_BYTES do
    args[#args + 1] = field .. '~' .. i
    args[#args + 1] = string.sub(value, at, at + SPLIT_PIECE_BYTES - 1)
    i = i + 1
  end
  redis.call('HSET', key, unpack(args))
end

-- One field's value, whole or joined from its pieces; false when absent.
local function hgetSplit(key, field)
  local whole = redis.call('HGET', key, field)
  if whole then return whole end
  local pieces = {}
  local piece = redis.call('HGET', key, field .. '~0')
  while piece do
    pieces[#pieces + 1] = piece
    piece = redis.call('HGET', key, field .. '~' .. #pieces)
  end
  if #pieces == 0 then return false end
  return table.concat(pieces)
end

-- HSET of field, value pairs where an empty value deletes the field instead: absent reads as
-- null, so an empty field would only cost bytes.
local function hsetOrDel(key, pairs)
  local set, del = {}, {}
  for i = 1, #pairs, 2 do
    local v = pairs[i + 1]
    if v == '' or v == false then del[#del + 1] = pairs[i]
    else set[#set + 1] = pairs[i]; set[#set + 1] = v end
  end
  if #set > 0 then redis.call('HSET', key, unpack(set)) end
  if #del > 0 then redis.call('HDEL', key, unpack(del)) end
end

-- An event's envelope: stored whole, or rebuilt from its data, id, type and timestamp exactly as
-- buildEnvelope (packages/shared) built it (records.ts, envelopeOf); false when the event is gone.
local function hgetEnvelope(eventKey, eventId)
  local envelope = hgetSplit(eventKey, 'envelope')
  if envelope then return envelope end
  local data = hgetSplit(eventKey, 'data')
  if not data then return false end
  local f = redis.call('HMGET', eventKey, 'type', 'timestamp')
  return '{"id":"' .. eventId .. '","type":"' .. (f[1] or '') .. '","timestamp":"' .. (f[2] or '') .. '","data":' .. data .. '}'
end

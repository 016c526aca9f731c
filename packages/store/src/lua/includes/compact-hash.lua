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

-- Appends one field to `args` (a field, value list for HSET): whole, or as its pieces when long.
-- Returns how many pieces (0: whole).
local function splitPieces(field, value, args)
  local n = #value
  if n <= SPLIT_PIECE_BYTES or n > SPLIT_PIECE_BYTES * SPLIT_MAX_PIECES then
    args[#args + 1] = field
    args[#args + 1] = value
    return 0
  end
  local i = 0
  for at = 1, n, SPLIT_PIECE_BYTES do
    args[#args + 1] = field .. '~' .. i
    args[#args + 1] = string.sub(value, at, at + SPLIT_PIECE_BYTES - 1)
    i = i + 1
  end
  return i
end

-- Sets one field, split into pieces when long. `fresh`: the field has never been written split
-- (a new record, or a field so far only written whole), so only its whole value is replaced and
-- no stale pieces are looked for; otherwise whatever it held, whole or split, is replaced.
local function hsetSplit(key, field, value, fresh)
  if fresh then redis.call('HDEL', key, field) else hdelSplit(key, field) end
  local args = {}
  splitPieces(field, value, args)
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

-- The creation time (epoch ms) in an id's ULID body (`<prefix>_` + 10 Crockford base32 characters
-- of time + 16 random; derived-ids.ts, idTimeOf); false when it has another shape. Compact records
-- leave out a delivery's createdAt and an event's timestamp when they are this time.
local CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
local function ulidTimeMs(id)
  local body = string.match(id or '', '^[a-z]+_([0-7][0-9A-HJKMNP-TV-Z]+)$')
  if not body or #body ~= 26 then return false end
  local ms = 0
  for i = 1, 10 do ms = ms * 32 + (string.find(CROCKFORD, string.sub(body, i, i), 1, true) - 1) end
  return ms
end

-- Epoch ms as JavaScript's Date.prototype.toISOString writes it for a four-digit year
-- (`YYYY-MM-DDTHH:mm:ss.sssZ`); the days to civil date conversion is H. Hinnant's.
local function isoOfMs(ms)
  local days = math.floor(ms / 86400000)
  local rest = ms - days * 86400000
  local z = days + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local day = doy - math.floor((153 * mp + 2) / 5) + 1
  local month = mp < 10 and mp + 3 or mp - 9
  local year = yoe + era * 400 + (month <= 2 and 1 or 0)
  local h = math.floor(rest / 3600000)
  local mi = math.floor((rest - h * 3600000) / 60000)
  local s = math.floor((rest - h * 3600000 - mi * 60000) / 1000)
  return string.format('%04d-%02d-%02dT%02d:%02d:%02d.%03dZ', year, month, day, h, mi, s, rest % 1000)
end

-- An event's envelope: stored whole, or rebuilt from its data, id, type and timestamp exactly as
-- buildEnvelope (packages/shared) built it (records.ts, envelopeOf; the timestamp, when not
-- stored, is the time in the event's id); false when the event is gone. One HGETALL of the event's
-- small hash, whatever is stored and however it is split: each field looked up with its own HGET
-- cost the claim three or four commands per attempt. Second value: the event's fields as read
-- (field -> value; nil when the event is gone), for what else the caller needs of the event.
local function hgetEnvelope(eventKey, eventId)
  local all = redis.call('HGETALL', eventKey)
  if #all == 0 then return false, nil end
  local h = {}
  for i = 1, #all, 2 do h[all[i]] = all[i + 1] end
  -- A field whole, or joined from its pieces (as hgetSplit reads it); false when absent.
  local function joined(field)
    if h[field] then return h[field] end
    local pieces = {}
    while h[field .. '~' .. #pieces] do pieces[#pieces + 1] = h[field .. '~' .. #pieces] end
    if #pieces == 0 then return false end
    return table.concat(pieces)
  end
  local envelope = joined('envelope')
  if envelope then return envelope, h end
  local data = joined('data')
  if not data then return false, h end
  local timestamp = h.timestamp
  if not timestamp then
    local ms = ulidTimeMs(eventId)
    timestamp = ms and isoOfMs(ms) or ''
  end
  return '{"id":"' .. eventId .. '","type":"' .. (h.type or '') .. '","timestamp":"' .. timestamp .. '","data":' .. data .. '}', h
end

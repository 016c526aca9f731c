-- Adaptive pacing's stored pace (pace.ts, Pace): shared by finish-attempt and set-pace.

-- Whether two stored paces (JSON, '' = none) are the same pace, compared by value, not as text: a
-- pace read back and sent again by a sender comes in JavaScript's notation, whatever wrote it.
local function samePace(a, b)
  if a == b then return true end
  if a == '' or b == '' then return false end
  local x, y = cjson.decode(a), cjson.decode(b)
  for _, f in ipairs({'perSecond', 'concurrency', 'pausedUntil', 'cutAt', 'changedAt', 'goodPerSecond'}) do
    local u, v = x[f], y[f]
    if u == cjson.null then u = nil end
    if v == cjson.null then v = nil end
    if u ~= v then return false end
  end
  return true
end

-- Writes `next` ('-' = none: back at the policy's limits) over the endpoint's pace if it is still
-- `expected`; returns '' when written, else the stored pace ('-' when none) for the caller to
-- compute its change again from.
local function setPaceIf(endpointKey, expected, next)
  local stored = redis.call('HGET', endpointKey, 'pace') or ''
  if not samePace(stored, expected) then
    if stored == '' then return '-' end
    return stored
  end
  if next == '-' then redis.call('HDEL', endpointKey, 'pace') else redis.call('HSET', endpointKey, 'pace', next) end
  return ''
end

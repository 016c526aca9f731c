-- Retention enforced when a delivery finishes (docs/architecture.md, "Retention"), shared by the
-- scripts that finish and remove deliveries. With a `{days}` policy the delivery and its attempts
-- get a native expiry, so nothing has to sweep them. The event goes when its last delivery goes,
-- whatever mix of policies its endpoints have: it counts its unfinished deliveries
-- (`unfinishedDeliveries`, set by create-event.lua), its finished ones kept by a count policy
-- (`keptByCount`, removed by trim-finished.lua or the janitor, which count them down) and the
-- latest expiry of those kept by days (`keepUntil`, epoch ms). Once both counts are 0 only
-- deliveries that expire by themselves are left, so the event expires at `keepUntil` (or goes at
-- once when that has passed, or none was kept by days). `liveDeliveries` counts the deliveries not
-- removed one by one (a trim, the janitor): at 0 the event goes whatever its expiry said (the
-- janitor removes a deleted endpoint's log before its own expiry). Events written before these
-- fields were counted (none of `unfinishedDeliveries`, `keptByCount`, `keepUntil`) go by
-- `liveDeliveries` alone. Compact records: `unfinishedDeliveries` is removed when it reaches 0
-- (absent reads as 0); by then the event has `keptByCount` or `keepUntil`, which mark it counted.
-- Except where the last delivery to finish leaves nothing kept by count: the event then expires by
-- itself, so that finish writes `unfinishedDeliveries` 0 (its mark of being counted) in its one
-- `HSET` and no `keepUntil`: the event's own expiry is the latest keep time from then on, and
-- whatever reads `keepUntil` after it takes that expiry into account (eventKeptUntil; a redelivery
-- folds it back into `keepUntil` before it clears the expiry, reopen-event.lua).

-- Whether the event counts its deliveries (see above): any of its three counting fields is there.
local function eventCounted(eventKey)
  return redis.call('HEXISTS', eventKey, 'unfinishedDeliveries') == 1 or redis.call('HEXISTS', eventKey, 'keptByCount') == 1
    or redis.call('HEXISTS', eventKey, 'keepUntil') == 1
end

-- The latest keep time of an event's deliveries kept by days: its stored `keepUntil` (nil when
-- absent), or its expiry when later (see above: a last finish leaves it only there). epoch ms.
local function eventKeptUntil(eventKey, stored, nowMs)
  local untilMs = tonumber(stored)
  local ttl = redis.call('PTTL', eventKey)
  if ttl > 0 and (not untilMs or untilMs < tonumber(nowMs) + ttl) then untilMs = tonumber(nowMs) + ttl end
  return untilMs
end

-- What becomes of an event now that none of its deliveries may be unfinished or kept by count:
-- 'keep' while any is, else 'expire' (its PEXPIREAT is set here) or 'delete' (the caller removes
-- it with its index entries). nowMs: the caller's clock, epoch ms.
local function eventAfterRelease(eventKey, nowMs)
  local state = redis.call('HMGET', eventKey, 'unfinishedDeliveries', 'keptByCount', 'keepUntil')
  if (tonumber(state[1]) or 0) > 0 or (tonumber(state[2]) or 0) > 0 then return 'keep' end
  local untilMs = eventKeptUntil(eventKey, state[3], nowMs)
  if untilMs and untilMs > tonumber(nowMs) then
    redis.call('PEXPIREAT', eventKey, untilMs)
    return 'expire'
  end
  return 'delete'
end

-- A delivery finished: deliveryKey, attemptsKey, eventKey are its keys (passed in KEYS by the
-- caller); expiresAt: epoch ms, or '' when the policy keeps the newest N instead; nowMs: epoch ms.
-- hasAttempts: false when the delivery is known to have no attempts hash (no response kept), so
-- it needs no expiry. The event's three counting fields are read at once and written back in one
-- HSET (and one HDEL when unfinishedDeliveries reaches 0 with a delivery kept by count).
local function keepFinishedUntil(deliveryKey, attemptsKey, eventKey, expiresAt, nowMs, hasAttempts)
  if expiresAt ~= '' then
    redis.call('PEXPIREAT', deliveryKey, expiresAt)
    if hasAttempts ~= false then redis.call('PEXPIREAT', attemptsKey, expiresAt) end
  end
  local state = redis.call('HMGET', eventKey, 'unfinishedDeliveries', 'keptByCount', 'keepUntil')
  -- Not counted (eventCounted): none of the three fields.
  if not (state[1] or state[2] or state[3]) then return end
  local unfinished = (tonumber(state[1]) or 0) - 1
  local keptByCount = tonumber(state[2]) or 0
  -- The last to finish, kept by days, nothing kept by count: the event expires with the latest of
  -- its deliveries, and that expiry is where the keep time stays (see above).
  if unfinished <= 0 and keptByCount <= 0 and expiresAt ~= '' then
    local kept = tonumber(state[3])
    if not kept or kept < tonumber(expiresAt) then kept = tonumber(expiresAt) end
    redis.call('HSET', eventKey, 'unfinishedDeliveries', 0)
    redis.call('PEXPIREAT', eventKey, kept)
    return
  end
  local set = {}
  -- Left out at 0 (compact records); the count or expiry set below keeps the event marked counted.
  if unfinished > 0 then
    set[#set + 1] = 'unfinishedDeliveries'
    set[#set + 1] = unfinished
  elseif state[1] then
    redis.call('HDEL', eventKey, 'unfinishedDeliveries')
  end
  if expiresAt == '' then
    set[#set + 1] = 'keptByCount'
    set[#set + 1] = keptByCount + 1
    redis.call('HSET', eventKey, unpack(set))
    return
  end
  local kept = tonumber(state[3])
  if not kept or kept < tonumber(expiresAt) then
    kept = tonumber(expiresAt)
    set[#set + 1] = 'keepUntil'
    set[#set + 1] = expiresAt
  end
  if #set > 0 then redis.call('HSET', eventKey, unpack(set)) end
  -- As eventAfterRelease, with the fields just written: a delivery finished just now expires in the
  -- future, so the event is kept or expires, never deleted.
  if unfinished <= 0 and keptByCount <= 0 and kept > tonumber(nowMs) then redis.call('PEXPIREAT', eventKey, kept) end
end

-- A finished delivery is being removed (a count trim, or the janitor): deliveryKey must still exist.
-- Counts it off its event and returns true when the event is to be deleted now (the caller deletes
-- it and its index entries). A delivery without an expiry was kept by count (or written before
-- expiries); one with an expiry was kept by days and was never counted in `keptByCount`.
local function releaseFinished(deliveryKey, eventKey, nowMs)
  if redis.call('EXISTS', eventKey) == 0 then return false end
  -- Every delivery removed one by one (none expired by itself): nothing refers to the event.
  local live = redis.call('HINCRBY', eventKey, 'liveDeliveries', -1)
  if live <= 0 or not eventCounted(eventKey) then return live <= 0 end
  if redis.call('PTTL', deliveryKey) == -1 and tonumber(redis.call('HGET', eventKey, 'keptByCount') or '0') > 0 then
    redis.call('HINCRBY', eventKey, 'keptByCount', -1)
  end
  return eventAfterRelease(eventKey, nowMs) == 'delete'
end

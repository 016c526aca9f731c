-- Lease fragments shared by acquire-lease, release-lease, claim-attempt and finish-attempt: one
-- copy of the concurrency rules (per endpoint, per org, one claim per event and endpoint).
-- Keys (in this order, as `lk`): 1 endpoint leases zset, 2 org leases zset, 3 endpoint parked zset,
-- 4 org parked zset, 5 event claim string, 6 event claim waiters set.
--
-- The endpoint's parked set is its line (README, "Ordering"): deliveries waiting for a slot, scored
-- by acceptance order (`parkOrder`, the delivery's acceptSeq). A slot goes to the oldest in line:
-- a newcomer takes one only while fewer deliveries stand before it in line than slots are free, so
-- it never overtakes a parked one. Parked deliveries that a release calls stay in line, marked
-- called (score lowered by CALLED_OFFSET, which keeps their order and puts them first), until
-- their claim takes the slot; a called one whose wake-up got lost is called again by the next release.
--
-- The endpoint's hash carries the field `lined` ('1') whenever its line may have members: set by
-- whatever adds a delivery to the line (markLine), so a claim that finds the field absent knows the
-- line empty without looking at it. The field is dropped by the first claim that finds the line
-- empty (whatever emptied it); one left over meanwhile costs that claim the look it took before.

local CALLED_OFFSET = 4e15
-- The endpoint hash's field that says its line may have members.
local LINED_FIELD = 'lined'
-- Appended to the event claim's value (the holder's delivery id) once another delivery waits for
-- it in the claim's waiters set, so a release without waiters never reads that set.
local WAITED_MARK = '*'

-- The delivery id holding an event claim whose stored value is `value` (its waited mark left off).
local function claimHolder(value)
  if value and string.sub(value, -1) == WAITED_MARK then return string.sub(value, 1, -2) end
  return value
end

-- One step of the endpoint's rate limit, a GCRA (pace.ts, gcraStep): `rate` is {key, intervalMs,
-- toleranceMs}, the theoretical arrival time stored at `rate.key`. Takes a turn at `now` and
-- returns nil, or takes none and returns when the next turn conforms (ms).
local function takeRateTurn(rate, now)
  local tat = tonumber(redis.call('GET', rate.key) or '0')
  if tat < now then tat = now end
  if tat - now > rate.toleranceMs then return tat - rate.toleranceMs end
  tat = tat + rate.intervalMs
  redis.call('SET', rate.key, string.format('%.3f', tat), 'PX', math.ceil(tat - now) + 1000)
  return nil
end

-- Marks the endpoint's hash (`line`: as takeLease's) as having someone in its line, unless it is.
local function markLine(line)
  if not line.marked then
    redis.call('HSET', line.key, LINED_FIELD, '1')
    line.marked = true
  end
end

-- Takes one slot of both limits and the event's claim at once, or none. Expired leases (a crashed
-- sender's) are dropped only when a limit looks full, so their slots come back. Taking a lease
-- already held by the same id renews it (a re-run of the same attempt; `mayHold` says whether the
-- caller could hold one, else that look is skipped). A refused delivery is parked where the release
-- that can let it in will find it: the claim's waiters, the endpoint's or the org's parked set
-- (oldest first by `parkOrder`; parking again keeps its place). `wasParked` says whether it may
-- still stand in a parked set (else that clean-up is skipped).
-- `rate` (optional: {key, intervalMs, toleranceMs}) is the endpoint's rate limit, a GCRA whose
-- theoretical arrival time is stored at `rate.key` (pace.ts, gcraStep): checked last, so a token is
-- spent only with a slot; a delivery refused by it keeps its place in line.
-- `line` is {key, marked}: the endpoint's hash (nil when there is no endpoint record to mark) and
-- whether it carries LINED_FIELD. Unmarked, the line is known empty and not looked at; parking in
-- it marks the hash; a marked line found empty is unmarked. Without a key, `marked` must be true.
-- `withClaim` false: no event claim is taken or looked at (a delivery whose event has no second
-- delivery at this endpoint: claim-attempt.lua decides); absent means taken.
-- Returns 1 when held, 0 refused by the endpoint limit (or others first in line), -1 by the org
-- limit, -2 by another delivery's claim on the same event at this endpoint (a redelivery racing a
-- retry), -4 by the rate limit (second value: when to look again, ms: when the next request
-- conforms, plus one interval per delivery before it in line). With 0, the second value is how
-- many deliveries stand before it in line.
local function takeLease(lk, id, now, expiry, perEndpoint, perOrg, parkOrder, leaseMs, mayHold, wasParked, rate, line, withClaim)
  local claimedNow = false
  if withClaim ~= false then claimedNow = redis.call('SET', lk[5], id, 'NX', 'PX', leaseMs) end
  local claim = id
  if withClaim ~= false and not claimedNow then
    claim = redis.call('GET', lk[5])
    local holder = claimHolder(claim)
    if holder ~= id then
      redis.call('SADD', lk[6], id)
      redis.call('PEXPIRE', lk[6], leaseMs)
      -- Marked, so the holder's release knows to wake the waiters without reading their set.
      if holder and holder == claim then redis.call('SET', lk[5], claim .. WAITED_MARK, 'KEEPTTL') end
      return -2
    end
  end
  local refusal = nil
  local inLine = false
  if not (mayHold and redis.call('ZSCORE', lk[1], id)) then
    local taken = redis.call('ZCARD', lk[1])
    if taken >= perEndpoint then
      redis.call('ZREMRANGEBYSCORE', lk[1], '-inf', now)
      taken = redis.call('ZCARD', lk[1])
      if taken >= perEndpoint then refusal = 0 end
    end
    -- Oldest first: with others in line, only the first (free slots) of the line may start.
    if not refusal and line.marked then
      if redis.call('ZCARD', lk[3]) > 0 then
        redis.call('ZADD', lk[3], 'NX', parkOrder, id)
        inLine = true
        if redis.call('ZRANK', lk[3], id) >= perEndpoint - taken then refusal = 0 end
      elseif line.key then
        redis.call('HDEL', line.key, LINED_FIELD)
        line.marked = false
      end
    end
    if not refusal and redis.call('ZCARD', lk[2]) >= perOrg then
      redis.call('ZREMRANGEBYSCORE', lk[2], '-inf', now)
      if redis.call('ZCARD', lk[2]) >= perOrg then refusal = -1 end
    end
  end
  local retryAt = nil
  if not refusal and rate then
    retryAt = takeRateTurn(rate, now)
    if retryAt then refusal = -4 end
  end
  if refusal then
    if claimedNow then redis.call('DEL', lk[5]) end
    if refusal == 0 or refusal == -4 then
      local score = redis.call('ZSCORE', lk[3], id)
      if not score then
        redis.call('ZADD', lk[3], parkOrder, id)
        markLine(line)
      elseif refusal == 0 and tonumber(score) < -CALLED_OFFSET / 2 then
        -- Called, yet no room after all (an expired lease came back late, a narrower pace): it
        -- waits for the next release again, in its place.
        redis.call('ZADD', lk[3], 'XX', tonumber(score) + CALLED_OFFSET, id)
      end
      local ahead = redis.call('ZRANK', lk[3], id)
      -- Those behind it in line come back one interval later each, not all at the next token.
      if refusal == -4 then retryAt = math.ceil(retryAt + ahead * rate.intervalMs) else retryAt = ahead end
    else
      redis.call('ZADD', lk[4], 'NX', parkOrder, id)
    end
    return refusal, retryAt
  end
  redis.call('ZADD', lk[1], expiry, id)
  redis.call('ZADD', lk[2], expiry, id)
  if withClaim ~= false and not claimedNow then redis.call('SET', lk[5], claim, 'PX', leaseMs) end
  if wasParked or inLine then
    redis.call('ZREM', lk[3], id)
    redis.call('ZREM', lk[4], id)
    redis.call('SREM', lk[6], id)
  end
  return 1
end

-- Picks the parked deliveries that free slots let in: the first of the endpoint's line, as many as
-- both limits have free slots (called, left in line until they start), then of the org's parked
-- set, as many as are left free (limits 0 = wake none), taken off it (one that finds no room parks
-- again in its old place). Appends their ids to `woken`. Keys as giveBackLease's (1 to 4 only).
local function callParked(lk, now, perEndpoint, perOrg, woken)
  -- Whether either parked set has anyone (an empty sorted set does not exist): one EXISTS of both,
  -- a second only when exactly one of them does, so a release with nothing parked costs one command.
  local parked = redis.call('EXISTS', lk[3], lk[4])
  local parkedOnEndpoint, parkedOnOrg = parked, parked
  if parked == 1 then
    parkedOnEndpoint = redis.call('EXISTS', lk[3])
    parkedOnOrg = 1 - parkedOnEndpoint
  end
  if parked > 0 then
    redis.call('ZREMRANGEBYSCORE', lk[1], '-inf', now)
    redis.call('ZREMRANGEBYSCORE', lk[2], '-inf', now)
    local freeOrg = perOrg - redis.call('ZCARD', lk[2])
    local freeEndpoint = math.min(perEndpoint - redis.call('ZCARD', lk[1]), freeOrg)
    if freeEndpoint > 0 and parkedOnEndpoint > 0 then
      -- The first of the line are called, not taken off it: newcomers keep waiting behind them.
      local first = redis.call('ZRANGE', lk[3], 0, freeEndpoint - 1, 'WITHSCORES')
      for i = 1, #first, 2 do
        table.insert(woken, first[i])
        local score = tonumber(first[i + 1])
        if score > -CALLED_OFFSET / 2 then redis.call('ZADD', lk[3], 'XX', score - CALLED_OFFSET, first[i]) end
      end
      freeOrg = freeOrg - #first / 2
    end
    if freeOrg > 0 and parkedOnOrg > 0 then
      local popped = redis.call('ZPOPMIN', lk[4], freeOrg)
      for i = 1, #popped, 2 do table.insert(woken, popped[i]) end
    end
  end
end

-- Gives back a lease and its event claim, and picks the parked deliveries that may now have room:
-- every waiter of the claim, then those callParked picks.
-- `wasParked` says whether the delivery itself may still stand in a parked set (one settled while
-- parked), else that clean-up is skipped.
-- `releaseClaim` false: the delivery is known to hold no event claim (finish-attempt.lua reads that
-- from its hash), so the claim is not looked at; absent means it is.
-- Appends the woken ids to `woken`; returns 1 when a lease was held, else 0.
local function giveBackLease(lk, id, now, perEndpoint, perOrg, woken, wasParked, releaseClaim)
  local released = redis.call('ZREM', lk[1], id) + redis.call('ZREM', lk[2], id)
  if wasParked then
    redis.call('ZREM', lk[3], id)
    redis.call('ZREM', lk[4], id)
    redis.call('SREM', lk[6], id)
  end
  -- The claim is taken off in one command: it is nearly always this delivery's own. One taken
  -- over by another delivery after this one's lease ran out is put back until that delivery's
  -- lease runs out (its score in the endpoint's leases); waiters are read only when marked there.
  local claim = nil
  if releaseClaim ~= false then claim = redis.call('GETDEL', lk[5]) end
  if claim == id .. WAITED_MARK then
    local waiters = redis.call('SMEMBERS', lk[6])
    for _, waiter in ipairs(waiters) do
      if waiter ~= id then table.insert(woken, waiter) end
    end
    redis.call('DEL', lk[6])
  elseif claim and claim ~= id then
    local until_ = tonumber(redis.call('ZSCORE', lk[1], claimHolder(claim)))
    if until_ and until_ > now then redis.call('SET', lk[5], claim, 'PXAT', math.ceil(until_)) end
  end
  callParked(lk, now, perEndpoint, perOrg, woken)
  if released > 0 then return 1 end
  return 0
end

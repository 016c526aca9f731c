-- Lease fragments shared by acquire-lease, release-lease, claim-attempt and finish-attempt: one
-- copy of the concurrency rules (per endpoint, per org, one claim per event and endpoint).
-- Keys (in this order, as `lk`): 1 endpoint leases zset, 2 org leases zset, 3 endpoint parked zset,
-- 4 org parked zset, 5 event claim string, 6 event claim waiters set.

-- Takes one slot of both limits and the event's claim at once, or none. Expired leases (a crashed
-- sender's) are dropped only when a limit looks full, so their slots come back. Taking a lease
-- already held by the same id renews it (a re-run of the same attempt; `mayHold` says whether the
-- caller could hold one, else that look is skipped). A refused delivery is parked where the release
-- that can let it in will find it: the claim's waiters, the endpoint's or the org's parked set
-- (oldest first by `parkOrder`; parking again keeps its place). `wasParked` says whether it may
-- still stand in a parked set (else that clean-up is skipped).
-- Returns 1 when held, 0 refused by the endpoint limit, -1 by the org limit, -2 by another
-- delivery's claim on the same event at this endpoint (a redelivery racing a retry).
local function takeLease(lk, id, now, expiry, perEndpoint, perOrg, parkOrder, leaseMs, mayHold, wasParked)
  local claimedNow = redis.call('SET', lk[5], id, 'NX', 'PX', leaseMs)
  if not claimedNow and redis.call('GET', lk[5]) ~= id then
    redis.call('SADD', lk[6], id)
    redis.call('PEXPIRE', lk[6], leaseMs)
    return -2
  end
  local refusal = nil
  if not (mayHold and redis.call('ZSCORE', lk[1], id)) then
    if redis.call('ZCARD', lk[1]) >= perEndpoint then
      redis.call('ZREMRANGEBYSCORE', lk[1], '-inf', now)
      if redis.call('ZCARD', lk[1]) >= perEndpoint then refusal = 0 end
    end
    if not refusal and redis.call('ZCARD', lk[2]) >= perOrg then
      redis.call('ZREMRANGEBYSCORE', lk[2], '-inf', now)
      if redis.call('ZCARD', lk[2]) >= perOrg then refusal = -1 end
    end
  end
  if refusal then
    if claimedNow then redis.call('DEL', lk[5]) end
    if refusal == 0 then redis.call('ZADD', lk[3], 'NX', parkOrder, id) else redis.call('ZADD', lk[4], 'NX', parkOrder, id) end
    return refusal
  end
  redis.call('ZADD', lk[1], expiry, id)
  redis.call('ZADD', lk[2], expiry, id)
  if not claimedNow then redis.call('SET', lk[5], id, 'PX', leaseMs) end
  if wasParked then
    redis.call('ZREM', lk[3], id)
    redis.call('ZREM', lk[4], id)
    redis.call('SREM', lk[6], id)
  end
  return 1
end

-- Gives back a lease and its event claim, and picks the parked deliveries that may now have room:
-- every waiter of the claim; the oldest parked deliveries of the endpoint, as many as both limits
-- have free slots; then of the org, as many as are left free (limits 0 = wake none). Each woken one
-- is taken off its parked set; one that finds no room after all parks again in its old place.
-- `wasParked` says whether the delivery itself may still stand in a parked set (one settled while
-- parked), else that clean-up is skipped.
-- Appends the woken ids to `woken`; returns 1 when a lease was held, else 0.
local function giveBackLease(lk, id, now, perEndpoint, perOrg, woken, wasParked)
  local released = redis.call('ZREM', lk[1], id) + redis.call('ZREM', lk[2], id)
  if wasParked then
    redis.call('ZREM', lk[3], id)
    redis.call('ZREM', lk[4], id)
    redis.call('SREM', lk[6], id)
  end
  if redis.call('GET', lk[5]) == id then
    redis.call('DEL', lk[5])
    local waiters = redis.call('SMEMBERS', lk[6])
    if #waiters > 0 then
      for _, waiter in ipairs(waiters) do
        if waiter ~= id then table.insert(woken, waiter) end
      end
      redis.call('DEL', lk[6])
    end
  end
  local parkedOnEndpoint = redis.call('ZCARD', lk[3])
  local parkedOnOrg = redis.call('ZCARD', lk[4])
  if parkedOnEndpoint + parkedOnOrg > 0 then
    redis.call('ZREMRANGEBYSCORE', lk[1], '-inf', now)
    redis.call('ZREMRANGEBYSCORE', lk[2], '-inf', now)
    local freeOrg = perOrg - redis.call('ZCARD', lk[2])
    local freeEndpoint = math.min(perEndpoint - redis.call('ZCARD', lk[1]), freeOrg)
    if freeEndpoint > 0 and parkedOnEndpoint > 0 then
      local popped = redis.call('ZPOPMIN', lk[3], freeEndpoint)
      for i = 1, #popped, 2 do table.insert(woken, popped[i]) end
      freeOrg = freeOrg - #popped / 2
    end
    if freeOrg > 0 and parkedOnOrg > 0 then
      local popped = redis.call('ZPOPMIN', lk[4], freeOrg)
      for i = 1, #popped, 2 do table.insert(woken, popped[i]) end
    end
  end
  if released > 0 then return 1 end
  return 0
end

-- The first of the two calls of ours per attempt: reads what the attempt needs and, when nothing
-- stands in the way, takes the concurrency lease and begins the attempt, all at once.
-- KEYS[1..6] lease keys (includes/lease.lua: endpoint leases, org leases, endpoint parked, org
-- parked, event claim, event claim waiters), KEYS[7] delivery hash, KEYS[8] attempts hash,
-- KEYS[9] endpoint hash, KEYS[10] org hash, KEYS[11] event hash, KEYS[12] endpoint's held index,
-- KEYS[13] endpoint's key lines, KEYS[14] endpoint's rate limit state. The delivery's status
-- indexes are not among them: it stays in its endpoint's pending index while in flight.
-- ARGV[1] delivery id, ARGV[2] now (ms), ARGV[3] lease grace (ms, added to the policy's timeout:
-- how long a crashed sender's slot stays taken), ARGV[4] event id (the one KEYS[11] is built from:
-- compact records leave it out of the delivery hash when it is derived from the delivery's id),
-- ARGV[5] the rate limit's sending lag (ms, RATE_SEND_LAG_MS).
-- A delivery hash leaves out createdAt when it is the time in the delivery's id (records.ts).
-- A redelivery's claim also reads the deliveries of its redelivery chain, whose keys it builds from
-- KEYS[7] (the same org, so the same hash tag and cluster slot): their ids are known only here.
-- Returns one of:
--   {'missing'}                              no such delivery
--   {'finished', status, woken...}           already ended (a slot it still held is given back)
--   {'not_due', nextAttemptAt}               a retry scheduled later (ms) at an endpoint that still exists: nothing taken, the job
--                                            waits until then
--   {'blocked', delivery, endpoint, org, envelopeBytes, woken...}
--                                            endpoint gone or inactive, org suspended, event type
--                                            switched off by the org or payload over the policy's
--                                            limit: planBeforeAttempt decides
--   {'parked', refusal[, detail]}            no slot: 0 endpoint full (or older deliveries first in
--                                            line; detail: how many stand before it), -1 org full,
--                                            -2 event claim, -3 an earlier delivery
--                                            of its ordering key first (detail: its key line entry),
--                                            -4 rate limit or paused pace (detail: when to look again, ms)
--   {'claimed', attemptNumber, delivery, endpoint, envelope | false, org}
-- where delivery and endpoint are their hashes as field, value lists (endpoint {} when gone) and
-- envelopeBytes is -1 when the event is gone; org is the org's status, disabledEventTypes,
-- preAttemptCheckUrl and preAttemptCheckSecret (records.ts: parseOrgAttemptSettings), read only
-- when the endpoint carries the org's gate (includes/org-gate.lua), else all four absent: an org
-- without the gate has none of them. A delivery found in_flight was interrupted (its sender died
-- mid-attempt): the same attempt number runs again rather than spending a new one.
-- The endpoint's line is looked at only when the endpoint is marked `lined` (includes/lease.lua).
--- @include "lease"
--- @include "compact-hash"
--- @include "org-gate"

-- Whether the org's disabledEventTypes (JSON array) switch the event type off: an equal entry, or
-- a `prefix.*` entry whose `prefix.` starts the type (pre-attempt-check.ts: isEventTypeDisabled).
local function eventTypeDisabled(list, eventType)
  if not list or not eventType then return false end
  for _, entry in ipairs(cjson.decode(list)) do
    if entry == eventType then return true end
    if string.sub(entry, -2) == '.*' and string.sub(eventType, 1, #entry - 1) == string.sub(entry, 1, -2) then return true end
  end
  return false
end

local id = ARGV[1]
local now = tonumber(ARGV[2])
local delivery = redis.call('HGETALL', KEYS[7])
if #delivery == 0 then
  redis.call('ZREM', KEYS[3], id)
  return {'missing'}
end
local d = {}
for i = 1, #delivery, 2 do d[delivery[i]] = delivery[i + 1] end
local endpoint = redis.call('HGETALL', KEYS[9])
local e = {}
for i = 1, #endpoint, 2 do e[endpoint[i]] = endpoint[i + 1] end
local policy = e.policy and cjson.decode(e.policy) or nil
local perEndpoint, perOrg = 0, 0
if policy then perEndpoint, perOrg = policy.concurrency.perEndpoint, policy.concurrency.perOrg end

local status = d.status
if status == 'succeeded' or status == 'failed' or status == 'cancelled' then
  -- A sender killed between finishing an attempt and giving back its slot leaves the slot taken
  -- until its lease expires; the job's re-run finds the delivery ended and frees it.
  local woken = {}
  giveBackLease(KEYS, id, now, perEndpoint, perOrg, woken, d.parked == '1')
  return {'finished', status, unpack(woken)}
end

-- A retry starts at its time, whoever runs its job: a wake-up meant for the delivery while it was
-- parked may reach its job after it was attempted and rescheduled (several senders), and must not
-- start the next attempt early. The job waits again until the delivery's own next attempt time.
-- Unless its endpoint is gone: then no attempt is coming, and it is settled now (blocked, below),
-- not when the wait runs out (deleting an endpoint wakes its waiting deliveries for this).
if status == 'pending' and d.nextAttemptAt and d.nextAttemptAt ~= '' and tonumber(d.nextAttemptAt) > now and #endpoint > 0 then
  return {'not_due', d.nextAttemptAt}
end

local org = {false, false, false, false}
if e[ORG_GATE_FIELD] then
  org = redis.call('HMGET', KEYS[10], 'status', 'disabledEventTypes', 'preAttemptCheckUrl', 'preAttemptCheckSecret')
end
local orgStatus = org[1] or ''
local eventId = ARGV[4]
if not eventId or eventId == '' then eventId = d.eventId or '' end
local envelope, event = hgetEnvelope(KEYS[11], eventId)
local maxPayload = policy and policy.maxPayloadBytes
if not policy or e.status ~= 'active' or orgStatus == 'suspended' or eventTypeDisabled(org[2], d.eventType)
  or (type(maxPayload) == 'number' and envelope and #envelope > maxPayload) then
  local woken = {}
  giveBackLease(KEYS, id, now, perEndpoint, perOrg, woken, d.parked == '1')
  return {'blocked', delivery, endpoint, org, envelope and #envelope or -1, unpack(woken)}
end

-- Per-key order (policy ordering 'per-key'): only the first unfinished delivery of a key may go.
if d.keyLine and policy.ordering == 'per-key' and status ~= 'in_flight' then
  local keyHash = string.sub(d.keyLine, 1, 32)
  local first = redis.call('ZRANGEBYLEX', KEYS[13], '[' .. keyHash .. '|', '(' .. keyHash .. '}', 'LIMIT', 0, 1)[1]
  if first and first ~= d.keyLine then return {'parked', -3, d.keyLine} end
end

-- The limits now: the policy's, narrowed by the endpoint's pace under adaptive pacing (pace.ts,
-- effectiveLimits). A paused endpoint sends nothing until the pause ends.
local parkOrder = d.acceptSeq or d.createdAt or ulidTimeMs(id) or 0
local line = {key = KEYS[9], marked = e[LINED_FIELD] ~= nil}
local rate = nil
local perEndpointNow = perEndpoint
local ratePerSecond = policy.rateLimit and policy.rateLimit ~= cjson.null and policy.rateLimit.perSecond or nil
local burst = ratePerSecond and policy.rateLimit.burst or 0
if policy.pacing == 'adaptive' and e.pace then
  local pace = cjson.decode(e.pace)
  -- An interrupted attempt (in_flight: its sender died, or Redis went away, mid-attempt) waits too:
  -- running it again is a request like any other, and the receiver asked for none until then.
  if pace.pausedUntil ~= cjson.null and pace.pausedUntil > now then
    redis.call('ZADD', KEYS[3], 'NX', parkOrder, id)
    markLine(line)
    if d.parked ~= '1' then redis.call('HSET', KEYS[7], 'parked', '1') end
    return {'parked', -4, pace.pausedUntil}
  end
  perEndpointNow = math.max(1, math.min(perEndpoint, math.floor(pace.concurrency)))
  if pace.perSecond ~= cjson.null and (not ratePerSecond or pace.perSecond < ratePerSecond) then ratePerSecond = pace.perSecond end
end
-- Turns are spaced for one second plus the sending lag (ARGV[5]: rate-limit.ts, rateIntervalMs),
-- so a request sent up to that long after its turn still keeps the bound at the receiver.
if ratePerSecond then
  local intervalMs = (1000 + tonumber(ARGV[5])) / ratePerSecond
  rate = {key = KEYS[14], intervalMs = intervalMs, toleranceMs = burst * intervalMs}
end

-- The event claim (one delivery of an event at a time at an endpoint: includes/lease.lua) matters
-- only where the event can have a second delivery at this endpoint: a redelivery, or any delivery
-- of an event one of whose redeliveries has claimed (`redelivered` on the event). Every other
-- attempt neither takes nor gives back a claim.
local withClaim = d.redeliveredFromId ~= nil or (event ~= nil and event.redelivered == '1')
if d.redeliveredFromId and status ~= 'in_flight' then
  if event and event.redelivered ~= '1' then redis.call('HSET', KEYS[11], 'redelivered', '1') end
  -- The original (the first of the redelivery chain) took no claim if its attempt began before
  -- that: while such an attempt runs, the claim is taken on its behalf until its lease runs out,
  -- and marked on it (`claimHeld`), so its finish gives the claim back and wakes this delivery.
  local deliveryPrefix = string.sub(KEYS[7], 1, #KEYS[7] - #id)
  local originalId = d.redeliveredFromId
  local original = redis.call('HMGET', deliveryPrefix .. originalId, 'redeliveredFromId', 'status')
  for _ = 1, 100 do
    if not original[1] then break end
    originalId = original[1]
    original = redis.call('HMGET', deliveryPrefix .. originalId, 'redeliveredFromId', 'status')
  end
  if original[2] == 'in_flight' and redis.call('EXISTS', KEYS[5]) == 0 then
    local leaseUntil = tonumber(redis.call('ZSCORE', KEYS[1], originalId))
    if leaseUntil and leaseUntil > now then
      redis.call('SET', KEYS[5], originalId .. WAITED_MARK, 'PXAT', math.ceil(leaseUntil))
      redis.call('HSET', deliveryPrefix .. originalId, 'claimHeld', '1')
      redis.call('SADD', KEYS[6], id)
      redis.call('PEXPIREAT', KEYS[6], math.ceil(leaseUntil))
      if d.parked ~= '1' then redis.call('HSET', KEYS[7], 'parked', '1') end
      return {'parked', -2}
    end
  end
end

local leaseMs = policy.timeout.ms + tonumber(ARGV[3])
local lease, retryAt = takeLease(KEYS, id, now, now + leaseMs, perEndpointNow, perOrg, parkOrder, leaseMs,
  status == 'in_flight', d.parked == '1', rate, line, withClaim)
if lease ~= 1 then
  -- Remembered, so the claim that lets it in later knows to take it off its parked set.
  if d.parked ~= '1' then redis.call('HSET', KEYS[7], 'parked', '1') end
  return {'parked', lease, retryAt}
end

-- The delivery stays in its endpoint's pending index while in flight (the finish moves it on):
-- two index writes fewer per attempt; lists of either status read the status from the delivery.
local number = tonumber(d.attempts or '0')
if status ~= 'in_flight' then number = number + 1 end
-- The attempt's start time is in its attempt record only (compact records). The attempt's core,
-- in the delivery's own hash (attempt-encoding.ts), goes with the same write: short, it is stored
-- as its first piece (`a<n>~0`, read as the whole value while alone), so finish-attempt.lua
-- replaces it with the finished core's pieces without deleting anything first. A re-run of an
-- interrupted attempt finds it whole too.
local begun = {'status', 'in_flight', 'attempts', number, 'updatedAt', now, 'a' .. number .. '~0', '[' .. now .. ']'}
-- A delivery that took the event claim says so (`claimHeld`), so its finish gives the claim back.
if withClaim then
  begun[#begun + 1] = 'claimHeld'
  begun[#begun + 1] = '1'
end
redis.call('HSET', KEYS[7], unpack(begun))
if d.held == '1' or d.parked == '1' then
  redis.call('HDEL', KEYS[7], 'held', 'parked', 'heldReason')
  redis.call('ZREM', KEYS[12], id)
end
return {'claimed', number, delivery, endpoint, envelope or false, org}

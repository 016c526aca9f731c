-- The second of the two calls of ours per attempt: records the outcome of an attempt begun by
-- claim-attempt.lua, moves the delivery on as planAfterAttempt decided, updates the endpoint's
-- failure streak, gives back the lease and names the parked deliveries to wake, all at once.
-- The overview's counters (keys.statsHour) are not written here: the sender counts each finished
-- attempt in memory and writes the sums about once a second (stats-flusher.ts), with the live
-- feed's expiry; neither needs to be atomic with the outcome.
-- KEYS[1..6] lease keys (includes/lease.lua), KEYS[7] delivery hash, KEYS[8] attempts hash,
-- KEYS[9] endpoint hash, KEYS[10] endpoint's pending index (where an attempt's delivery stays
-- while in flight), KEYS[11] endpoint's index of the next status, KEYS[12] event hash,
-- KEYS[13..15] endpoint's succeeded, failed and cancelled indexes (for the count a
-- `{lastPerEndpoint}` trim needs), KEYS[16] endpoint's key lines (per-key ordering), KEYS[17] the
-- org's live feed (includes/live-feed.lua), KEYS[18] endpoint's in_flight index (where a release
-- before this one put a claimed delivery).
-- ARGV[1] delivery id, ARGV[2] now (ms), ARGV[3] attempt number,
-- ARGV[4] next status: 'succeeded' | 'pending' (retry scheduled) | 'failed' | 'cancelled' (the
-- org's pre-attempt check said so: nothing was sent; health is left alone),
-- ARGV[5] the attempt as attempt-encoding.ts encodes it (its core; a newline and the response when kept), ARGV[6] response status or '', ARGV[7] error code or '',
-- ARGV[8] duration (ms), ARGV[9] next attempt at (ms) or '',
-- ARGV[10] health effect on the endpoint: 'success' | 'failure' | 'none',
-- ARGV[11] per-endpoint limit, ARGV[12] per-org limit (for waking parked deliveries),
-- ARGV[13] when a finished delivery expires (epoch ms; '' = kept until trimmed by count),
-- ARGV[14] '1' when the failure shows in the endpoint's health (isEndpointFailure: every error but
-- Postern's own internal:* faults), ARGV[15] the endpoint's next pace (adaptive pacing): '' = no
-- change, '-' = back at the policy's limits (removed), else its JSON; ARGV[16] the pace (JSON) the
-- attempt was claimed under ('' = none), ARGV[17] '1' when the next pace is a slow-down's (its
-- pace is returned when it could not be written), ARGV[18] cancel reason (with 'cancelled'),
-- ARGV[19] endpoint id, ARGV[20] event id, ARGV[21] live feed's cap (entries; '0' = off),
-- ARGV[22] live feed's time to live (s). A recorded outcome is appended to the live feed; the
-- expiry is set here only when this append creates the feed, the sender renews it otherwise.
-- Such a failed attempt sets lastFailureAt and counts in failedAttempts and
-- consecutiveFailedAttempts, whether or not the policy's breaker counts it (consecutiveFailures is
-- the breaker's own streak).
-- The outcome is recorded only while the attempt is still the delivery's current one; the lease is
-- given back either way. Returns {'ok' | 'stale', consecutiveFailures, failureStreakStartedAt | '',
-- finished deliveries of the endpoint now (0 unless this attempt finished the delivery), the stored
-- pace when a slow-down's could not be written ('-' = none; '' otherwise), woken...}.
--- @include "lease"
--- @include "retention"
--- @include "key-line"
--- @include "compact-hash"
--- @include "pace"
--- @include "live-feed"
-- How far an endpoint's lastSuccessAt may trail its latest success (ms).
local LAST_SUCCESS_RESOLUTION_MS = 1000
local id = ARGV[1]
local now = ARGV[2]
local woken = {}
-- Besides what the stale check needs, the fields this finish may have to remove: the attempt's core
-- as claim-attempt.lua left it (its first piece; whole when an older release claimed it), a retry's
-- nextAttemptAt, fields records before compact records kept (absent reads as null), and
-- `claimHeld` (the delivery holds its event's claim at this endpoint: claim-attempt.lua).
local coreField = 'a' .. ARGV[3]
local current = redis.call('HMGET', KEYS[7], 'status', 'attempts', 'keyLine', 'eventType', coreField, coreField .. '~0',
  'nextAttemptAt', 'lastResponseStatus', 'lastError', 'lastDurationMs', 'finishedAt', 'deliveredAt', 'claimHeld')
-- The event claim is looked at only when the delivery took one (or one was taken on its behalf).
giveBackLease(KEYS, id, tonumber(now), tonumber(ARGV[11]), tonumber(ARGV[12]), woken, false, current[13] == '1')
if current[1] ~= 'in_flight' or current[2] ~= ARGV[3] then return {'stale', 0, '', 0, '', unpack(woken)} end

local nextStatus = ARGV[4]
appendLiveChange(KEYS[17], ARGV[21], ARGV[22], {'d', id, 'p', ARGV[19], 'v', ARGV[20], 't', current[4], 's', nextStatus,
  'n', ARGV[3], 'r', ARGV[6], 'x', nextStatus == 'cancelled' and ARGV[18] or ARGV[7], 'ms', ARGV[8], 'a', ARGV[9], 'at', now}, true)
local finishedCount = 0
-- The attempt's core in the delivery's hash; its response, when kept, in the attempts hash.
-- Compact records: the delivery's lastResponseStatus, lastError and lastDurationMs are read from
-- this core (parseDelivery), so ARGV[6..8] are not stored a second time; a finished delivery's
-- updatedAt is its finishedAt, and a succeeded one's deliveredAt too (parseDelivery derives them).
-- The delivery is written with one HSET, and an HDEL only when something stored must go.
local core, response = string.match(ARGV[5], '^([^\n]*)\n?(.*)$')
local set = {'status', nextStatus, 'updatedAt', now}
local del = {}
-- Fresh: an attempt is finished once (the stale check above), and its core was never split before.
local pieces = splitPieces(coreField, core, set)
if pieces > 0 and current[5] then del[#del + 1] = coreField end
if pieces == 0 and current[6] then del[#del + 1] = coreField .. '~0' end
if response ~= '' then
  local responseFields = {}
  splitPieces(ARGV[3], response, responseFields)
  redis.call('HSET', KEYS[8], unpack(responseFields))
end
if nextStatus == 'pending' and ARGV[9] ~= '' then
  set[#set + 1] = 'nextAttemptAt'
  set[#set + 1] = ARGV[9]
elseif current[7] then
  del[#del + 1] = 'nextAttemptAt'
end
for i, field in ipairs({'lastResponseStatus', 'lastError', 'lastDurationMs', 'finishedAt', 'deliveredAt', 'claimHeld'}) do
  if current[7 + i] then del[#del + 1] = field end
end
if nextStatus == 'cancelled' then
  set[#set + 1] = 'cancelReason'
  set[#set + 1] = ARGV[18]
end
redis.call('HSET', KEYS[7], unpack(set))
if #del > 0 then redis.call('HDEL', KEYS[7], unpack(del)) end
-- From the pending index to the next status's (a retry stays where it is). A delivery claimed by a
-- release that still moved it to the in_flight index is found there instead.
if nextStatus == 'pending' then
  if redis.call('ZADD', KEYS[11], 'NX', 0, id) == 1 then redis.call('ZREM', KEYS[18], id) end
else
  if redis.call('ZREM', KEYS[10], id) == 0 then redis.call('ZREM', KEYS[18], id) end
  redis.call('ZADD', KEYS[11], 0, id)
end
if nextStatus ~= 'pending' then
  -- No attempts hash unless a response was kept, now or by an earlier attempt.
  keepFinishedUntil(KEYS[7], KEYS[8], KEYS[12], ARGV[13], now, response ~= '' or ARGV[3] ~= '1')
  if current[3] then leaveKeyLine(KEYS[16], current[3], woken) end
  -- Only a `{lastPerEndpoint}` policy (no expiry given) trims by count; `{days}` needs no count.
  if ARGV[13] == '' then
    finishedCount = redis.call('ZCARD', KEYS[13]) + redis.call('ZCARD', KEYS[14]) + redis.call('ZCARD', KEYS[15])
  end
end
if nextStatus == 'cancelled' then
  return {'ok', 0, '', finishedCount, '', unpack(woken)}
end

local streak = redis.call('HMGET', KEYS[9], 'id', 'consecutiveFailures', 'failureStreakStartedAt', 'consecutiveFailedAttempts', 'lastSuccessAt')
local failures = 0
local streakStart = ''
local failed = ARGV[7] ~= ''
if streak[1] then
  failures = tonumber(streak[2] or '0') or 0
  streakStart = streak[3] or ''
  if ARGV[10] == 'failure' then
    failures = redis.call('HINCRBY', KEYS[9], 'consecutiveFailures', 1)
    if failures == 1 or streakStart == '' then streakStart = now end
  elseif ARGV[10] == 'success' then
    failures = 0
    streakStart = ''
  end
  if ARGV[14] == '1' then
    redis.call('HINCRBY', KEYS[9], 'failedAttempts', 1)
    redis.call('HINCRBY', KEYS[9], 'consecutiveFailedAttempts', 1)
    redis.call('HSET', KEYS[9], 'failureStreakStartedAt', streakStart, 'lastFailureAt', now, 'consecutiveFailures', failures)
  elseif failed then
    if ARGV[10] == 'failure' then redis.call('HSET', KEYS[9], 'failureStreakStartedAt', streakStart) end
  elseif (tonumber(streak[2]) or 0) ~= 0 or (streak[3] or '') ~= '' or (tonumber(streak[4]) or 0) ~= 0
    or (tonumber(streak[5]) or 0) < tonumber(now) - LAST_SUCCESS_RESOLUTION_MS then
    -- No error is always the health effect 'success' (healthEffect): every streak ends. With no
    -- streak to end, lastSuccessAt is rewritten at most once per LAST_SUCCESS_RESOLUTION_MS, so
    -- an endpoint taking a steady stream of deliveries is not written on each of them.
    redis.call('HSET', KEYS[9], 'consecutiveFailures', 0, 'failureStreakStartedAt', '', 'lastSuccessAt', now, 'consecutiveFailedAttempts', 0)
  end
end

-- Adaptive pacing (pace.ts, nextPace): the next pace is written only over the pace it was
-- computed from (compare and set). A raise that finds it changed is dropped (the next success makes
-- up for it: raises grow with time); a slow-down is not merged here: the stored pace is returned
-- and the sender computes the cut again from it, so the law stays in one place.
local paceNow = ''
if ARGV[15] ~= '' then
  paceNow = setPaceIf(KEYS[9], ARGV[16], ARGV[15])
  if ARGV[17] ~= '1' then paceNow = '' end
end

return {'ok', failures, streakStart, finishedCount, paceNow, unpack(woken)}

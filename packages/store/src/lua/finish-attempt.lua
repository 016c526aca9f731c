-- Records the outcome of an attempt claimed by begin-attempt.lua and moves the delivery on.
-- KEYS[1] delivery hash, KEYS[2] attempts hash, KEYS[3] unfinished zset, KEYS[4] endpoint hash.
-- ARGV[1] key prefix, ARGV[2] now (ms), ARGV[3] attempt number,
-- ARGV[4] next status: 'succeeded' | 'pending' (retry scheduled) | 'failed',
-- ARGV[5] attempt record JSON, ARGV[6] response status or '', ARGV[7] error code or '',
-- ARGV[8] duration (ms), ARGV[9] next attempt at (ms) or '',
-- ARGV[10] health effect on the endpoint: 'success' | 'failure' | 'none'.
-- Returns {'stale'} when the attempt is no longer the delivery's current one, else
-- {'ok', consecutiveFailures, failureStreakStartedAt}.
local status = redis.call('HGET', KEYS[1], 'status')
local attempts = redis.call('HGET', KEYS[1], 'attempts')
if status ~= 'in_flight' or attempts ~= ARGV[3] then return {'stale'} end
local id = redis.call('HGET', KEYS[1], 'id')
local endpointId = redis.call('HGET', KEYS[1], 'endpointId')
local base = ARGV[1] .. ':endpoint:' .. endpointId .. ':deliveries:'
local nextStatus = ARGV[4]
redis.call('HSET', KEYS[2], ARGV[3], ARGV[5])
redis.call('ZREM', base .. 'in_flight', id)
redis.call('ZADD', base .. nextStatus, 0, id)
redis.call('HSET', KEYS[1], 'status', nextStatus, 'lastResponseStatus', ARGV[6], 'lastError', ARGV[7],
  'lastDurationMs', ARGV[8], 'nextAttemptAt', ARGV[9], 'updatedAt', ARGV[2])
if nextStatus == 'succeeded' then
  redis.call('HSET', KEYS[1], 'deliveredAt', ARGV[2], 'finishedAt', ARGV[2])
  redis.call('ZREM', KEYS[3], id)
elseif nextStatus == 'failed' then
  redis.call('HSET', KEYS[1], 'finishedAt', ARGV[2])
  redis.call('ZREM', KEYS[3], id)
end
local failures = 0
local streakStart = ''
if redis.call('EXISTS', KEYS[4]) == 1 then
  if ARGV[10] == 'success' then
    redis.call('HSET', KEYS[4], 'consecutiveFailures', 0, 'failureStreakStartedAt', '', 'lastSuccessAt', ARGV[2])
  elseif ARGV[10] == 'failure' then
    failures = redis.call('HINCRBY', KEYS[4], 'consecutiveFailures', 1)
    if failures == 1 or redis.call('HGET', KEYS[4], 'failureStreakStartedAt') == '' then
      redis.call('HSET', KEYS[4], 'failureStreakStartedAt', ARGV[2])
    end
    redis.call('HSET', KEYS[4], 'lastFailureAt', ARGV[2])
  end
  failures = tonumber(redis.call('HGET', KEYS[4], 'consecutiveFailures') or '0')
  streakStart = redis.call('HGET', KEYS[4], 'failureStreakStartedAt') or ''
end
return {'ok', failures, streakStart}

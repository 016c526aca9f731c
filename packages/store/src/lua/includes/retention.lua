-- Retention enforced when a delivery finishes (docs/architecture.md, "Retention"), shared by the
-- scripts that finish deliveries. With a `{days}` policy the delivery and its attempts get a
-- native expiry, so nothing has to sweep them. The event goes when its last delivery goes: it
-- counts its unfinished deliveries (`unfinishedDeliveries`, set by create-event.lua) and the latest
-- expiry of its finished ones (`keepUntil`; 'count' once one is kept by a `{lastPerEndpoint}` policy,
-- whose trim removes the event with its last delivery); it expires at `keepUntil` once none is
-- unfinished. Events written before these fields were counted are left to the trim and the janitor.
-- deliveryKey, attemptsKey, eventKey: the finishing delivery's keys (passed in KEYS by the caller);
-- expiresAt: epoch ms, or '' when the policy keeps the newest N instead.
local function keepFinishedUntil(deliveryKey, attemptsKey, eventKey, expiresAt)
  if expiresAt ~= '' then
    redis.call('PEXPIREAT', deliveryKey, expiresAt)
    redis.call('PEXPIREAT', attemptsKey, expiresAt)
  end
  if redis.call('HEXISTS', eventKey, 'unfinishedDeliveries') == 0 then return end
  local left = redis.call('HINCRBY', eventKey, 'unfinishedDeliveries', -1)
  local kept = redis.call('HGET', eventKey, 'keepUntil')
  local keep = expiresAt
  if expiresAt == '' or kept == 'count' then keep = 'count'
  elseif kept and tonumber(kept) and tonumber(kept) > tonumber(expiresAt) then keep = kept end
  redis.call('HSET', eventKey, 'keepUntil', keep)
  if left <= 0 and keep ~= 'count' then redis.call('PEXPIREAT', eventKey, keep) end
end

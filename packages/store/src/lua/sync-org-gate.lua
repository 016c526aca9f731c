-- Brings the org's gate (includes/org-gate.lua) onto the given endpoints of the org: `orgGate` set
-- while the org has attempt settings the claim must read, removed otherwise; an endpoint hash is
-- written only when it exists (one deleted meanwhile is not brought back) and its field differs.
-- Run in the same transaction as every change of those settings (org-repository.ts) and as the
-- creation of an endpoint, and alone by syncOrgGate (claim-marks.ts): after a change that missed
-- an endpoint created meanwhile, and for data written before the gate.
-- KEYS[1] org hash, KEYS[2] the org's endpoints index, KEYS[3..] endpoint hashes.
-- Returns how many endpoints the index holds beyond the given ones that exist: more than 0 when
-- an endpoint was created after the caller listed them (it may carry the org's previous gate: the
-- caller lists the endpoints again and runs this once more).
--- @include "org-gate"
local gated = orgGated(KEYS[1])
local given = 0
for i = 3, #KEYS do
  local endpoint = redis.call('HMGET', KEYS[i], 'id', ORG_GATE_FIELD)
  if endpoint[1] then
    given = given + 1
    if gated and not endpoint[2] then
      redis.call('HSET', KEYS[i], ORG_GATE_FIELD, '1')
    elseif not gated and endpoint[2] then
      redis.call('HDEL', KEYS[i], ORG_GATE_FIELD)
    end
  end
end
return redis.call('ZCARD', KEYS[2]) - given

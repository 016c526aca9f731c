-- The org's gate on its endpoints: each endpoint hash of an org carries `orgGate` ('1') while the
-- org has any attempt setting the claim must read (suspended, event types switched off, a
-- pre-attempt check URL), and not otherwise, so the claim of an org with none reads nothing of the
-- org (claim-attempt.lua). Written with every change of those settings, to every endpoint of the
-- org at once (sync-org-gate.lua), and onto each endpoint as it is created.

-- The endpoint hash's field that says the claim must read the org.
local ORG_GATE_FIELD = 'orgGate'

-- Whether the org (its hash at `orgKey`) has any of the attempt settings the claim must read.
local function orgGated(orgKey)
  local org = redis.call('HMGET', orgKey, 'status', 'disabledEventTypes', 'preAttemptCheckUrl')
  local disabled, checkUrl = org[2], org[3]
  return org[1] == 'suspended' or (disabled and disabled ~= '' and disabled ~= '[]') or (checkUrl and checkUrl ~= '') or false
end

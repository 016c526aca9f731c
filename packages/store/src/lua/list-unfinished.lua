-- Lists the reconciler's next deliveries from a run of one org's endpoints' status indexes, in
-- one round trip and without reading more ids than it returns (a pipeline would have to ask every
-- index for the whole batch). Read only.
-- KEYS: the indexes (each endpoint's `pending` then `in_flight`), in the sweep's order.
-- ARGV[1] where the first index is read from: '-' or '(<the last id seen in it>'; ARGV[2] the
-- upper bound, '[<largest id of an instant>' (ids start with their creation time, so these are
-- the deliveries created up to then); ARGV[3] how many ids at most (≥ 1).
-- Returns {how many indexes were read up to the bound, ids...}, in KEYS' order then id order.
-- When the ids reach the limit, the index the last one came from may have more.
local limit = tonumber(ARGV[3])
local out = {0}
for i = 1, #KEYS do
  local from = '-'
  if i == 1 then from = ARGV[1] end
  local ids = redis.call('ZRANGEBYLEX', KEYS[i], from, ARGV[2], 'LIMIT', 0, limit - (#out - 1))
  for _, id in ipairs(ids) do out[#out + 1] = id end
  if #out - 1 >= limit then return out end
  out[1] = i
end
return out

-- The org's live feed (keys.orgLiveFeed, live-feed-repository.ts): one stream entry per change of a
-- delivery, capped near `maxEntries` (MAXLEN ~, so trimming happens a whole node at a time, O(1)
-- amortised) and expiring `ttlS` after the last change. `maxEntries` '0' turns the feed off.
-- `fields` is a flat field, value list; empty values are left out (bytes per delivery matter).
-- `renewedBySender`: the caller's sender renews the expiry itself, about once a second
-- (stats-flusher.ts), so an append to an existing feed sends no EXPIRE; an append that creates the
-- feed still sets it here (XADD NOMKSTREAM writes nothing to a missing key), so a feed is never left
-- without an expiry, even by a sender killed before its next renewal.
local function appendLiveChange(feedKey, maxEntries, ttlS, fields, renewedBySender)
  if maxEntries == '0' or maxEntries == '' then return end
  local kept = {}
  for i = 1, #fields, 2 do
    local value = fields[i + 1]
    if value ~= nil and value ~= '' and value ~= false then
      kept[#kept + 1] = fields[i]
      kept[#kept + 1] = value
    end
  end
  if renewedBySender and redis.call('XADD', feedKey, 'NOMKSTREAM', 'MAXLEN', '~', maxEntries, '*', unpack(kept)) then return end
  redis.call('XADD', feedKey, 'MAXLEN', '~', maxEntries, '*', unpack(kept))
  redis.call('EXPIRE', feedKey, ttlS)
end

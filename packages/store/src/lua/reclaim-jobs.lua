-- Makes the queue jobs of a dead sender's worker run again now rather than when their locks
-- expire. Each job of the queue's active list (ARGV[2..], read just before) whose lock is that
-- worker's (BullMQ's token is `<worker id>:<n>`), or that has no lock at all, loses its lock and
-- is marked stalled; the stalled check's guard is deleted, so the next check (BullMQ's
-- moveStalledJobsToWait, which the caller starts) moves them to wait at once.
-- KEYS[1] the queue's stalled set, KEYS[2] its stalled-check guard, KEYS[3..] the locks of the
-- jobs ARGV[2..] (same order), all in the queue's hash slot.
-- ARGV[1] the dead worker's id.
-- Returns the ids of the jobs marked.
local owner = ARGV[1] .. ':'
local marked = {}
for i = 3, #KEYS do
  local token = redis.call('GET', KEYS[i])
  if not token or string.sub(token, 1, #owner) == owner then
    if token then redis.call('DEL', KEYS[i]) end
    redis.call('SADD', KEYS[1], ARGV[i - 1])
    table.insert(marked, ARGV[i - 1])
  end
end
if #marked > 0 then redis.call('DEL', KEYS[2]) end
return marked

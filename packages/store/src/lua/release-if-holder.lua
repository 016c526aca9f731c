-- Gives back a short turn (a string key holding its holder's token) only if this caller still holds
-- it: a turn that expired and was taken by another is left alone.
-- KEYS[1] the turn's key. ARGV[1] the caller's token. Returns 1 when released, 0 otherwise.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0

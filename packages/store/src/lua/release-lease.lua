-- Gives back a lease. KEYS[1] endpoint leases zset, KEYS[2] org leases zset. ARGV[1] lease id.
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1

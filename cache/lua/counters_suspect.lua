-- Marks the counts of hash KEYS[1] suspect (_s) and moves its generation (_g), if it exists: the
-- next read reloads them from PostgreSQL, and serves them as they are only if PostgreSQL cannot
-- answer. Used when an increment of this hash may have been lost. Returns 1 when the hash existed.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], '_s', 1)
redis.call('HINCRBY', KEYS[1], '_g', 1)
return 1

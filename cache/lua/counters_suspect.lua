-- Marks the counts in hash KEYS[1] suspect with the token ARGV[1], if the hash exists: a change may
-- be missing from it (its write to Redis failed, or its commit's outcome is unknown). Reads then
-- reload it, serve it as it is only while PostgreSQL cannot answer, and lift the mark by a fill
-- whose lookup saw this token. Returns 1 when the hash existed.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], '_s', ARGV[1])
return 1

-- Adds ARGV[2] to field ARGV[1] of hash KEYS[1], but only when the hash exists. Checking and
-- incrementing in one script means a concurrent expiry cannot slip in between and leave a hash
-- holding just this one field. Returns 1 when it incremented, 0 when the hash was absent (the next
-- read fills it from PostgreSQL).
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], ARGV[1], ARGV[2])
  return 1
end
return 0

-- Ends a counter write begun with counters_begin.lua: adds ARGV[2] to field ARGV[1] of the
-- item's hash KEYS[1], but only when the hash exists, and releases the write's hold on KEYS[2].
-- When the hash is absent it bumps the item's epoch KEYS[3] (kept ARGV[3] milliseconds): a reader
-- that read the epoch before this write may have loaded the count from PostgreSQL without it, and
-- its fill is refused (counters_fill.lua). All three keys carry the item's hash tag, so they share
-- a cluster slot. Checking and incrementing in one script means a concurrent expiry cannot slip in
-- between and leave a hash holding just this one field. Returns 1 when it incremented, 0 when the
-- hash was absent (the next read fills it from PostgreSQL).
local done = 0
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], ARGV[1], ARGV[2])
  done = 1
else
  redis.call('INCR', KEYS[3])
  redis.call('PEXPIRE', KEYS[3], ARGV[3])
end
if redis.call('DECR', KEYS[2]) <= 0 then
  redis.call('DEL', KEYS[2])
end
return done

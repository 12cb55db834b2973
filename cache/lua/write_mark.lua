-- A user's write mark (cache.WriteMarks.Mark): keeps the larger of the stored WAL position and
-- ARGV[1], so two writes recorded out of order on two instances never move it back, and
-- (re)arms its expiry of ARGV[2] milliseconds.
-- KEYS[1] the user's mark; ARGV[1] the position (decimal bytes); ARGV[2] time to live (ms).
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > cur then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1

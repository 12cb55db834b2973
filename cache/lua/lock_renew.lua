-- Extends lock KEYS[1] to ARGV[2] milliseconds only if it still holds token ARGV[1].
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0

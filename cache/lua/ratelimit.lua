-- Fixed-window rate limit, atomically: counts this request in the window's counter KEYS[1] and
-- starts the window (ARGV[1] milliseconds) on its first request. Returns {count, ms left}.
local n = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if n == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {n, ttl}

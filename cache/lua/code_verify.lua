-- Checks a one-time login code. KEYS[1] holds the code, KEYS[2] the attempts left. ARGV: code.
-- Returns 0 right (the code is spent), -1 no code (never sent or expired), -2 burned (no attempts
-- left), -3 the code key has no expiry (a system error), or n > 0: wrong, n attempts left.
-- A wrong guess that uses the last attempt burns the code; it stays burned until it expires.
local stored = redis.call('GET', KEYS[1])
if not stored then
  return -1
end
if redis.call('TTL', KEYS[1]) == -1 then
  return -3
end
local left = tonumber(redis.call('GET', KEYS[2]) or '0')
if left <= 0 then
  return -2
end
if stored == ARGV[1] then
  redis.call('DEL', KEYS[1], KEYS[2])
  return 0
end
left = redis.call('DECR', KEYS[2])
if left <= 0 then
  return -2
end
return left

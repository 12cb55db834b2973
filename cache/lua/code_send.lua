-- Stores a one-time login code. KEYS[1] holds the code, KEYS[2] the attempts left; both carry one
-- hash tag, so they live in one slot and this script also runs on a Redis Cluster.
-- ARGV: code, validity (s), resend interval (s), attempts.
-- Returns 0 stored, -1 a code was sent less than the resend interval ago, -2 the code key has no
-- expiry (a system error: a code must never live forever).
local ttl = redis.call('TTL', KEYS[1])
if ttl == -1 then
  return -2
end
if ttl > tonumber(ARGV[2]) - tonumber(ARGV[3]) then
  return -1
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
redis.call('SET', KEYS[2], ARGV[4], 'EX', ARGV[2])
return 0

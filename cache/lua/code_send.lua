-- Meters and stores a one-time login code. KEYS[1] is the code (a hash: h = HMAC of the code,
-- left = wrong guesses left, spent = 1 once used, strong = 1 for a strong code), KEYS[2] the
-- target's budget (a hash: fails = wrong guesses in its window), KEYS[3] the sends the requesting
-- client made to the target in its window (a counter). All carry one hash tag, so they live in one
-- slot and this script also runs on a Redis Cluster.
-- ARGV: code hash, validity (s), resend interval (s), attempts per code, failure budget, daily
-- send cap (per client and target), budget window (s), 1 for a strong code.
-- Returns {0, 0} stored, {-1, s} a code was sent less than the resend interval ago (spent codes
-- included: a spent code keeps its key until it expires), {-3, s} the failure budget is used up
-- (only a strong code may be sent then), {-4, s} this client's daily send cap is used up, {-2, 0}
-- a key has no expiry (a system error: a code or a budget must never live forever). s is the
-- seconds until the refusal lifts.
local budget_ttl = redis.call('TTL', KEYS[2])
if budget_ttl == -1 then
  return {-2, 0}
end
if budget_ttl > 0 and ARGV[8] ~= '1' then
  if tonumber(redis.call('HGET', KEYS[2], 'fails') or '0') >= tonumber(ARGV[5]) then
    return {-3, budget_ttl}
  end
end
local ttl = redis.call('TTL', KEYS[1])
if ttl == -1 then
  return {-2, 0}
end
local wait = ttl - (tonumber(ARGV[2]) - tonumber(ARGV[3]))
if wait > 0 then
  return {-1, wait}
end
local sends_ttl = redis.call('TTL', KEYS[3])
if sends_ttl == -1 then
  return {-2, 0}
end
if sends_ttl > 0 and tonumber(redis.call('GET', KEYS[3]) or '0') >= tonumber(ARGV[6]) then
  return {-4, sends_ttl}
end
redis.call('INCR', KEYS[3])
if sends_ttl < 0 then
  redis.call('EXPIRE', KEYS[3], ARGV[7])
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'h', ARGV[1], 'left', ARGV[4], 'spent', 0, 'strong', ARGV[8])
redis.call('EXPIRE', KEYS[1], ARGV[2])
return {0, 0}

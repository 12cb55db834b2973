-- Meters and stores a one-time login code. KEYS[1] is the code (a hash: h = HMAC of the code,
-- left = wrong guesses left, spent = 1 once used), KEYS[2] the target's budget (a hash: fails =
-- wrong guesses, sends = codes sent, both in one window). Both carry one hash tag, so they live in
-- one slot and this script also runs on a Redis Cluster.
-- ARGV: code hash, validity (s), resend interval (s), attempts per code, failure budget, daily
-- send cap, budget window (s).
-- Returns {0, 0} stored, {-1, s} a code was sent less than the resend interval ago (spent codes
-- included: a spent code keeps its key until it expires), {-3, s} the failure budget is used up,
-- {-4, s} the daily send cap is used up, {-2, 0} a key has no expiry (a system error: a code or a
-- budget must never live forever). s is the seconds until the refusal lifts.
local budget_ttl = redis.call('TTL', KEYS[2])
if budget_ttl == -1 then
  return {-2, 0}
end
if budget_ttl > 0 then
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
if budget_ttl > 0 and tonumber(redis.call('HGET', KEYS[2], 'sends') or '0') >= tonumber(ARGV[6]) then
  return {-4, budget_ttl}
end
redis.call('HINCRBY', KEYS[2], 'sends', 1)
if budget_ttl < 0 then
  redis.call('EXPIRE', KEYS[2], ARGV[7])
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'h', ARGV[1], 'left', ARGV[4], 'spent', 0)
redis.call('EXPIRE', KEYS[1], ARGV[2])
return {0, 0}

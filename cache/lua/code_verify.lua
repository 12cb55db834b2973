-- Checks a one-time login code. KEYS[1] and KEYS[2] as in code_send.lua. ARGV: code hash,
-- failure budget, budget window (s).
-- Returns {0, 0} right (the code is marked spent and keeps its key, and so its resend window,
-- until it expires), {-1, 0} refused (wrong, never sent, expired, spent or burned: one answer for
-- all), {-3, s} the target's failure budget is used up for s more seconds and the live code is not
-- a strong one, {-2, 0} a key has no expiry (a system error).
-- A strong code (50 bits) is checked even while the budget is used up, and wrong guesses do not
-- burn it: guessing it is hopeless, so the lock only keeps out the guessable six-digit codes.
-- Only a guess compared with a live code counts against the budget, and never once the budget
-- is used up, so concurrent guesses cannot push the count past it.
local budget_ttl = redis.call('TTL', KEYS[2])
if budget_ttl == -1 then
  return {-2, 0}
end
local locked = budget_ttl > 0 and tonumber(redis.call('HGET', KEYS[2], 'fails') or '0') >= tonumber(ARGV[2])
local code = redis.call('HMGET', KEYS[1], 'h', 'left', 'spent', 'strong')
local strong = code[4] == '1'
if locked and not strong then
  return {-3, budget_ttl}
end
if not code[1] then
  return {-1, 0}
end
if redis.call('TTL', KEYS[1]) == -1 then
  return {-2, 0}
end
if code[3] == '1' or (not strong and tonumber(code[2]) <= 0) then
  return {-1, 0}
end
if code[1] == ARGV[1] then
  redis.call('HSET', KEYS[1], 'spent', 1)
  return {0, 0}
end
if not strong then
  redis.call('HINCRBY', KEYS[1], 'left', -1)
end
if not locked then
  redis.call('HINCRBY', KEYS[2], 'fails', 1)
  if budget_ttl < 0 then
    redis.call('EXPIRE', KEYS[2], ARGV[3])
  end
end
return {-1, 0}

-- The change tokens of authors (ARGV[2..]) in the hash KEYS[1]. An author without one gets
-- ARGV[1], a token no earlier call has handed out, so a stamp made from it matches no page cached
-- before (the hash may have been evicted or lost with a Redis restart). Returns the tokens in the
-- order asked.
local vals = redis.call('HMGET', KEYS[1], unpack(ARGV, 2))
for i, v in ipairs(vals) do
  if not v then
    redis.call('HSET', KEYS[1], ARGV[i + 1], ARGV[1])
    vals[i] = ARGV[1]
  end
end
return vals

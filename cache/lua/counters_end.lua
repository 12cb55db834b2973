-- A count change of hash KEYS[1] has ended. When it committed (ARGV[2] not '0'), field ARGV[1] moves
-- by ARGV[2] if the hash holds counts (_v); a hash holding none is never given one field. ARGV[3]
-- '1' marks the counts suspect (_s: the outcome is unknown, or an earlier increment was lost), so
-- that the next read reloads them while still able to serve them if PostgreSQL cannot answer.
-- Either way the change is no longer in flight (_w) and the generation (_g) moves, so a fill
-- whose lookup came before this point is dropped. Returns 1 when it incremented.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local incremented = 0
if ARGV[2] ~= '0' and redis.call('HEXISTS', KEYS[1], '_v') == 1 then
  redis.call('HINCRBY', KEYS[1], ARGV[1], ARGV[2])
  incremented = 1
end
if redis.call('HINCRBY', KEYS[1], '_w', -1) <= 0 then
  redis.call('HDEL', KEYS[1], '_w')
end
redis.call('HINCRBY', KEYS[1], '_g', 1)
if ARGV[3] == '1' then
  redis.call('HSET', KEYS[1], '_s', 1)
end
return incremented

-- Ends a counter write begun with counters_begin.lua that changed nothing (its transaction failed
-- or had nothing to do): releases its hold on KEYS[2]. KEYS as in counters_begin.lua.
if redis.call('DECR', KEYS[2]) <= 0 then
  redis.call('DEL', KEYS[2])
end
return 1

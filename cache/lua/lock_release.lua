-- Deletes lock KEYS[1] only if it still holds this holder's token ARGV[1], so a holder whose lock
-- expired and was taken by someone else cannot release the new holder's lock.
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0

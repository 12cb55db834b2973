-- A count change of hash KEYS[1] is about to commit (called before COMMIT). It counts the change in
-- flight (_w) and moves the hash's generation (_g), so that no fill lands until the change has
-- ended: a fill that read PostgreSQL after the commit but before the change's increment would
-- otherwise count it twice. The hash (or, if there was none, this marker alone) lives at least
-- ARGV[1] milliseconds: longer than any change stays in flight.
redis.call('HINCRBY', KEYS[1], '_w', 1)
redis.call('HINCRBY', KEYS[1], '_g', 1)
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[1]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return 1

-- Begins a counter write: counts it in KEYS[2] (the item's "writes in flight", ARGV[1]
-- milliseconds to live, renewed by every write, so a writer that dies cannot hold it longer).
-- While it is held, no reader fills the item's hash (counters_fill.lua): a reader that loaded the
-- count after the write committed would fill a hash the write then increments again.
-- KEYS[1] is the hash, unused here but named so every counter script takes the same keys.
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return 1

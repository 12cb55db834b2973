-- Stores ARGV[2] under KEYS[1] for ARGV[3] milliseconds, but only if the key still holds what the
-- filler saw before it read the source of truth: ARGV[1], or nothing when ARGV[1] is empty. A
-- change that committed in between has replaced that state with its tombstone, so a fill carrying
-- data read before the change loses to it instead of bringing the old data back. Returns 1 when it
-- stored the value, 0 when it dropped it.
local cur = redis.call('GET', KEYS[1])
if cur == false then cur = '' end
if cur ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1

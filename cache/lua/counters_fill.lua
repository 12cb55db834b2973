-- Fills the counter hash KEYS[1] with what a reader loaded from PostgreSQL: sets the field/value
-- pairs ARGV[3..] and gives the hash a lifetime of ARGV[1] milliseconds in one step, so the hash
-- never exists without an expiry. ARGV[2] is the item's epoch (KEYS[3]) as the reader saw it
-- before loading. The fill is refused (returns 0, nothing written) while a write of the item is in
-- flight (KEYS[2], counters_begin.lua) — the loaded count may already include a change that is
-- about to be added again — or when the epoch moved since — a write found no hash to increment,
-- and the loaded count may miss it. The reader then serves what it loaded without caching it.
-- The keys share the item's hash tag, so this runs on a Redis Cluster; the Fill of many hashes is
-- a plain pipeline of these scripts. Returns 1 when it filled.
if redis.call('EXISTS', KEYS[2]) == 1 then
  return 0
end
if tonumber(redis.call('GET', KEYS[3]) or '0') ~= tonumber(ARGV[2]) then
  return 0
end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1

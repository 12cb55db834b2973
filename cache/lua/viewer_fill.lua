-- Fills one viewer's flags (KEYS, all in the viewer's hash slot). For each key i, ARGV[2i-1] is
-- what the filler's lookup saw there before it read PostgreSQL ('' for nothing, else a
-- tombstone) and ARGV[2i] the value; the last ARGV is the lifetime in milliseconds. A key that
-- no longer holds what the lookup saw was invalidated by a write meanwhile, and is left alone
-- (the fill may predate the write). Returns how many keys were stored.
local ttl = ARGV[#ARGV]
local stored = 0
for i, key in ipairs(KEYS) do
  local cur = redis.call('GET', key)
  if cur == false then cur = '' end
  if cur == ARGV[2 * i - 1] then
    redis.call('SET', key, ARGV[2 * i], 'PX', ttl)
    stored = stored + 1
  end
end
return stored

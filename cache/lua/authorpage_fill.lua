-- Stores page ARGV[3] under field ARGV[2] of the author-page hash KEYS[1], but only if the hash's
-- invalidation token (_t) is still ARGV[1] ('' for none): an invalidation since the filler's lookup
-- replaced the hash with a new token, and the page, which may predate that write, is dropped. The
-- first page stored after an invalidation starts the hash's lifetime of ARGV[4] milliseconds (_f);
-- later pages keep it, so a busy author's pages still expire on schedule. Returns 1 when stored.
if (redis.call('HGET', KEYS[1], '_t') or '') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
if redis.call('HSETNX', KEYS[1], '_f', 1) == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
end
return 1

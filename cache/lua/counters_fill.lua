-- Fills the counter hash KEYS[1] with the counts a read loaded from PostgreSQL (ARGV[3..5]: reads,
-- likes, collects) and gives it a lifetime of ARGV[1] milliseconds in one step, so it never exists
-- without an expiry. Unless ARGV[2] is '*' (an unconditional fill, for seeding), the fill is
-- dropped when it could be older than what the hash knows:
--   * a change is in flight (_w), or one ended after the read's lookup (_g no longer ARGV[2], ''
--     standing for no generation at all);
--   * the hash already holds counts that are not suspect (another read filled it first; changes
--     have kept it current since).
-- Returns 1 when it filled, 0 when it dropped the fill.
if ARGV[2] ~= '*' then
  if tonumber(redis.call('HGET', KEYS[1], '_w') or '0') > 0 then return 0 end
  if (redis.call('HGET', KEYS[1], '_g') or '') ~= ARGV[2] then return 0 end
  if redis.call('HEXISTS', KEYS[1], '_v') == 1 and redis.call('HEXISTS', KEYS[1], '_s') == 0 then return 0 end
end
redis.call('HSET', KEYS[1], 'read_cnt', ARGV[3], 'like_cnt', ARGV[4], 'collect_cnt', ARGV[5], '_v', 1)
redis.call('HDEL', KEYS[1], '_s')
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1

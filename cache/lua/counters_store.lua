-- Stores the counter row ARGV[3..5] (reads, likes, collects) at version ARGV[2] in hash KEYS[1],
-- with a lifetime of ARGV[1] milliseconds, in one step. Rows come from PostgreSQL, where every
-- change moves the version under the row's lock: the hash never goes back to an older version,
-- whichever instance writes and in whatever order the writes arrive. ARGV[6] is the mode:
--   'change' a committed change's row: stored if newer than the hash's (_ver);
--   'fill'   a read's load: stored if newer, or — when the hash is suspect (_s) and ARGV[7] is the
--            suspicion the read's lookup saw, so the load read PostgreSQL after it — if not older,
--            and then the suspicion is lifted;
--   'force'  stored whatever the hash holds (seeding, tests).
-- A change never lifts a suspicion: the change it stands for may be older than the one missed.
-- Returns 1 when it stored the row.
local v = tonumber(ARGV[2])
local cur = tonumber(redis.call('HGET', KEYS[1], '_ver') or '-1')
local s = redis.call('HGET', KEYS[1], '_s')
local mode = ARGV[6]
local lift = mode == 'force' or (mode == 'fill' and s ~= false and s == ARGV[7])
if not (mode == 'force' or v > cur or (lift and v >= cur)) then return 0 end
redis.call('HSET', KEYS[1], 'read_cnt', ARGV[3], 'like_cnt', ARGV[4], 'collect_cnt', ARGV[5], '_ver', v)
if lift then redis.call('HDEL', KEYS[1], '_s') end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1

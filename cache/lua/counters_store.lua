-- Stores shard rows of one item's counters in hash KEYS[1], with a lifetime of ARGV[1]
-- milliseconds, in one step. An item's counts are spread over shard rows in PostgreSQL, each with
-- its own version, moved under that shard's lock. The hash keeps every shard it has been given as
-- one field 's<shard>' = '<version>:<reads>:<likes>:<collects>', and the sums over those shards in
-- read_cnt, like_cnt and collect_cnt, which are what reads fetch. A shard the hash does not hold
-- counts zero at version -1. Each shard is stored only if newer than the hash's copy of it, so no
-- shard — and so no sum of shards — goes back in time, whichever instance writes and in whatever
-- order the writes arrive.
-- _ver marks the hash complete: a fill stored every shard row the item had when it was loaded
-- (its value is the sum of the shard versions held). Reads treat a hash without it as a miss. A
-- change arriving when the hash is not complete is still stored, so a fill that loaded before the
-- change and lands after it cannot lose it.
-- ARGV[2] is the mode, ARGV[3] the suspicion a fill's lookup saw, then 5 values per shard row:
-- shard, version, reads, likes, collects.
--   'change' a committed change's shard rows: each stored if newer;
--   'fill'   every shard row of the item, as a read loaded them: each stored if newer, or — when
--            the hash is suspect (_s) and ARGV[3] is the suspicion the read's lookup saw, so the
--            load read PostgreSQL after it — if not older, and then the suspicion is lifted; the
--            hash is then complete;
--   'force'  the hash replaced by the rows given, complete (seeding, tests).
-- A change never lifts a suspicion: the change it stands for may be older than the one missed.
-- Returns the number of shard rows stored.
local key, mode = KEYS[1], ARGV[2]
if mode == 'force' then redis.call('DEL', key) end
local complete = redis.call('HEXISTS', key, '_ver') == 1
local s = redis.call('HGET', key, '_s')
local lift = mode == 'fill' and s ~= false and s == ARGV[3]
local stored, dver = 0, 0
for i = 4, #ARGV, 5 do
	local field = 's' .. ARGV[i]
	local v = tonumber(ARGV[i + 1])
	local cur, r0, l0, c0 = -1, 0, 0, 0
	local old = redis.call('HGET', key, field)
	if old then
		local a, b, c, d = string.match(old, '^(-?%d+):(-?%d+):(-?%d+):(-?%d+)$')
		cur, r0, l0, c0 = tonumber(a), tonumber(b), tonumber(c), tonumber(d)
	end
	if v > cur or (lift and v >= cur) then
		local r, l, c = tonumber(ARGV[i + 2]), tonumber(ARGV[i + 3]), tonumber(ARGV[i + 4])
		redis.call('HINCRBY', key, 'read_cnt', r - r0)
		redis.call('HINCRBY', key, 'like_cnt', l - l0)
		redis.call('HINCRBY', key, 'collect_cnt', c - c0)
		redis.call('HSET', key, field, ARGV[i + 1] .. ':' .. ARGV[i + 2] .. ':' .. ARGV[i + 3] .. ':' .. ARGV[i + 4])
		dver = dver + v - math.max(cur, 0)
		stored = stored + 1
	end
end
if complete then
	if dver ~= 0 then redis.call('HINCRBY', key, '_ver', dver) end
elseif mode ~= 'change' then
	-- Complete from now on: every shard the item has is held (given now, or by an earlier change).
	local sum = 0
	local all = redis.call('HGETALL', key)
	for j = 1, #all, 2 do
		if string.sub(all[j], 1, 1) == 's' then sum = sum + tonumber(string.match(all[j + 1], '^(-?%d+):')) end
	end
	redis.call('HSET', key, '_ver', sum, 'read_cnt', redis.call('HGET', key, 'read_cnt') or 0,
		'like_cnt', redis.call('HGET', key, 'like_cnt') or 0, 'collect_cnt', redis.call('HGET', key, 'collect_cnt') or 0)
end
if lift then redis.call('HDEL', key, '_s') end
if stored > 0 or (mode ~= 'change' and not complete) then redis.call('PEXPIRE', key, ARGV[1]) end
return stored

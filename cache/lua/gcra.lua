-- GCRA (generic cell rate algorithm) rate limit, atomically: KEYS[1] holds the key's theoretical
-- arrival time (TAT), in microseconds of Redis's clock, the one clock every instance shares.
-- ARGV[1] is the emission interval in microseconds (window / limit), ARGV[2] the burst (limit).
-- A request is allowed when, counted, the TAT is at most burst intervals ahead of now.
-- Returns {allowed (1/0), remaining, microseconds until the whole budget is back,
-- microseconds until one more request is allowed (0 when this one was)}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then
  tat = now
end
local counted = tat + interval
local allowAt = counted - burst * interval -- the earliest time at which this request fits
if now < allowAt then
  return {0, 0, tat - now, allowAt - now}
end
-- As digits: Lua would write a number this large as 1.7e+15, losing its microseconds.
redis.call('SET', KEYS[1], string.format('%.0f', counted), 'PX', math.ceil((counted - now) / 1000))
return {1, math.floor((now - allowAt) / interval), counted - now, 0}

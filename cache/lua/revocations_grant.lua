-- Copies revocations and renews the revocation lease, atomically. KEYS[1] is the lease, KEYS[2..]
-- the marks to set (one hash slot: a Redis that restarts loses marks and lease together).
-- ARGV[1]: the lease's end (ms, Redis's clock, fixed when the renewal began); ARGV[2]: '1' when the
-- marks are only the recent revocations, so the lease may be extended but not started again;
-- ARGV[3]: the marks' lifetime (ms).
-- The marks are set in any case (a mark is never wrong). The lease is not granted when its end
-- has passed (a renewal too slow to matter), nor started from recent marks only; a later lease in
-- place (a renewal that began after this one) is kept. Returns 1 when the lease runs until ARGV[1]
-- or later.
for i = 2, #KEYS do
  redis.call('SET', KEYS[i], 1, 'PX', ARGV[3])
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local expires = tonumber(ARGV[1])
if now >= expires then
  return 0
end
local left = redis.call('PTTL', KEYS[1])
if left == -2 and ARGV[2] == '1' then
  return 0
end
if left > 0 and now + left >= expires then
  return 1
end
redis.call('SET', KEYS[1], 1, 'PXAT', expires)
return 1

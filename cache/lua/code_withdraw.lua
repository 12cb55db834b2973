-- Withdraws a code whose delivery could not even be queued, so that the user may ask again at
-- once instead of waiting out the resend interval. KEYS as in code_send.lua; ARGV[1] is the code
-- being withdrawn: a different (newer) code is left alone.
-- Returns 1 withdrawn, 0 nothing to withdraw.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1], KEYS[2])
return 1

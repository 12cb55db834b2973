-- Withdraws a code whose delivery could not even be queued, so that the user may ask again at
-- once instead of waiting out the resend interval, and gives its send back to the requesting
-- client's daily cap. KEYS as in code_send.lua; ARGV[1] is the hash of the code being withdrawn: a
-- different (newer) code is left alone.
-- Returns 1 withdrawn, 0 nothing to withdraw.
if redis.call('HGET', KEYS[1], 'h') ~= ARGV[1] then
  return 0
end
redis.call('DEL', KEYS[1])
if tonumber(redis.call('GET', KEYS[3]) or '0') > 0 then
  redis.call('DECR', KEYS[3])
end
return 1

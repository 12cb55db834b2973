-- Fills the counter hash KEYS[1]: sets the field/value pairs ARGV[2..] and gives the hash a
-- lifetime of ARGV[1] milliseconds in one step, so the hash never exists without an expiry (a
-- crash or a dropped connection between two commands cannot leave one behind). One key per call:
-- it runs on a Redis Cluster, where the Fill of many hashes is a plain pipeline of these scripts.
-- Returns 1.
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1

-- Starts a renewal of the revocation lease KEYS[1]: returns {Redis's clock in ms, 1 if the lease is
-- held}. The renewal's lease will run from this instant, taken before it reads PostgreSQL.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return {now, redis.call('EXISTS', KEYS[1])}

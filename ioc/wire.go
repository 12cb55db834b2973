package ioc

import "github.com/google/wire"

// ProviderSet builds the infrastructure: the PostgreSQL pool, the Redis client, the cron runner,
// the HTTP server and the wall clock.
var ProviderSet = wire.NewSet(NewPgPool, NewRedis, NewCron, NewHTTPServer, NewClock)

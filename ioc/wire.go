package ioc

import "github.com/google/wire"

// ProviderSet builds the infrastructure: the tracer provider, the PostgreSQL pool, the Redis
// client, the metrics listener and the wall clock (the HTTP server is the root package's NewHTTPServer, around NewHTTPServer here) (the time and its wait). The cron runner (NewCron) is built by the provider that
// registers its jobs.
var ProviderSet = wire.NewSet(NewTracing, NewPgPool, NewRedis, NewMetricsServer, NewClock, NewAfter)

package ioc

import "github.com/google/wire"

// ProviderSet builds the infrastructure.
var ProviderSet = wire.NewSet(
	NewPgPool, NewQueuePgPool, NewRedisBreaker, NewRedis, NewKeyspace, NewCachePolicy, NewSlugSuffix,
	NewPasswordHasher, NewJWTManager,
	NewCron, NewRouterConfig, NewHTTPServer, NewApp,
	NewReadStream, NewReadPublisher, NewWorkers,
	NewRankConfig, NewClock, NewHotListCache, NewRankJob, NewCronJobs,
	NewCodeSender, NewCodePolicy, NewOutboxStream, NewDurable, NewSessionConfig, NewArticlePreloader,
	NewMetrics, NewMetricsHandler, NewReadiness,
)

package ioc

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/redis/go-redis/v9"
)

// RouteRedisLogs sends go-redis's own log lines (pool and dial trouble, maintenance
// notifications) through log. Its default logger writes plain text to stderr, which breaks a JSON
// log stream exactly when Redis is down. The logger is process-wide in go-redis, so the last
// caller's log wins; a process has one.
func RouteRedisLogs(log *slog.Logger) { redis.SetLogger(redisLog{log.With("component", "go-redis")}) }

// redisLog is go-redis's Logging interface on a slog.Logger.
type redisLog struct{ log *slog.Logger }

func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	msg := strings.TrimPrefix(fmt.Sprintf(format, v...), "redis: ")
	// A failed dial is what every probe of a Redis that is down ends in: the circuit breaker
	// reports the outage (once, then a summary), so these lines are detail.
	if strings.Contains(msg, "failed to dial") {
		l.log.DebugContext(ctx, msg)
		return
	}
	l.log.WarnContext(ctx, msg)
}

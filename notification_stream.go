package inkwell

import (
	"net/http"
	"syscall"

	"github.com/gin-gonic/gin"
	"github.com/google/wire"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/service"
	"github.com/inkwell-dev/inkwell/web"
)

// notificationStreamSet wires the live notification streams (#33): the Redis hub announces, after
// COMMIT, the users a write notified, and serves the per-user counts and tickets. Its ports are
// bound in appSet (wire.go).
var notificationStreamSet = wire.NewSet(
	cache.NewNotificationHub, service.NewNotificationStreamService, web.NewNotificationStreamHandler,
	NewNotificationStreamConfig, NewHTTPServer,
)

// NewNotificationStreamConfig returns the streams' caps and heartbeat. The per-instance cap is
// half the process's open-file limit (ulimit -n): each stream holds a socket, and the other half
// is left to PostgreSQL, Redis and every other request, so an operator raises it the way any
// server's connection ceiling is raised, with the file limit, and no setting can promise more
// streams than the process can open. The others are constants; tests tune all three.
func NewNotificationStreamConfig(tune ioc.Tuning) service.NotificationStreamConfig {
	cfg := service.DefaultNotificationStreamConfig()
	cfg.PerInstance = ioc.Or(tune.StreamPerInstance, streamsPerInstance(openFileLimit()))
	cfg.PerUser = ioc.Or(tune.StreamPerUser, cfg.PerUser)
	cfg.Heartbeat = ioc.Or(tune.StreamHeartbeat, cfg.Heartbeat)
	return cfg
}

// NewHTTPServer is ioc.NewHTTPServer whose Shutdown also ends the live notification streams: an
// open stream is never idle, and would otherwise hold the shutdown until its timeout.
func NewHTTPServer(cfg *ioc.Config, engine *gin.Engine, streams *web.NotificationStreamHandler) *http.Server {
	srv := ioc.NewHTTPServer(cfg, engine)
	srv.RegisterOnShutdown(streams.Shutdown)
	return srv
}

// streamsPerInstance is the per-instance stream cap for a process that may open limit files:
// half of them, at least 100 (a limit too small to tell) and at most 100,000.
func streamsPerInstance(limit uint64) int {
	return int(min(max(limit/2, 100), 100_000))
}

// openFileLimit is the process's soft RLIMIT_NOFILE; 0 when it cannot be read.
func openFileLimit() uint64 {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0
	}
	return l.Cur
}

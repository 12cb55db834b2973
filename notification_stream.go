package inkwell

import (
	"net/http"

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

// NewNotificationStreamConfig returns the streams' caps and heartbeat: the per-instance cap from
// INKWELL_STREAM_MAX_PER_INSTANCE, the others constants (tests tune them).
func NewNotificationStreamConfig(s ioc.ServerConfig, tune ioc.Tuning) service.NotificationStreamConfig {
	cfg := service.DefaultNotificationStreamConfig()
	cfg.PerInstance = s.StreamMaxPerInstance
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

package ioc

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// NewHTTPServer returns the HTTP server around the router, with timeouts that stop slow clients
// from holding connections forever. The write timeout outlasts the request deadline
// (INKWELL_REQUEST_TIMEOUT) by 10 s, so a request that ran out of time can still be answered 503
// instead of having its connection closed.
func NewHTTPServer(cfg *Config, engine *gin.Engine) *http.Server {
	return &http.Server{
		Addr:              cfg.Server.Addr,
		Handler:           engine,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      max(30*time.Second, cfg.Server.RequestTimeout+10*time.Second),
		IdleTimeout:       2 * time.Minute,
	}
}

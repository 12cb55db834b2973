package ioc

import (
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// NewHTTPServer returns the HTTP server around the router, with timeouts that stop slow clients
// from holding connections forever.
func NewHTTPServer(cfg *Config, engine *gin.Engine) *http.Server {
	return &http.Server{
		Addr:              cfg.Addr,
		Handler:           engine,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
}

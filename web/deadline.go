package web

import (
	"context"
	"time"

	"github.com/gin-gonic/gin"
)

// requestDeadline bounds the work of every request (INKWELL_REQUEST_TIMEOUT): its context ends
// after timeout, so the PostgreSQL and Redis calls made for it stop (pgx cancels the statement,
// go-redis gives up the command) instead of going on for a client that has stopped waiting, and
// holding a connection meanwhile. The server's WriteTimeout alone would not: it closes the
// connection but leaves the handler running. Work that runs out of time answers 503 (writeError).
// No endpoint is long-lived (no streaming), so the bound applies to all. Zero disables it.
func requestDeadline(timeout time.Duration) gin.HandlerFunc {
	if timeout <= 0 {
		return func(c *gin.Context) { c.Next() }
	}
	return func(c *gin.Context) {
		ctx, cancel := context.WithTimeout(c.Request.Context(), timeout)
		defer cancel()
		c.Request = c.Request.WithContext(ctx)
		c.Next()
	}
}

package web

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// ReadinessChecker reports whether the dependencies answer: name → nil when ready.
type ReadinessChecker interface {
	Ready(ctx context.Context) map[string]error
}

// readyz answers 200 when every dependency answers (PostgreSQL, Redis, migrations current) and
// 503 naming the ones that do not; the error details go to the log, not to the caller.
func readyz(checker ReadinessChecker, log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		if checker == nil {
			renderJSON(c, http.StatusOK, gin.H{"status": "ready"})
			return
		}
		ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
		defer cancel()
		checks := gin.H{}
		ready := true
		for name, err := range checker.Ready(ctx) {
			if err != nil {
				ready = false
				checks[name] = "failing"
				log.WarnContext(ctx, "readiness check failed", "check", name, "err", err)
				continue
			}
			checks[name] = "ok"
		}
		if !ready {
			renderJSON(c, http.StatusServiceUnavailable, gin.H{"status": "not ready", "checks": checks})
			return
		}
		renderJSON(c, http.StatusOK, gin.H{"status": "ready", "checks": checks})
	}
}

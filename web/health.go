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

// degradableChecks are the dependencies the API can serve without: with Redis down, caches, rate
// limits and the read pipeline fall back to PostgreSQL (slower, fail-closed where they must), so
// an instance that cannot reach Redis still takes traffic. Taking every instance out of the
// balancer because the one Redis they share is down would turn a slowdown into an outage.
var degradableChecks = map[string]bool{"redis": true}

// readyz answers 200 "ready" when every dependency answers (PostgreSQL, Redis, migrations
// current), 200 "degraded" when only a degradable one (Redis) fails, and 503 "not ready" when
// PostgreSQL does not answer or migrations are missing. The body names each check's state; the
// error details go to the log, not to the caller.
func readyz(checker ReadinessChecker, log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		if checker == nil {
			renderJSON(c, http.StatusOK, gin.H{"status": "ready"})
			return
		}
		ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
		defer cancel()
		checks := gin.H{}
		ready, degraded := true, false
		for name, err := range checker.Ready(ctx) {
			if err != nil {
				if degradableChecks[name] {
					degraded = true
				} else {
					ready = false
				}
				checks[name] = "failing"
				log.WarnContext(ctx, "readiness check failed", "check", name, "err", err)
				continue
			}
			checks[name] = "ok"
		}
		switch {
		case !ready:
			renderJSON(c, http.StatusServiceUnavailable, gin.H{"status": "not ready", "checks": checks})
		case degraded:
			renderJSON(c, http.StatusOK, gin.H{"status": "degraded", "checks": checks,
				"detail": "Redis does not answer: the API serves from PostgreSQL, slower"})
		default:
			renderJSON(c, http.StatusOK, gin.H{"status": "ready", "checks": checks})
		}
	}
}

package web

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
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
//
// The media store (a local directory or S3) is degradable too: without it uploads and local image
// serving fail, while everything else is served; every instance shares the one store, so an
// outage of it would take the whole fleet out of the balancer for the sake of images.
var degradableChecks = map[string]string{
	"redis": "Redis does not answer: the API serves from PostgreSQL, slower",
	"media": "the media store does not take writes: uploads fail until it does",
}

// Drain marks an instance that is stopping. From Start on, /readyz answers 503 "draining" whatever
// the dependencies say, while the server still serves every request, so the balancer's health
// check takes the instance out before it stops accepting connections (the App waits
// INKWELL_DRAIN_DELAY between the two).
type Drain struct{ on atomic.Bool }

// NewDrain returns a mark that is not draining.
func NewDrain() *Drain { return &Drain{} }

// Start begins draining; it is never undone (a process drains once, then stops).
func (d *Drain) Start() { d.on.Store(true) }

// Draining reports whether Start was called; a nil Drain never drains.
func (d *Drain) Draining() bool { return d != nil && d.on.Load() }

// readyz answers 503 "draining" once drain has started; otherwise 200 "ready" when every
// dependency answers (PostgreSQL, Redis, migrations current, the media store), 200 "degraded"
// when only degradable ones (Redis, the media store) fail, and 503 "not ready" when PostgreSQL does not answer or migrations
// are missing. The body names each check's state; the error details go to the log, not to the
// caller.
func readyz(checker ReadinessChecker, drain *Drain, log *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		if drain.Draining() {
			renderJSON(c, http.StatusServiceUnavailable, gin.H{"status": "draining",
				"detail": "this instance is shutting down: send new requests to another one"})
			return
		}
		if checker == nil {
			renderJSON(c, http.StatusOK, gin.H{"status": "ready"})
			return
		}
		ctx, cancel := context.WithTimeout(c.Request.Context(), 2*time.Second)
		defer cancel()
		checks := gin.H{}
		ready := true
		var degraded []string
		for name, err := range checker.Ready(ctx) {
			if err != nil {
				if detail, ok := degradableChecks[name]; ok {
					degraded = append(degraded, detail)
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
		case len(degraded) > 0:
			slices.Sort(degraded)
			renderJSON(c, http.StatusOK, gin.H{"status": "degraded", "checks": checks,
				"detail": strings.Join(degraded, "; ")})
		default:
			renderJSON(c, http.StatusOK, gin.H{"status": "ready", "checks": checks})
		}
	}
}

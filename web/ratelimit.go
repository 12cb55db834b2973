package web

import (
	"context"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:generate go tool mockgen -source=ratelimit.go -destination=mocks/ratelimit_mock.go -package=mocks

// RateLimiter counts a request against a limit per window: Limit requests at once at most, the
// budget refilling at Limit per Window (cache.RateLimiter).
type RateLimiter interface {
	Allow(ctx context.Context, key string, limit int, window time.Duration) (domain.RateDecision, error)
}

// RateRule is one limit: Limit requests per Window.
type RateRule struct {
	Name   string
	Limit  int
	Window time.Duration
}

// RateLimits are the rules the router applies.
type RateLimits struct {
	Auth   RateRule // per client IP: registration, login, code sending and code login
	Writes RateRule // per user: every authenticated write
	Search RateRule // per user when signed in, else per client IP: GET /api/search/*
	// Reports is per user: POST /api/reports, on top of Writes (DefaultReportRate unless set).
	Reports RateRule
	// Uploads is per user: POST /api/uploads, on top of Writes (DefaultUploadRate unless set).
	Uploads RateRule
}

// rateLimit counts each request against rule for the key keyOf gives, answers 429 with
// Retry-After (until one more request would be allowed) when it is over, and always sets the
// X-RateLimit-* headers (Reset: until the whole budget is back). When the limiter fails (Redis
// down) requests pass: an outage of the limiter must not become an outage of the API.
func rateLimit(l RateLimiter, rule RateRule, keyOf func(*gin.Context) string, log *slog.Logger) gin.HandlerFunc {
	if rule.Limit <= 0 {
		return func(c *gin.Context) { c.Next() }
	}
	return func(c *gin.Context) {
		d, err := l.Allow(c.Request.Context(), rule.Name+":"+keyOf(c), rule.Limit, rule.Window)
		if err != nil {
			log.WarnContext(c.Request.Context(), "rate limiter unavailable; letting the request through", "rule", rule.Name, "err", err)
			c.Next()
			return
		}
		h := c.Writer.Header()
		h.Set("X-RateLimit-Limit", strconv.Itoa(d.Limit))
		h.Set("X-RateLimit-Remaining", strconv.Itoa(d.Remaining))
		h.Set("X-RateLimit-Reset", seconds(d.Reset))
		if !d.Allowed {
			retry := seconds(d.RetryAfter)
			h.Set("Retry-After", retry)
			abortWith(c, http.StatusTooManyRequests, "body", "too many requests; retry after "+retry+" seconds")
			return
		}
		c.Next()
	}
}

// seconds rounds d up to whole seconds, at least 1: a client told 0 would retry at once.
func seconds(d time.Duration) string { return strconv.Itoa(max(int(math.Ceil(d.Seconds())), 1)) }

func byClientIP(c *gin.Context) string { return "ip:" + c.ClientIP() }

func byUser(c *gin.Context) string { return "user:" + strconv.FormatInt(viewerID(c), 10) }

// byClient is the signed-in user (authenticated by the route's middleware, so a made-up token
// cannot buy a fresh budget), else the client IP.
func byClient(c *gin.Context) string {
	if viewerID(c) != 0 {
		return byUser(c)
	}
	return byClientIP(c)
}

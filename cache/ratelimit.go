package cache

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/domain"
)

// rateLimit is a fixed-window counter; only the login-code send meter (codes.go) still uses it.
//
//go:embed lua/ratelimit.lua
var rateLimitSrc string

var rateLimit = redis.NewScript(rateLimitSrc)

//go:embed lua/gcra.lua
var gcraSrc string

var gcra = redis.NewScript(gcraSrc)

// RateLimiter limits requests per key with GCRA in Redis: a limit of N per window W lets a client
// that has been quiet send N at once, then one every W/N; there is no window to reset, so no
// boundary at which a fixed window let 2N through within moments (N at the end of one window, N
// at the start of the next). One script reads Redis's clock, decides and records, so every
// instance sharing the Redis shares one exact budget on one clock. A key holds one number and
// expires once its budget is whole again. The keys are not the fixed window's (rl:…): during a
// rolling upgrade an old instance must not read a timestamp as a count.
type RateLimiter struct {
	rdb redis.UniversalClient
	ks  Keyspace
}

// NewRateLimiter returns the limiter.
func NewRateLimiter(rdb redis.UniversalClient, ks Keyspace) *RateLimiter {
	return &RateLimiter{rdb: rdb, ks: ks}
}

// Allow counts one request for key against limit per window.
func (l *RateLimiter) Allow(ctx context.Context, key string, limit int, window time.Duration) (domain.RateDecision, error) {
	interval := max(window.Microseconds()/int64(limit), 1)
	res, err := gcra.Run(ctx, l.rdb, []string{l.ks.Key("gcra", "{"+key+"}")}, strconv.FormatInt(interval, 10), limit).Int64Slice()
	if err != nil {
		return domain.RateDecision{}, fmt.Errorf("rate limit %s: %w", key, err)
	}
	return domain.RateDecision{Allowed: res[0] == 1, Limit: limit, Remaining: int(res[1]),
		Reset: time.Duration(res[2]) * time.Microsecond, RetryAfter: time.Duration(res[3]) * time.Microsecond}, nil
}

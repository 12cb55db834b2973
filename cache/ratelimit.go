package cache

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/domain"
)

//go:embed lua/ratelimit.lua
var rateLimitSrc string

var rateLimit = redis.NewScript(rateLimitSrc)

// RateLimiter counts requests per key in fixed windows in Redis. One script counts and reads, so
// every instance sharing the Redis shares one exact budget.
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
	res, err := rateLimit.Run(ctx, l.rdb, []string{l.ks.Key("rl", "{"+key+"}")}, window.Milliseconds()).Int64Slice()
	if err != nil {
		return domain.RateDecision{}, fmt.Errorf("rate limit %s: %w", key, err)
	}
	n, ttl := int(res[0]), time.Duration(res[1])*time.Millisecond
	return domain.RateDecision{Allowed: n <= limit, Limit: limit, Remaining: max(limit-n, 0), Reset: ttl}, nil
}

package cache

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"inkwell/domain"
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

// Revocations remembers revoked login sessions for as long as their access tokens live.
type Revocations struct {
	rdb redis.UniversalClient
	ks  Keyspace
}

// NewRevocations returns the cache.
func NewRevocations(rdb redis.UniversalClient, ks Keyspace) *Revocations {
	return &Revocations{rdb: rdb, ks: ks}
}

// Revoke marks sessionID revoked for ttl.
func (r *Revocations) Revoke(ctx context.Context, sessionID string, ttl time.Duration) error {
	return r.rdb.Set(ctx, r.ks.Key("revoked", sessionID), 1, ttl).Err()
}

// IsRevoked reports whether sessionID is marked revoked; an error means Redis could not say.
func (r *Revocations) IsRevoked(ctx context.Context, sessionID string) (bool, error) {
	n, err := r.rdb.Exists(ctx, r.ks.Key("revoked", sessionID)).Result()
	return n > 0, err
}

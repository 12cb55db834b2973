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

// completeKey marks the revocation keys as complete: it exists only after a Fill, so a Redis that
// lost its data (or a prefix never filled) says so instead of answering "not revoked".
func (r *Revocations) completeKey() string { return r.ks.Key("revocations-complete") }

// IsRevoked reports whether sessionID is marked revoked, and whether the marks are complete (see
// completeKey), in one round trip; an error means Redis could not say.
func (r *Revocations) IsRevoked(ctx context.Context, sessionID string) (revoked, complete bool, err error) {
	var marked, filled *redis.IntCmd
	_, err = r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		marked = p.Exists(ctx, r.ks.Key("revoked", sessionID))
		filled = p.Exists(ctx, r.completeKey())
		return nil
	})
	if err != nil {
		return false, false, err
	}
	return marked.Val() > 0, filled.Val() > 0, nil
}

// Fill marks every one of sessionIDs revoked for ttl and then, only if all of that worked,
// declares the marks complete.
func (r *Revocations) Fill(ctx context.Context, sessionIDs []string, ttl time.Duration) error {
	if len(sessionIDs) > 0 {
		_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, id := range sessionIDs {
				p.Set(ctx, r.ks.Key("revoked", id), 1, ttl)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("fill revocations: %w", err)
		}
	}
	if err := r.rdb.Set(ctx, r.completeKey(), 1, 0).Err(); err != nil {
		return fmt.Errorf("mark revocations complete: %w", err)
	}
	return nil
}

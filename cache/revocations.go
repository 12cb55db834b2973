package cache

import (
	"context"
	_ "embed"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed lua/revocations_begin.lua
	revocationsBeginSrc string
	//go:embed lua/revocations_grant.lua
	revocationsGrantSrc string

	revocationsBegin = redis.NewScript(revocationsBeginSrc)
	revocationsGrant = redis.NewScript(revocationsGrantSrc)
)

// Revocations remembers revoked login sessions for as long as their access tokens live, and holds
// the lease that says the marks are complete (see leaseKey). Every key carries the hash tag
// {revocations}: on a cluster one node holds them all, so a node that restarts empty loses the
// lease with the marks instead of leaving a lease that vouches for marks it no longer has, and
// a grant writes its marks and the lease in one script.
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
	return r.rdb.Set(ctx, r.markKey(sessionID), 1, ttl).Err()
}

func (r *Revocations) markKey(sessionID string) string {
	return r.ks.Key("{revocations}", "revoked", sessionID)
}

// leaseKey exists only while the lease runs: some instance copied the revocations from
// PostgreSQL shortly before (Grant). A Redis that lost its data, missed a revocation, or that no
// instance could renew lately lets it lapse instead of answering "not revoked".
func (r *Revocations) leaseKey() string { return r.ks.Key("{revocations}", "complete") }

// IsRevoked reports whether sessionID is marked revoked, and whether the lease vouches that the
// marks are complete, in one round trip; an error means Redis could not say.
func (r *Revocations) IsRevoked(ctx context.Context, sessionID string) (revoked, complete bool, err error) {
	var marked, leased *redis.IntCmd
	_, err = r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		marked = p.Exists(ctx, r.markKey(sessionID))
		leased = p.Exists(ctx, r.leaseKey())
		return nil
	})
	if err != nil {
		return false, false, err
	}
	return marked.Val() > 0, leased.Val() > 0, nil
}

// BeginRenewal starts a renewal of the lease: whether it is held now, and Redis's clock at this
// instant, from which the renewed lease will run (see Grant).
func (r *Revocations) BeginRenewal(ctx context.Context) (held bool, start time.Time, err error) {
	res, err := revocationsBegin.Run(ctx, r.rdb, []string{r.leaseKey()}).Int64Slice()
	if err != nil {
		return false, time.Time{}, fmt.Errorf("begin revocation lease renewal: %w", err)
	}
	return res[1] == 1, time.UnixMilli(res[0]), nil
}

// Grant marks every one of sessionIDs revoked for ttl and holds the lease until expires (Redis's
// clock, as BeginRenewal told it), atomically. recentOnly says sessionIDs are only the latest
// revocations: then the lease is extended if it is still held, never started. granted is false
// when the lease was not granted: expires has passed, or recentOnly and the lease is gone.
func (r *Revocations) Grant(ctx context.Context, sessionIDs []string, ttl time.Duration, expires time.Time, recentOnly bool) (granted bool, err error) {
	keys := make([]string, 0, 1+len(sessionIDs))
	keys = append(keys, r.leaseKey())
	for _, id := range sessionIDs {
		keys = append(keys, r.markKey(id))
	}
	recent := "0"
	if recentOnly {
		recent = "1"
	}
	n, err := revocationsGrant.Run(ctx, r.rdb, keys, expires.UnixMilli(), recent, ttl.Milliseconds()).Int64()
	if err != nil {
		return false, fmt.Errorf("grant revocation lease: %w", err)
	}
	return n == 1, nil
}

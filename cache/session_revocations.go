package cache

import (
	"context"
	_ "embed"
	"fmt"
	"sync"
	"sync/atomic"
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
//
// "Not revoked" answers are also remembered in process (notRevoked), for at most
// NotRevokedMemory and never past the lease that vouched for them, and only while the
// broadcaster's subscription is confirmed: a revocation's mark is broadcast once Redis has it,
// before the revocation answers, and drops the session from every instance's memory.
type Revocations struct {
	rdb        redis.UniversalClient
	ks         Keyspace
	b          *Broadcaster
	notRevoked *local[struct{}] // keyed by mark key, so a broadcast mark drops its session
	now        func() time.Time

	listenMu  sync.Mutex
	listeners []func(markKey string) // told of each revocation this process marks (NotificationHub)

	Stats RevocationStats
}

// RevocationStats counts how revocation checks were answered. Values only grow.
type RevocationStats struct {
	MemoryHits  atomic.Int64 // "not revoked" answered in process, without Redis
	Unconfirmed atomic.Int64 // revocations not acknowledged by every instance, answered after the memories' lifetime
}

// NotRevokedMemory is the longest an instance remembers that a session is not revoked.
const NotRevokedMemory = time.Second

// notRevokedMax bounds the sessions remembered; a full memory drops a tenth.
const notRevokedMax = 100_000

// NewRevocations returns the cache; b keeps the in-process memory coherent (nil: a process on
// its own).
func NewRevocations(rdb redis.UniversalClient, ks Keyspace, b *Broadcaster) *Revocations {
	r := &Revocations{rdb: rdb, ks: ks, b: b, notRevoked: newLocal[struct{}](NotRevokedMemory, notRevokedMax), now: time.Now}
	b.register(r.notRevoked)
	return r
}

// Revoke marks sessionID revoked for ttl and, once Redis has the mark, tells every instance to
// forget that the session was not revoked, and returns once each has confirmed it (or, failing
// that, once every memory that predates the mark has ended). When the mark fails nothing is
// broadcast: the
// memories formed under a lease end with it, and the revocation waits for the leases (see
// service.SessionService.remember).
func (r *Revocations) Revoke(ctx context.Context, sessionID string, ttl time.Duration) error {
	key := r.markKey(sessionID)
	r.notRevoked.delete(key)
	if err := r.rdb.Set(ctx, key, 1, ttl).Err(); err != nil {
		return err
	}
	// Again: a check that read "no mark" before the SET may have remembered it since (its
	// stamp predates the first delete, so it cannot store after this one).
	r.notRevoked.delete(key)
	r.tellListeners(key)
	marked := r.now()
	if r.b.publishAcked([]string{key}, revocationAckWait) {
		return nil
	}
	// Some instance did not confirm that it forgot the session: wait until every memory formed
	// before the mark has ended (each was formed by a check sent before the SET returned, and
	// lives at most NotRevokedMemory); a later check sees the mark.
	r.Stats.Unconfirmed.Add(1)
	wait := time.NewTimer(time.Until(marked.Add(NotRevokedMemory + revocationMemorySlack)))
	defer wait.Stop()
	select {
	case <-wait.C:
	case <-ctx.Done():
	}
	return nil
}

// revocationAckWait is how long a revocation waits for every instance to confirm that it forgot
// the session, before it waits out their memories instead.
const revocationAckWait = 500 * time.Millisecond

// revocationMemorySlack covers the rounding of the memory's expiry.
const revocationMemorySlack = 10 * time.Millisecond

func (r *Revocations) markKey(sessionID string) string {
	return r.ks.Key("{revocations}", "revoked", sessionID)
}

// leaseKey exists only while the lease runs: some instance copied the revocations from
// PostgreSQL shortly before (Grant). A Redis that lost its data, missed a revocation, or that no
// instance could renew lately lets it lapse instead of answering "not revoked".
func (r *Revocations) leaseKey() string { return r.ks.Key("{revocations}", "complete") }

// IsRevoked reports whether sessionID is marked revoked, and whether the lease vouches that the
// marks are complete; an error means Redis could not say. A remembered "not revoked" answers
// without Redis; otherwise one round trip reads the mark and the lease's remaining life, and a
// "not revoked" under the lease is remembered until the earlier of NotRevokedMemory and the
// lease's end (counted from before the request was sent, so never later than Redis ends it).
func (r *Revocations) IsRevoked(ctx context.Context, sessionID string) (revoked, complete bool, err error) {
	key := r.markKey(sessionID)
	remember := r.b.Subscribed()
	var stamp uint64
	if remember {
		_, ok, st := r.notRevoked.get(key)
		if ok {
			r.Stats.MemoryHits.Add(1)
			return false, true, nil
		}
		stamp = st
	}
	sent := r.now()
	var marked *redis.IntCmd
	var leaseLeft *redis.DurationCmd
	_, err = r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		marked = p.Exists(ctx, key)
		leaseLeft = p.PTTL(ctx, r.leaseKey())
		return nil
	})
	if err != nil {
		return false, false, err
	}
	// PTTL: -2 no lease; -1 a lease without an end, which a grant never writes: not trusted to
	// remember, but it still vouches as EXISTS did.
	left := leaseLeft.Val()
	revoked, complete = marked.Val() > 0, left != -2
	if remember && !revoked && left > 0 {
		r.notRevoked.setUntilIfUnchanged(key, struct{}{}, stamp, sent.Add(left))
	}
	return revoked, complete, nil
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
	// This process forgets these sessions at once; the others' memories of them end with the
	// lease they were formed under.
	r.notRevoked.delete(keys[1:]...)
	n, err := revocationsGrant.Run(ctx, r.rdb, keys, expires.UnixMilli(), recent, ttl.Milliseconds()).Int64()
	if err != nil {
		return false, fmt.Errorf("grant revocation lease: %w", err)
	}
	return n == 1, nil
}

// listen has fn told of every revocation this process marks (the other instances' marks arrive
// through the broadcaster's tiers).
func (r *Revocations) listen(fn func(markKey string)) {
	r.listenMu.Lock()
	defer r.listenMu.Unlock()
	r.listeners = append(r.listeners, fn)
}

func (r *Revocations) tellListeners(key string) {
	r.listenMu.Lock()
	fns := r.listeners
	r.listenMu.Unlock()
	for _, fn := range fns {
		fn(key)
	}
}

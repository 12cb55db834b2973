package cache_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// grantLease holds the revocation lease for d from now (Redis's clock).
func grantLease(t *testing.T, rv *cache.Revocations, d time.Duration) {
	t.Helper()
	_, start, err := rv.BeginRenewal(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := rv.Grant(t.Context(), nil, time.Minute, start.Add(d), false); err != nil || !ok {
		t.Fatalf("Grant = %v, %v", ok, err)
	}
}

func checkRevoked(t *testing.T, rv *cache.Revocations, sid string, want bool) {
	t.Helper()
	revoked, complete, err := rv.IsRevoked(t.Context(), sid)
	if err != nil || revoked != want || !complete {
		t.Fatalf("IsRevoked(%s) = %v, complete %v, %v; want %v under the lease", sid, revoked, complete, err, want)
	}
}

// Acceptance (issue #14 item 6): "not revoked" is remembered in process, and a revocation on
// another instance ends the memory before it answers; no memory while the subscription is not
// confirmed; a memory never outlives NotRevokedMemory nor the lease it was formed under.
func TestRevocations_NotRevokedMemory(t *testing.T) {
	t.Parallel()

	t.Run("a revocation on A ends B's memory before A's Revoke returns", func(t *testing.T) {
		t.Parallel()
		ks := cache.Keyspace(testenv.NewRedis(t).Prefix)
		a, b := newInstance(t, ks, instanceOpts{}), newInstance(t, ks, instanceOpts{})
		a.waitState(t, true)
		b.waitState(t, true)
		ra := cache.NewRevocations(testenv.NewRedisClient(t, nil), ks, a.bcast)
		rb := cache.NewRevocations(testenv.NewRedisClient(t, nil), ks, b.bcast)
		grantLease(t, ra, time.Hour)
		checkRevoked(t, rb, "s1", false)
		checkRevoked(t, rb, "s1", false)
		if n := rb.Stats.MemoryHits.Load(); n != 1 {
			t.Fatalf("B's memory hits after two checks: %d, want 1", n)
		}
		if err := ra.Revoke(t.Context(), "s1", time.Minute); err != nil {
			t.Fatal(err)
		}
		// No wait for B's subscription: Revoke returned once B acknowledged.
		checkRevoked(t, rb, "s1", true)
		checkRevoked(t, ra, "s1", true)
		if n := ra.Stats.Unconfirmed.Load(); n != 0 {
			t.Fatalf("%d revocations unconfirmed with every instance answering, want 0", n)
		}
	})

	t.Run("a subscriber that never acknowledges: the revocation waits out the memories", func(t *testing.T) {
		t.Parallel()
		ks := cache.Keyspace(testenv.NewRedis(t).Prefix)
		a := newInstance(t, ks, instanceOpts{})
		a.waitState(t, true)
		mute := testenv.NewRedisClient(t, nil).Subscribe(t.Context(), a.bcast.Channel()) // counted by PUBLISH, never answers
		t.Cleanup(func() { _ = mute.Close() })
		if _, err := mute.Receive(t.Context()); err != nil { // the subscription's confirmation
			t.Fatal(err)
		}
		ra := cache.NewRevocations(testenv.NewRedisClient(t, nil), ks, a.bcast)
		grantLease(t, ra, time.Hour)
		checkRevoked(t, ra, "s2", false)
		if err := ra.Revoke(t.Context(), "s2", time.Minute); err != nil {
			t.Fatal(err)
		}
		if n := ra.Stats.Unconfirmed.Load(); n != 1 {
			t.Fatalf("Unconfirmed = %d, want 1", n)
		}
		checkRevoked(t, ra, "s2", true)
	})

	t.Run("nothing is remembered while the subscription is not confirmed", func(t *testing.T) {
		t.Parallel()
		ks := cache.Keyspace(testenv.NewRedis(t).Prefix)
		held := make(chan struct{})
		t.Cleanup(func() { close(held) })
		down := newInstance(t, ks, instanceOpts{tuning: cache.BroadcastTuning{BeforeSubscribe: func(ctx context.Context) error {
			select {
			case <-held:
			case <-ctx.Done():
			}
			return ctx.Err()
		}}})
		rv := cache.NewRevocations(testenv.NewRedisClient(t, nil), ks, down.bcast)
		grantLease(t, rv, time.Hour)
		for range 3 {
			checkRevoked(t, rv, "s1", false)
		}
		if n := rv.Stats.MemoryHits.Load(); n != 0 {
			t.Fatalf("%d memory hits with the subscription down, want 0", n)
		}
	})

	t.Run("a memory ends after NotRevokedMemory, or with its lease if that ends first", func(t *testing.T) {
		t.Parallel()
		r := testenv.NewRedis(t)
		rv := cache.NewRevocations(r.Client, cache.Keyspace(r.Prefix), nil)
		clock := &fakeClock{t: time.Now()}
		cache.SetRevocationsClock(rv, clock.now)
		hits := func() int64 { return rv.Stats.MemoryHits.Load() }

		grantLease(t, rv, time.Hour)
		checkRevoked(t, rv, "long", false)
		clock.advance(cache.NotRevokedMemory - time.Millisecond)
		checkRevoked(t, rv, "long", false)
		if hits() != 1 {
			t.Fatalf("memory hits %d just before NotRevokedMemory, want 1", hits())
		}
		clock.advance(2 * time.Millisecond)
		checkRevoked(t, rv, "long", false)
		if hits() != 1 {
			t.Fatalf("memory hits %d after NotRevokedMemory, want still 1 (asked Redis)", hits())
		}

		// A lease with 800 ms left: the memory ends by then, on this process's clock.
		if err := r.Client.PExpire(t.Context(), r.Prefix+"{revocations}:complete", 800*time.Millisecond).Err(); err != nil {
			t.Fatal(err)
		}
		checkRevoked(t, rv, "short", false)
		clock.advance(time.Millisecond)
		checkRevoked(t, rv, "short", false)
		if hits() != 2 {
			t.Fatalf("memory hits %d right after the check, want 2", hits())
		}
		clock.advance(800 * time.Millisecond)
		before := hits()
		_, _, _ = rv.IsRevoked(t.Context(), "short") // the lease may have ended meanwhile: only the memory matters
		if hits() != before {
			t.Fatal("the memory outlived the lease it was formed under")
		}
	})
}

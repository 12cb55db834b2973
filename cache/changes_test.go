package cache_test

import (
	"context"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/cache"
)

// TestChanges_MoveWithEveryChangeOnEveryInstance: the change version a memo is kept under stays
// while nothing changes, moves on the instance that changed a key before its write returns, on
// the other once it received the broadcast, and on both with time (half the in-process TTL).
func TestChanges_MoveWithEveryChangeOnEveryInstance(t *testing.T) {
	t.Parallel()
	ks, a, b := twoInstances(t, instanceOpts{}, instanceOpts{})
	now := time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	changesOf := func(in *instance) *cache.Changes {
		p := localPolicy
		p.Broadcast = in.bcast
		c := cache.NewChanges(p)
		cache.SetChangesClock(c, clock)
		return c
	}
	ca, cb := changesOf(a), changesOf(b)
	version := func(c *cache.Changes) uint64 {
		t.Helper()
		v, ok := c.Version()
		if !ok {
			t.Fatal("changes not followed with both subscriptions up")
		}
		return v
	}
	a0, b0 := version(ca), version(cb)
	if version(ca) != a0 || version(cb) != b0 {
		t.Fatal("the version moved with nothing changed")
	}

	key := ks.Key("article", "7")
	if err := a.rt.Delete(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	a1 := version(ca)
	if a1 == a0 {
		t.Fatal("A's own change did not move A's version before the write returned")
	}
	b.waitReceived(t, key, false)
	b1 := version(cb)
	if b1 == b0 {
		t.Fatal("A's change did not move B's version once B received it")
	}

	now = now.Add(localPolicy.LocalTTL / 2)
	if version(ca) == a1 || version(cb) == b1 {
		t.Fatal("half the in-process TTL passed and a version stayed: a memo could outlive a copy whose change was lost")
	}
}

// TestChanges_NotFollowedWithoutACoherentTier: no broadcast, or no in-process tier, means no memo.
func TestChanges_NotFollowedWithoutACoherentTier(t *testing.T) {
	t.Parallel()
	if _, ok := cache.NewChanges(cache.Policy{LocalTTL: time.Second}).Version(); ok {
		t.Error("followed without a broadcast")
	}
	_, a, _ := twoInstances(t, instanceOpts{}, instanceOpts{})
	if _, ok := cache.NewChanges(cache.Policy{Broadcast: a.bcast}).Version(); ok {
		t.Error("followed without an in-process tier")
	}
	var nilChanges *cache.Changes
	if _, ok := nilChanges.Version(); ok {
		t.Error("a nil Changes is followed")
	}
}

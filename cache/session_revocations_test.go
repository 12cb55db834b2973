package cache_test

import (
	"context"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// TestRevocations: marks are only vouched for while the lease is held; the lease runs until an
// instant fixed in Redis's clock when its renewal began, never from when the grant arrives; a
// Redis that lost its keys (here: the prefix's keys deleted, as a restart without persistence
// would) says so instead of answering a plain "not revoked".
func TestRevocations(t *testing.T) {
	t.Parallel()
	r := testenv.NewRedis(t)
	rv := cache.NewRevocations(r.Client, cache.Keyspace(r.Prefix), nil)
	ctx := context.Background()
	lease := r.Prefix + "{revocations}:complete"
	check := func(t *testing.T, sid string, wantRevoked, wantComplete bool) {
		t.Helper()
		revoked, complete, err := rv.IsRevoked(ctx, sid)
		if err != nil || revoked != wantRevoked || complete != wantComplete {
			t.Fatalf("IsRevoked(%s) = revoked %v, complete %v, %v; want %v, %v", sid, revoked, complete, err, wantRevoked, wantComplete)
		}
	}
	begin := func(t *testing.T, wantHeld bool) time.Time {
		t.Helper()
		before, err := r.Client.Time(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		held, start, err := rv.BeginRenewal(ctx)
		if err != nil || held != wantHeld {
			t.Fatalf("BeginRenewal = held %v, %v; want held %v", held, err, wantHeld)
		}
		if start.Before(before.Truncate(time.Millisecond)) || start.After(before.Add(time.Minute)) {
			t.Fatalf("BeginRenewal's start %v is not Redis's clock (TIME said %v just before)", start, before)
		}
		return start
	}
	expiresAt := func(t *testing.T) int64 {
		t.Helper()
		ms, err := r.Client.PExpireTime(ctx, lease).Result()
		if err != nil {
			t.Fatal(err)
		}
		return ms.Milliseconds()
	}

	check(t, "s1", false, false) // never granted
	if err := rv.Revoke(ctx, "s1", time.Minute); err != nil {
		t.Fatal(err)
	}
	check(t, "s1", true, false) // a mark is a mark, leased or not

	start := begin(t, false)
	if ok, err := rv.Grant(ctx, []string{"s2", "s3"}, time.Minute, start.Add(time.Hour), false); err != nil || !ok {
		t.Fatalf("Grant = %v, %v", ok, err)
	}
	check(t, "s2", true, true)
	check(t, "s3", true, true)
	check(t, "s4", false, true)
	if ttl := r.Client.TTL(ctx, r.Prefix+"{revocations}:revoked:s2").Val(); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("a copied mark lives %v, want up to a minute", ttl)
	}
	if got, want := expiresAt(t), start.Add(time.Hour).UnixMilli(); got != want {
		t.Fatalf("the lease expires at %d, want %d: the instant its renewal began plus the lease", got, want)
	}

	t.Run("a renewal that began earlier does not shorten a later lease", func(t *testing.T) {
		later := expiresAt(t)
		start := begin(t, true)
		if ok, err := rv.Grant(ctx, nil, time.Minute, start.Add(time.Minute), true); err != nil || !ok {
			t.Fatalf("Grant = %v, %v; want true (the lease runs at least that long)", ok, err)
		}
		if got := expiresAt(t); got != later {
			t.Fatalf("the lease expires at %d, want the later %d", got, later)
		}
	})

	t.Run("a renewal too slow to matter grants nothing", func(t *testing.T) {
		if err := r.Client.Del(ctx, lease).Err(); err != nil {
			t.Fatal(err)
		}
		start := begin(t, false)
		if ok, err := rv.Grant(ctx, []string{"s5"}, time.Minute, start.Add(-time.Millisecond), false); err != nil || ok {
			t.Fatalf("Grant of a lease already over = %v, %v; want false", ok, err)
		}
		check(t, "s5", true, false) // the marks are copied all the same; they are never wrong
	})

	t.Run("recent revocations alone extend a lease but never start one", func(t *testing.T) {
		start := begin(t, false) // the lease is gone (the subtest before let it go)
		if ok, err := rv.Grant(ctx, []string{"s6"}, time.Minute, start.Add(time.Hour), true); err != nil || ok {
			t.Fatalf("Grant of recent revocations without a lease = %v, %v; want false", ok, err)
		}
		check(t, "s6", true, false)
	})

	t.Run("a Redis that lost its keys cannot vouch for anything", func(t *testing.T) {
		start := begin(t, false)
		if ok, err := rv.Grant(ctx, nil, time.Minute, start.Add(time.Hour), false); err != nil || !ok { // nothing revoked lately: still complete
			t.Fatalf("Grant = %v, %v", ok, err)
		}
		check(t, "s4", false, true)
		keys, err := testenv.ScanKeys(ctx, r.Client, r.Prefix+"*")
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			r.Client.Del(ctx, k)
		}
		check(t, "s2", false, false) // lost: not "not revoked"
	})
}

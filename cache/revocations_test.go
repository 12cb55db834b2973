package cache_test

import (
	"context"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// TestRevocations: marks are only vouched for after a Fill; a Redis that lost its keys (here: the
// prefix's keys deleted, as a restart without persistence would) says so instead of answering a
// plain "not revoked".
func TestRevocations(t *testing.T) {
	t.Parallel()
	r := testenv.NewRedis(t)
	rv := cache.NewRevocations(r.Client, cache.Keyspace(r.Prefix))
	ctx := context.Background()
	check := func(t *testing.T, sid string, wantRevoked, wantComplete bool) {
		t.Helper()
		revoked, complete, err := rv.IsRevoked(ctx, sid)
		if err != nil || revoked != wantRevoked || complete != wantComplete {
			t.Fatalf("IsRevoked(%s) = revoked %v, complete %v, %v; want %v, %v", sid, revoked, complete, err, wantRevoked, wantComplete)
		}
	}

	check(t, "s1", false, false) // never filled
	if err := rv.Revoke(ctx, "s1", time.Minute); err != nil {
		t.Fatal(err)
	}
	check(t, "s1", true, false) // a mark is a mark, filled or not
	if err := rv.Fill(ctx, []string{"s2", "s3"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	check(t, "s2", true, true)
	check(t, "s3", true, true)
	check(t, "s4", false, true)
	if ttl := r.Client.TTL(ctx, r.Prefix+"revoked:s2").Val(); ttl <= 0 || ttl > time.Minute {
		t.Fatalf("a filled mark lives %v, want up to a minute", ttl)
	}
	if err := rv.Fill(ctx, nil, time.Minute); err != nil { // nothing revoked lately: still complete
		t.Fatal(err)
	}

	keys, err := testenv.ScanKeys(ctx, r.Client, r.Prefix+"*")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		r.Client.Del(ctx, k)
	}
	check(t, "s2", false, false) // lost: not "not revoked"
}

package cache_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// TestReadThroughLocalTier: with LocalTTL set, repeated reads of a key are answered in process
// (no Redis, no PostgreSQL), a Delete clears the process's copy at once, and entries expire.
func TestReadThroughLocalTier(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	loads := 0
	load := func(context.Context) (string, error) { loads++; return "value", nil }

	t.Run("hits and deletes", func(t *testing.T) {
		rds := testenv.NewRedis(t)
		rt := cache.NewReadThrough[string](rds.Client, "local", cache.Policy{TTL: time.Minute, NullTTL: time.Second, LocalTTL: time.Minute}, log)
		key := rds.Prefix + "k"
		loads = 0
		for range 5 {
			if v, err := rt.Get(context.Background(), key, load); err != nil || v != "value" {
				t.Fatalf("get: %q, %v", v, err)
			}
		}
		if loads != 1 || rt.Stats.LocalHits.Load() != 4 {
			t.Fatalf("loads %d, local hits %d; want 1 and 4", loads, rt.Stats.LocalHits.Load())
		}
		// Change Redis behind the cache: the local copy still answers until it is deleted.
		if err := rds.Client.Set(context.Background(), key, `"changed"`, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		if v, _ := rt.Get(context.Background(), key, load); v != "value" {
			t.Fatalf("local tier bypassed: %q", v)
		}
		if err := rt.Delete(context.Background(), key); err != nil {
			t.Fatal(err)
		}
		if v, _ := rt.Get(context.Background(), key, load); v != "value" || loads != 2 {
			t.Fatalf("after delete: %q with %d loads; want a fresh load", v, loads)
		}
	})

	t.Run("null markers and expiry with Redis down", func(t *testing.T) {
		rt := cache.NewReadThrough[string](testenv.DeadRedis(t), "local", cache.Policy{TTL: time.Minute, NullTTL: time.Second, LocalTTL: 500 * time.Millisecond}, log) // long enough for three reads on a loaded machine
		missing := 0
		loadMissing := func(context.Context) (string, error) { missing++; return "", domain.ErrNotFound }
		for range 3 {
			if _, err := rt.Get(context.Background(), "nothing", loadMissing); !errors.Is(err, domain.ErrNotFound) {
				t.Fatalf("err %v", err)
			}
		}
		if missing != 1 {
			t.Fatalf("%d loads of a missing key while Redis is down; the local tier should absorb repeats", missing)
		}
		deadline := time.Now().Add(5 * time.Second)
		for missing == 1 && time.Now().Before(deadline) {
			_, _ = rt.Get(context.Background(), "nothing", loadMissing)
		}
		if missing != 2 {
			t.Fatalf("the local entry never expired (%d loads)", missing)
		}
	})
}

// TestCountersLocalTier: with a local tier, repeated counter reads stay in process, and this
// process's own increments are visible at once (the local copy is dropped on every change).
func TestCountersLocalTier(t *testing.T) {
	t.Parallel()
	rds := testenv.NewRedis(t)
	c := cache.NewCounters(rds.Client, cache.Keyspace(rds.Prefix), cache.Policy{TTL: time.Minute, LocalTTL: time.Minute}, testenv.Logger(t))
	ctx := context.Background()
	if err := c.Fill(ctx, domain.BizArticle, map[int64]domain.Counters{7: {Likes: 1}}); err != nil {
		t.Fatal(err)
	}
	noLoad := func(context.Context, []int64) (map[int64][]cache.CounterRow, error) {
		t.Error("a cached item was loaded")
		return nil, nil
	}
	likes := func() int64 {
		got, err := c.Read(ctx, domain.BizArticle, []int64{7}, noLoad)
		if err != nil {
			t.Fatal(err)
		}
		return got[7].Likes
	}
	if n := likes(); n != 1 {
		t.Fatalf("likes %d", n)
	}
	// Behind the cache's back: the local copy answers.
	rds.Client.HSet(ctx, c.Key(domain.BizArticle, 7), cache.FieldLikes, 99, "s0", "0:0:99:0")
	if n := likes(); n != 1 {
		t.Fatalf("local tier bypassed: likes %d", n)
	}
	if h := c.Stats.LocalHits.Load(); h != 1 {
		t.Errorf("Stats.LocalHits = %d, want 1", h)
	}
	// This process's own change is seen at once.
	change(c, newTruth(map[int64]domain.Counters{7: {Likes: 1}}), 7, cache.FieldLikes, 1) // its row: likes 2
	if n := likes(); n != 2 {
		t.Fatalf("after this process's like: likes %d, want 2", n)
	}
}

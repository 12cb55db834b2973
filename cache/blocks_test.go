package cache_test

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// TestBlocks_AChangeOnOneInstanceIsSeenByTheNextReadOnEvery: two instances hold a user's blocked
// set in process (a warm read costs no load); Changed on one returns once the other dropped its
// copy, so the very next read there loads the new set.
func TestBlocks_AChangeOnOneInstanceIsSeenByTheNextReadOnEvery(t *testing.T) {
	t.Parallel()
	rds := testenv.NewRedis(t)
	ks := cache.Keyspace(rds.Prefix)
	var stored atomic.Value
	stored.Store([]int64{})
	var loads atomic.Int64
	load := func(context.Context) ([]int64, error) {
		loads.Add(1)
		return stored.Load().([]int64), nil
	}
	var sets []*cache.Blocks
	for range 2 {
		in := newInstance(t, ks, instanceOpts{})
		in.waitState(t, true)
		policy := localPolicy
		policy.Broadcast = in.bcast
		sets = append(sets, cache.NewBlocks(testenv.NewRedisClient(t, nil), ks, policy, testenv.Logger(t)))
	}
	read := func(i int) []int64 {
		t.Helper()
		ids, err := sets[i].Blocked(t.Context(), 7, load)
		if err != nil {
			t.Fatal(err)
		}
		return ids
	}
	for i := range sets {
		if got := read(i); len(got) != 0 {
			t.Fatalf("instance %d: blocked set %v before any block, want none", i, got)
		}
	}
	warm := loads.Load()
	for i := range sets {
		read(i)
	}
	if loads.Load() != warm {
		t.Fatalf("warm reads loaded %d times", loads.Load()-warm)
	}

	stored.Store([]int64{3, 9})
	if err := sets[0].Changed(t.Context(), 7); err != nil {
		t.Fatal(err)
	}
	for i := range sets {
		if got := read(i); !reflect.DeepEqual(got, []int64{3, 9}) {
			t.Errorf("instance %d: blocked set %v right after the change, want [3 9]", i, got)
		}
	}
}

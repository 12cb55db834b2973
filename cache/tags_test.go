package cache_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// An instance keeps the tag cloud in process and drops it when another instance's write says so:
// with InvalidateEverywhere (this release's writes), and when the global first list page changes
// while the cloud is dropped in Redis only, which is all a v0.1.0 instance does in a rolling
// upgrade (it kept the cloud in Redis only and told no one).
func TestTagsCache_FollowsOtherInstances(t *testing.T) {
	t.Parallel()
	ks, a, b := twoInstances(t, instanceOpts{}, instanceOpts{})
	ctx := context.Background()
	policy := localPolicy
	policy.Broadcast = b.bcast
	rdb := testenv.NewRedisClient(t, nil)
	tags := cache.NewTagsCache(rdb, ks, policy, testenv.Logger(t))
	policyA := localPolicy
	policyA.Broadcast = a.bcast
	tagsA := cache.NewTagsCache(rdb, ks, policyA, testenv.Logger(t))
	listsA := cache.NewListPageCache(rdb, ks, policyA, testenv.Logger(t))

	var cloud atomic.Value
	var loads atomic.Int64
	cloud.Store([]string{"go"})
	load := func(context.Context) ([]string, error) { loads.Add(1); return cloud.Load().([]string), nil }
	read := func(want ...string) {
		t.Helper()
		got, err := tags.Get(ctx, load)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("B's cloud = %v, %v; want %v", got, err, want)
		}
	}
	read("go")
	read("go")
	if n := loads.Load(); n != 1 {
		t.Fatalf("%d loads for two reads; want the second from B's tier", n)
	}

	t.Run("this release's write", func(t *testing.T) {
		cloud.Store([]string{"go", "sql"})
		if err := tagsA.InvalidateEverywhere(ctx); err != nil { // returns once B has dropped its copy
			t.Fatal(err)
		}
		read("go", "sql")
	})

	t.Run("a v0.1.0 write", func(t *testing.T) {
		cloud.Store([]string{"go", "sql", "redis"})
		if err := rdb.Del(ctx, ks.Key("tags")).Err(); err != nil { // what v0.1.0's Invalidate did
			t.Fatal(err)
		}
		read("go", "sql") // B cannot know yet: nothing was broadcast
		if err := listsA.Invalidate(ctx, "redis"); err != nil {
			t.Fatal(err)
		}
		b.waitReceived(t, ks.Key("listpage", "global"), false)
		read("go", "sql", "redis")
	})
}

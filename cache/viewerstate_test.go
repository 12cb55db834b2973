package cache_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// viewerTruth is a fake PostgreSQL for one viewer's flags: the set of ids flagged, the loads it
// served, and an optional gate that holds a load after it has read (so a write can land between
// its read and its fill).
type viewerTruth struct {
	mu    sync.Mutex
	set   map[int64]bool
	gate  *testenv.Gate
	calls atomic.Int64
}

func (v *viewerTruth) put(id int64, on bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.set == nil {
		v.set = map[int64]bool{}
	}
	v.set[id] = on
}

func (v *viewerTruth) load(ctx context.Context, ids []int64) (map[int64]bool, error) {
	v.calls.Add(1)
	v.mu.Lock()
	out := map[int64]bool{}
	for _, id := range ids {
		if v.set[id] {
			out[id] = true
		}
	}
	g := v.gate
	v.mu.Unlock()
	if g != nil {
		if err := g.Wait(ctx); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func among(t *testing.T, c *cache.ViewerState, viewer int64, ids []int64, truth *viewerTruth) map[int64]bool {
	t.Helper()
	got, err := c.Among(t.Context(), viewer, cache.LikesOf(domain.BizArticle), ids, truth.load)
	if err != nil {
		t.Fatalf("Among: %v", err)
	}
	return got
}

func TestViewerState_BatchReadThrough(t *testing.T) {
	t.Parallel()
	rds := testenv.NewRedis(t)
	c := cache.NewViewerState(rds.Client, cache.Keyspace(rds.Prefix), testPolicy, testenv.Logger(t))
	truth := &viewerTruth{}
	truth.put(2, true)

	if got := among(t, c, 9, []int64{1, 2, 3, 2}, truth); len(got) != 1 || !got[2] {
		t.Fatalf("first read: %v, want only 2", got)
	}
	if got := among(t, c, 9, []int64{3, 2, 1}, truth); len(got) != 1 || !got[2] || truth.calls.Load() != 1 {
		t.Fatalf("second read: %v after %d loads, want only 2, from Redis (1 load)", got, truth.calls.Load())
	}
	// Another viewer's flags are their own.
	if got := among(t, c, 10, []int64{2}, truth); len(got) != 1 || truth.calls.Load() != 2 {
		t.Fatalf("viewer 10: %v after %d loads, want a load of its own", got, truth.calls.Load())
	}
	// A write: after its commit the entry goes; the next read loads the committed state.
	truth.put(2, false)
	tx := &fakeTx{}
	c.Changed(tx, 9, cache.LikesOf(domain.BizArticle), 2)
	if got := among(t, c, 9, []int64{2}, truth); !got[2] {
		t.Fatalf("before the commit: %v, want the old state (nothing invalidated yet)", got)
	}
	tx.end(txCommitted)
	if got := among(t, c, 9, []int64{1, 2}, truth); len(got) != 0 || truth.calls.Load() != 3 {
		t.Fatalf("after the commit: %v after %d loads, want nothing, loaded", got, truth.calls.Load())
	}
	// A unit of work whose outcome is unknown invalidates too.
	truth.put(1, true)
	tx = &fakeTx{}
	c.Changed(tx, 9, cache.LikesOf(domain.BizArticle), 1)
	tx.end(txUnknown)
	if got := among(t, c, 9, []int64{1, 2}, truth); len(got) != 1 || !got[1] {
		t.Fatalf("after an unknown outcome: %v, want 1", got)
	}
}

// Acceptance (fill vs invalidate, two instances): a load that read the viewer's old state
// before another instance's write committed, and whose fill arrives after that write's
// invalidation, loses to it, in Redis and in the reader's in-process tier.
func TestViewerState_FillLosesToAnotherInstancesInvalidation(t *testing.T) {
	t.Parallel()
	ks := cache.Keyspace(testenv.NewRedis(t).Prefix)
	a, b := newInstance(t, ks, instanceOpts{}), newInstance(t, ks, instanceOpts{})
	a.waitState(t, true)
	b.waitState(t, true)
	reader, writer := b.viewers, a.viewers
	truth := &viewerTruth{gate: testenv.NewGate(t)}
	like := cache.LikesOf(domain.BizArticle)

	done := make(chan map[int64]bool, 1)
	go func() {
		got, _ := reader.Among(context.Background(), 5, like, []int64{7}, truth.load)
		done <- got
	}()
	testenv.Recv(t, truth.gate.Entered(), "the load to have read 'not liked'")
	truth.put(7, true) // the like commits...
	writer.Invalidate(t.Context(), 5, like, 7)
	b.waitReceived(t, writer.Key(5, like, 7), false) // ...and its broadcast reached the reader
	truth.mu.Lock()
	held := truth.gate
	truth.gate = nil // the reads below load at once
	truth.mu.Unlock()
	held.Open()
	if got := testenv.Recv(t, done, "the racing read"); got[7] {
		t.Fatalf("the racing read served %v; it loaded 'not liked'", got)
	}
	for name, c := range map[string]*cache.ViewerState{"the reader": reader, "the writer": writer} {
		for range 2 { // the second read would hit the in-process tier
			if got, err := c.Among(t.Context(), 5, like, []int64{7}, truth.load); err != nil || !got[7] {
				t.Fatalf("%s then reads %v (%v): the old state came back", name, got, err)
			}
		}
	}
	if n := reader.Stats.FillsSkipped.Load(); n != 1 {
		t.Errorf("FillsSkipped = %d, want 1", n)
	}
}

// Acceptance (other instance): a viewer's flag kept in B's in-process tier is gone by the time
// A's invalidation returns (B acknowledged it); B's next read is the committed state.
func TestViewerState_InvalidationReachesTheOthersTier(t *testing.T) {
	t.Parallel()
	ks := cache.Keyspace(testenv.NewRedis(t).Prefix)
	a, b := newInstance(t, ks, instanceOpts{}), newInstance(t, ks, instanceOpts{})
	a.waitState(t, true)
	b.waitState(t, true)
	truth := &viewerTruth{}
	follows := cache.ViewerFollows
	read := func(c *cache.ViewerState) bool {
		got, err := c.Among(t.Context(), 5, follows, []int64{3}, truth.load)
		if err != nil {
			t.Fatal(err)
		}
		return got[3]
	}
	read(b.viewers)
	read(b.viewers)
	if h := b.viewers.Stats.LocalHits.Load(); h != 1 {
		t.Fatalf("B: %d local hits after two reads, want 1", h)
	}
	truth.put(3, true)
	a.viewers.Invalidate(t.Context(), 5, follows, 3)
	// No wait for B's subscription: Invalidate returned once B acknowledged.
	if !read(b.viewers) {
		t.Fatal("B still serves 'not following' right after A's invalidation returned")
	}
	if n := a.viewers.Stats.Unconfirmed.Load(); n != 0 {
		t.Fatalf("%d invalidations unconfirmed with every instance answering, want 0", n)
	}
}

// Acceptance (concurrent): many readers on two instances while one writer flips the flag; once
// the last write's invalidation is done, every instance reads the last state.
func TestViewerState_ConcurrentReadsAndWritesEndExact(t *testing.T) {
	t.Parallel()
	ks := cache.Keyspace(testenv.NewRedis(t).Prefix)
	a, b := newInstance(t, ks, instanceOpts{}), newInstance(t, ks, instanceOpts{})
	a.waitState(t, true)
	b.waitState(t, true)
	truth := &viewerTruth{}
	like := cache.LikesOf(domain.BizArticle)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, c := range []*cache.ViewerState{a.viewers, b.viewers, a.viewers, b.viewers} {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := c.Among(context.Background(), 1, like, []int64{1, 2}, truth.load); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	on := false
	for range 200 {
		on = !on
		truth.put(1, on)
		a.viewers.Invalidate(t.Context(), 1, like, 1)
	}
	close(stop)
	wg.Wait()
	// A last invalidation of another key: messages arrive in order, so once B has handled it
	// B has handled every earlier one.
	a.viewers.Invalidate(t.Context(), 1, like, 999)
	b.waitReceived(t, a.viewers.Key(1, like, 999), false)
	for name, c := range map[string]*cache.ViewerState{"A": a.viewers, "B": b.viewers} {
		if got := among(t, c, 1, []int64{1}, truth); got[1] != on {
			t.Fatalf("%s reads liked=%v after the last write, want %v", name, got[1], on)
		}
	}
}

// Acceptance (Redis failing): reads load from PostgreSQL; an invalidation that could not be
// written is written once Redis answers, before any read trusts the old entry.
func TestViewerState_RedisFailing(t *testing.T) {
	t.Parallel()
	rds := testenv.NewRedis(t)
	sw := &redisSwitch{}
	client := testenv.NewRedisClient(t, nil)
	client.AddHook(sw)
	c := cache.NewViewerState(client, cache.Keyspace(rds.Prefix), testPolicy, testenv.Logger(t))
	other := cache.NewViewerState(testenv.NewRedisClient(t, nil), cache.Keyspace(rds.Prefix), testPolicy, testenv.Logger(t))
	truth := &viewerTruth{}
	among(t, c, 4, []int64{8}, truth) // cached: not liked

	sw.down.Store(true)
	truth.put(8, true)
	c.Invalidate(t.Context(), 4, cache.LikesOf(domain.BizArticle), 8) // fails
	before := truth.calls.Load()
	if got := among(t, c, 4, []int64{8}, truth); !got[8] || truth.calls.Load() != before+1 {
		t.Fatalf("with Redis down: %v after %d loads, want liked, from PostgreSQL", got, truth.calls.Load()-before)
	}
	sw.down.Store(false)
	// The first read once Redis answers writes the pending invalidation and does not trust the
	// entry it just read.
	if got := among(t, c, 4, []int64{8}, truth); !got[8] {
		t.Fatalf("once Redis is back: %v, want liked", got)
	}
	if got := among(t, other, 4, []int64{8}, truth); !got[8] {
		t.Fatalf("another instance once Redis is back: %v, want liked", got)
	}
}

// redisSwitch fails every command while down.
type redisSwitch struct{ down atomic.Bool }

var errRedisDown = errors.New("injected: Redis down")

func (s *redisSwitch) DialHook(next redis.DialHook) redis.DialHook { return next }

func (s *redisSwitch) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if s.down.Load() {
			cmd.SetErr(errRedisDown)
			return errRedisDown
		}
		return next(ctx, cmd)
	}
}

func (s *redisSwitch) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if s.down.Load() {
			for _, c := range cmds {
				c.SetErr(errRedisDown)
			}
			return errRedisDown
		}
		return next(ctx, cmds)
	}
}

package cache_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

func TestReadThrough_ConcurrentFirstReadsShareOneLoad(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	key := e.ks.Key("article", "1")
	l := &loader{val: article{ID: 1, Title: "hello"}, gate: testenv.NewGate(t)}

	const n = 200
	var ready, done sync.WaitGroup
	ready.Add(n)
	got := make([]article, n)
	errs := make([]error, n)
	for i := range n {
		done.Go(func() {
			ready.Done()
			got[i], errs[i] = e.rt.Get(t.Context(), key, l.load)
		})
	}
	ready.Wait()
	testenv.Recv(t, l.gate.Entered(), "the first load to start")
	// Every caller has looked in Redis and missed; they are queueing behind the held load.
	testenv.WaitUntil(t, "all callers missed", func() bool { return e.rt.Stats.Misses.Load() == n })
	l.gate.Open()
	done.Wait()

	for i := range n {
		if errs[i] != nil || got[i] != l.val {
			t.Fatalf("caller %d: got %+v, %v; want %+v", i, got[i], errs[i], l.val)
		}
	}
	if c := l.calls.Load(); c != 1 {
		t.Errorf("loader called %d times, want 1", c)
	}
	if c := e.rt.Stats.Loads.Load(); c != 1 {
		t.Errorf("Stats.Loads = %d, want 1", c)
	}
	// The value is now in Redis: one more read is a hit.
	if v, err := e.rt.Get(t.Context(), key, l.load); err != nil || v != l.val {
		t.Fatalf("read after fill: %+v, %v", v, err)
	}
	if h := e.rt.Stats.Hits.Load(); h != 1 {
		t.Errorf("Stats.Hits = %d, want 1", h)
	}
}

func TestReadThrough_FirstCallerCancelledMidLoad_OthersSucceed(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	key := e.ks.Key("article", "2")
	l := &loader{val: article{ID: 2, Title: "survives"}, gate: testenv.NewGate(t)}

	ctx1, cancel1 := context.WithCancel(t.Context())
	defer cancel1()
	firstErr := make(chan error, 1)
	go func() {
		_, err := e.rt.Get(ctx1, key, l.load)
		firstErr <- err
	}()
	testenv.Recv(t, l.gate.Entered(), "the first caller's load to start")

	const others = 20
	var ready, done sync.WaitGroup
	ready.Add(others)
	got := make([]article, others)
	errs := make([]error, others)
	for i := range others {
		done.Go(func() {
			ready.Done()
			got[i], errs[i] = e.rt.Get(t.Context(), key, l.load)
		})
	}
	ready.Wait()
	testenv.WaitUntil(t, "all callers missed", func() bool { return e.rt.Stats.Misses.Load() == others+1 })

	cancel1()
	if err := testenv.Recv(t, firstErr, "the cancelled caller to return"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller: err = %v, want context.Canceled", err)
	}
	// The first caller is gone while its load is still held.
	l.gate.Open()
	done.Wait()

	for i := range others {
		if errs[i] != nil || got[i] != l.val {
			t.Fatalf("caller %d: got %+v, %v; want %+v", i, got[i], errs[i], l.val)
		}
	}
	if c := l.calls.Load(); c != 1 {
		t.Errorf("loader called %d times, want 1", c)
	}
	if p := l.ctxErr.Load(); p == nil || *p != nil {
		t.Errorf("load context was cancelled with its first caller: %v", p)
	}
	if !e.exists(t, key) {
		t.Error("value loaded for the cancelled caller's flight was not cached")
	}
}

func TestReadThrough_NotFoundIsCachedAsNull(t *testing.T) {
	t.Parallel()

	t.Run("sequential", func(t *testing.T) {
		t.Parallel()
		e := setup(t, envOpts{})
		key := e.ks.Key("article", "missing")
		l := &loader{err: fmt.Errorf("article 404: %w", domain.ErrNotFound)}
		for i := range 100 {
			if _, err := e.rt.Get(t.Context(), key, l.load); !errors.Is(err, domain.ErrNotFound) {
				t.Fatalf("read %d: err = %v, want ErrNotFound", i, err)
			}
		}
		if c := l.calls.Load(); c != 1 {
			t.Errorf("loader called %d times, want 1", c)
		}
		if h := e.rt.Stats.NullHits.Load(); h != 99 {
			t.Errorf("Stats.NullHits = %d, want 99", h)
		}
	})

	t.Run("concurrent", func(t *testing.T) {
		t.Parallel()
		e := setup(t, envOpts{})
		key := e.ks.Key("article", "missing")
		l := &loader{err: domain.ErrNotFound, gate: testenv.NewGate(t)}
		const n = 100
		var ready, done sync.WaitGroup
		ready.Add(n)
		errs := make([]error, n)
		for i := range n {
			done.Go(func() {
				ready.Done()
				_, errs[i] = e.rt.Get(t.Context(), key, l.load)
			})
		}
		ready.Wait()
		testenv.Recv(t, l.gate.Entered(), "the first load to start")
		testenv.WaitUntil(t, "all callers missed", func() bool { return e.rt.Stats.Misses.Load() == n })
		l.gate.Open()
		done.Wait()
		for i, err := range errs {
			if !errors.Is(err, domain.ErrNotFound) {
				t.Fatalf("caller %d: err = %v, want ErrNotFound", i, err)
			}
		}
		if c := l.calls.Load(); c != 1 {
			t.Errorf("loader called %d times, want 1", c)
		}
	})

	t.Run("marker expires", func(t *testing.T) {
		t.Parallel()
		p := testPolicy
		p.NullTTL = 50 * time.Millisecond
		e := setup(t, envOpts{Policy: p})
		key := e.ks.Key("article", "missing")
		l := &loader{err: domain.ErrNotFound}

		before := time.Now()
		if _, err := e.rt.Get(t.Context(), key, l.load); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
		checkShortNullPTTL(t, e.pttl(t, key), p, before)
		testenv.WaitUntil(t, "the null marker expired", func() bool { return !e.exists(t, key) })
		if _, err := e.rt.Get(t.Context(), key, l.load); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
		if c := l.calls.Load(); c != 2 {
			t.Errorf("loader called %d times, want 2 (once per marker lifetime)", c)
		}
	})
}

func TestReadThrough_CorruptValueIsAMissAndIsOverwritten(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	key := e.ks.Key("article", "3")
	if err := e.rdb.Set(t.Context(), key, "not json", 0).Err(); err != nil {
		t.Fatal(err)
	}
	l := &loader{val: article{ID: 3, Title: "fresh"}}

	if v, err := e.rt.Get(t.Context(), key, l.load); err != nil || v != l.val {
		t.Fatalf("Get = %+v, %v; want %+v", v, err, l.val)
	}
	if c := l.calls.Load(); c != 1 {
		t.Fatalf("loader called %d times, want 1", c)
	}
	raw, err := e.rdb.Get(t.Context(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	var stored article
	if err := json.Unmarshal([]byte(raw), &stored); err != nil || stored != l.val {
		t.Fatalf("Redis holds %q (%v), want the loaded value", raw, err)
	}
	if d := e.pttl(t, key); d <= 0 || d > testPolicy.TTL+testPolicy.Jitter {
		t.Errorf("overwritten value PTTL = %v, want in (0, TTL+Jitter]", d)
	}
	if _, err := e.rt.Get(t.Context(), key, l.load); err != nil || l.calls.Load() != 1 {
		t.Errorf("second read: err %v, loads %d; want a hit", err, l.calls.Load())
	}
}

func TestReadThrough_LoaderErrorIsReturnedAndNotCached(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	key := e.ks.Key("article", "4")
	boom := errors.New("database on fire")
	l := &loader{err: boom}

	for i := range 3 {
		if _, err := e.rt.Get(t.Context(), key, l.load); !errors.Is(err, boom) {
			t.Fatalf("read %d: err = %v, want %v", i, err, boom)
		}
		if e.exists(t, key) {
			t.Fatalf("read %d: a failed load left a key in Redis", i)
		}
	}
	if c := l.calls.Load(); c != 3 {
		t.Errorf("loader called %d times, want 3 (errors are not cached)", c)
	}
}

func TestReadThrough_LoadTimeoutBoundsTheLoader(t *testing.T) {
	t.Parallel()
	p := testPolicy
	// The bound covers the flight's second Redis lookup too; under -race on a busy machine that
	// lookup alone has taken over 50 ms, leaving the loader a deadline already past.
	p.LoadTimeout = 500 * time.Millisecond
	e := setup(t, envOpts{Policy: p})
	key := e.ks.Key("article", "5")

	var sawDeadline time.Duration
	var calls int
	hang := func(ctx context.Context) (article, error) {
		calls++
		if dl, ok := ctx.Deadline(); ok {
			sawDeadline = time.Until(dl)
		}
		<-ctx.Done() // a load that would never end on its own
		return article{}, ctx.Err()
	}
	// The caller has no deadline of its own: only LoadTimeout can end this.
	if _, err := e.rt.Get(t.Context(), key, hang); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want context.DeadlineExceeded", err)
	}
	if calls != 1 || sawDeadline <= 0 || sawDeadline > p.LoadTimeout {
		t.Errorf("loader calls %d, deadline in %v; want 1 call with a deadline within %v", calls, sawDeadline, p.LoadTimeout)
	}
	if e.exists(t, key) {
		t.Error("a timed-out load was cached")
	}
}

func TestReadThrough_RedisDownServesFromLoader(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{DeadRedis: true})
	key := e.ks.Key("article", "6")
	l := &loader{val: article{ID: 6, Title: "from the database"}}

	const n = 3
	for i := range n {
		if v, err := e.rt.Get(t.Context(), key, l.load); err != nil || v != l.val {
			t.Fatalf("read %d: %+v, %v; want %+v", i, v, err, l.val)
		}
	}
	missing := &loader{err: domain.ErrNotFound}
	if _, err := e.rt.Get(t.Context(), e.ks.Key("article", "nope"), missing.load); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("missing key: err = %v, want ErrNotFound", err)
	}
	if c := l.calls.Load(); c != n {
		t.Errorf("loader called %d times, want %d (nothing can be cached)", c, n)
	}
	if f := e.rt.Stats.Fallbacks.Load(); f != n+1 {
		t.Errorf("Stats.Fallbacks = %d, want %d", f, n+1)
	}
	// Each read costs one failed GET; writing back to a Redis that just failed would double the
	// latency of every request during an outage.
	if cmds := e.cmds.commands(); len(cmds) != n+1 || slices.ContainsFunc(cmds, func(c string) bool { return c != "get" }) {
		t.Errorf("commands sent to the dead Redis: %v, want %d GETs and nothing else", cmds, n+1)
	}
	if err := e.rt.Delete(t.Context(), key); err == nil {
		t.Error("Delete on a dead Redis returned nil")
	}
}

// A caller that has already given up is not a Redis failure: it gets its context error, and
// nothing is loaded on its behalf.
func TestReadThrough_CancelledCallerIsNotAFallback(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	l := &loader{val: article{ID: 8}}
	if _, err := e.rt.Get(ctx, e.ks.Key("article", "8"), l.load); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if f := e.rt.Stats.Fallbacks.Load(); f != 0 {
		t.Errorf("Stats.Fallbacks = %d, want 0", f)
	}
	if c := l.calls.Load(); c != 0 {
		t.Errorf("loader called %d times for a caller that had gone", c)
	}
}

func TestReadThrough_Delete(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	k1, k2 := e.ks.Key("article", "7"), e.ks.Key("article", "8")
	l := &loader{val: article{ID: 7}}
	for _, k := range []string{k1, k2} {
		if _, err := e.rt.Get(t.Context(), k, l.load); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.rt.Delete(t.Context(), k1, k2); err != nil {
		t.Fatal(err)
	}
	if e.holdsEntry(t, k1) || e.holdsEntry(t, k2) {
		t.Fatal("keys survived Delete")
	}
	if err := e.rt.Delete(t.Context()); err != nil {
		t.Fatalf("Delete with no keys: %v", err)
	}
	if _, err := e.rt.Get(t.Context(), k1, l.load); err != nil || l.calls.Load() != 3 {
		t.Errorf("read after Delete: err %v, loads %d; want a fresh load", err, l.calls.Load())
	}
}

// The caches of several test packages share one Redis; a Keyspace keeps their keys apart.
func TestKeyspace(t *testing.T) {
	t.Parallel()
	if got := cache.Keyspace("p:").Key("user", "id", "42"); got != "p:user:id:42" {
		t.Fatalf("Key = %q", got)
	}
	if got := cache.Keyspace("").Key("a"); got != "a" {
		t.Fatalf("Key = %q", got)
	}
}

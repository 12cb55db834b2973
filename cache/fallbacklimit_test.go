package cache_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// heldLoader is a loader that reports each load as it starts and holds it until released,
// measuring how many run at once.
type heldLoader struct {
	entered      chan string // the key of each load, as it starts
	release      chan struct{}
	once         sync.Once
	running, max atomic.Int64
	calls        atomic.Int64
}

func newHeldLoader(t *testing.T) *heldLoader {
	l := &heldLoader{entered: make(chan string, 100), release: make(chan struct{})}
	t.Cleanup(l.open) // never leave a load parked on a failed test
	return l
}

func (l *heldLoader) open() { l.once.Do(func() { close(l.release) }) }

func (l *heldLoader) load(key string) func(context.Context) (article, error) {
	return func(ctx context.Context) (article, error) {
		l.calls.Add(1)
		n := l.running.Add(1)
		defer l.running.Add(-1)
		for m := l.max.Load(); n > m && !l.max.CompareAndSwap(m, n); m = l.max.Load() {
		}
		l.entered <- key
		select {
		case <-l.release:
			return article{Title: key}, nil
		case <-ctx.Done():
			return article{}, ctx.Err()
		}
	}
}

// With Redis down, at most the limit's loads run at once; the reads beyond it wait their turn
// and then fail with domain.ErrOverloaded (503).
func TestFallbackLimit_BoundsConcurrentLoadsWhileRedisIsDown(t *testing.T) {
	t.Parallel()
	const limit, excess = 3, 5
	fl := cache.NewFallbackLimit(limit, 20*time.Millisecond)
	p := testPolicy
	p.Fallback = fl
	e := setup(t, envOpts{DeadRedis: true, Policy: p})
	l := newHeldLoader(t)

	var held sync.WaitGroup
	heldErrs := make([]error, limit)
	for i := range limit {
		key := e.ks.Key("article", fmt.Sprint(i))
		held.Go(func() { _, heldErrs[i] = e.rt.Get(t.Context(), key, l.load(key)) })
	}
	for range limit {
		testenv.Recv(t, l.entered, "a fallback load to start")
	}
	// Every slot is taken: the next reads of other keys wait, then are refused.
	var refused sync.WaitGroup
	refusedErrs := make([]error, excess)
	for i := range excess {
		key := e.ks.Key("article", fmt.Sprint(limit+i))
		refused.Go(func() { _, refusedErrs[i] = e.rt.Get(t.Context(), key, l.load(key)) })
	}
	refused.Wait()
	for i, err := range refusedErrs {
		if !errors.Is(err, domain.ErrOverloaded) || !errors.Is(err, domain.ErrUnavailable) {
			t.Errorf("read %d beyond the limit: err = %v, want domain.ErrOverloaded", i, err)
		}
	}
	l.open()
	held.Wait()
	for i, err := range heldErrs {
		if err != nil {
			t.Errorf("read %d within the limit: %v", i, err)
		}
	}
	if got := l.max.Load(); got != limit {
		t.Errorf("at most %d fallback loads ran at once, want %d", got, limit)
	}
	if got := l.calls.Load(); got != limit {
		t.Errorf("the loader ran %d times, want %d (refused reads load nothing)", got, limit)
	}
	if got := fl.Refused.Load(); got != excess {
		t.Errorf("Refused = %d, want %d", got, excess)
	}
	if fl.InUse.Load() != 0 || fl.Waiting.Load() != 0 {
		t.Errorf("after the reads: %d slots in use, %d waiting; want none", fl.InUse.Load(), fl.Waiting.Load())
	}
}

// A read that waits for a slot gets the one a finished load gives back, within its wait.
func TestFallbackLimit_WaiterGetsTheFreedSlot(t *testing.T) {
	t.Parallel()
	fl := cache.NewFallbackLimit(1, time.Minute)
	p := testPolicy
	p.Fallback = fl
	e := setup(t, envOpts{DeadRedis: true, Policy: p})
	l := newHeldLoader(t)
	first, second := e.ks.Key("article", "1"), e.ks.Key("article", "2")
	done := make(chan error, 2)
	go func() { _, err := e.rt.Get(t.Context(), first, l.load(first)); done <- err }()
	testenv.Recv(t, l.entered, "the first load to start")
	go func() { _, err := e.rt.Get(t.Context(), second, l.load(second)); done <- err }()
	testenv.WaitUntil(t, "the second read waits for the slot", func() bool { return fl.Waiting.Load() == 1 })
	l.open()
	for range 2 {
		if err := testenv.Recv(t, done, "a read"); err != nil {
			t.Fatalf("read: %v", err)
		}
	}
	if l.max.Load() != 1 || fl.Refused.Load() != 0 {
		t.Fatalf("%d loads at once, %d refused; want 1 and 0", l.max.Load(), fl.Refused.Load())
	}
}

// With Redis up, misses load from PostgreSQL without any bound: the limit is for fallbacks only.
func TestFallbackLimit_NoLimitWhileRedisAnswers(t *testing.T) {
	t.Parallel()
	const n = 6
	fl := cache.NewFallbackLimit(1, 0)
	p := testPolicy
	p.Fallback = fl
	e := setup(t, envOpts{Policy: p})
	l := newHeldLoader(t)
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		key := e.ks.Key("article", fmt.Sprint(i))
		wg.Go(func() { _, errs[i] = e.rt.Get(t.Context(), key, l.load(key)) })
	}
	for range n { // all of them load at once, with one slot
		testenv.Recv(t, l.entered, "a miss to load")
	}
	l.open()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("miss %d: %v", i, err)
		}
	}
	if l.max.Load() != n || fl.Refused.Load() != 0 || fl.InUse.Load() != 0 {
		t.Fatalf("%d loads at once, %d refused, %d slots taken; want %d, 0, 0", l.max.Load(), fl.Refused.Load(), fl.InUse.Load(), n)
	}
}

// With Redis down, identical misses still collapse into one load, which takes one slot: with a
// single slot and no wait none is refused (a flight gives its slot back before it ends, so a
// caller that comes too late to join it finds the slot free).
func TestFallbackLimit_IdenticalMissesShareOneSlot(t *testing.T) {
	t.Parallel()
	const n = 50
	fl := cache.NewFallbackLimit(1, 0)
	p := testPolicy
	p.Fallback = fl
	e := setup(t, envOpts{DeadRedis: true, Policy: p})
	l := newHeldLoader(t)
	key := e.ks.Key("article", "hot")
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { _, errs[i] = e.rt.Get(t.Context(), key, l.load(key)) })
	}
	testenv.Recv(t, l.entered, "the load to start")
	testenv.WaitUntil(t, "every caller joined the load", func() bool { return e.rt.Stats.Fallbacks.Load() == n })
	l.open()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("caller %d: %v", i, err)
		}
	}
	if fl.Refused.Load() != 0 || l.max.Load() != 1 {
		t.Fatalf("%d refused, %d loads at once; want 0 and 1", fl.Refused.Load(), l.max.Load())
	}
}

// The cost the limit adds to a fallback load when a slot is free (a channel send and receive and
// two atomics; the healthy path, Redis up, never reaches it).
func BenchmarkFallbackLimitFreeSlot(b *testing.B) {
	fl := cache.NewFallbackLimit(64, 100*time.Millisecond)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			release, err := fl.Acquire(ctx)
			if err != nil {
				b.Fatal(err)
			}
			release()
		}
	})
}

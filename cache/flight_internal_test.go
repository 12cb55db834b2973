package cache

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// heldLoads is a flight load that records the batches it was asked for and holds each until
// released; entered receives a batch when its load starts.
type heldLoads struct {
	mu      sync.Mutex
	batches [][]string
	entered chan []string
	release chan struct{}
	once    sync.Once
}

func newHeldLoads(t *testing.T) *heldLoads {
	h := &heldLoads{entered: make(chan []string, 100), release: make(chan struct{})}
	t.Cleanup(h.open)
	return h
}

func (h *heldLoads) open() { h.once.Do(func() { close(h.release) }) }

func (h *heldLoads) load(keys []string) (map[string]entry[string], error) {
	h.mu.Lock()
	h.batches = append(h.batches, slices.Clone(keys))
	h.mu.Unlock()
	h.entered <- slices.Clone(keys)
	<-h.release
	out := make(map[string]entry[string], len(keys))
	for _, k := range keys {
		out[k] = entry[string]{v: "v:" + k}
	}
	return out, nil
}

func (h *heldLoads) seen() [][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.batches)
}

// collect waits for the flights and gathers the entries each caller wanted.
func collect[V any](waits []wait[V]) (map[string]entry[V], error) {
	out := map[string]entry[V]{}
	for _, w := range waits {
		select {
		case <-w.f.done:
		case <-time.After(20 * time.Second):
			return nil, errors.New("gave up waiting for a flight")
		}
		if w.f.err != nil {
			return nil, w.f.err
		}
		for _, k := range w.keys {
			out[k] = w.f.vals[k]
		}
	}
	return out, nil
}

func waitFlights[V any](t *testing.T, waits []wait[V]) map[string]entry[V] {
	t.Helper()
	out, err := collect(waits)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// 1,000 callers of one key while its load runs: one load, every caller gets its value.
func TestFlights_OneLoadPerKeyAtATime(t *testing.T) {
	t.Parallel()
	var g flights[string]
	h := newHeldLoads(t)
	first := g.do([]string{"k"}, h.load)
	<-h.entered
	const n = 1000
	var registered, wg sync.WaitGroup
	var wrong atomic.Int64
	start := make(chan struct{})
	registered.Add(n)
	for range n {
		wg.Go(func() {
			<-start
			waits := g.do([]string{"k"}, h.load) // does not block: the waiting is below
			registered.Done()
			if got, err := collect(waits); err != nil || got["k"].v != "v:k" {
				wrong.Add(1)
			}
		})
	}
	close(start)
	registered.Wait() // all 1,000 asked while the load was held
	h.open()
	wg.Wait()
	waitFlights(t, first)
	if b := h.seen(); len(b) != 1 {
		t.Fatalf("loads %v, want exactly one", b)
	}
	if w := wrong.Load(); w != 0 {
		t.Fatalf("%d callers got a wrong value", w)
	}
	// Done: the key is no longer in flight, the next caller loads again.
	if got := waitFlightsAfterOpen(t, &g, h, []string{"k"}); got["k"].v != "v:k" {
		t.Fatalf("later load: %v", got)
	}
	if b := h.seen(); len(b) != 2 {
		t.Fatalf("loads %v, want a second one after the first ended", b)
	}
}

func waitFlightsAfterOpen(t *testing.T, g *flights[string], h *heldLoads, keys []string) map[string]entry[string] {
	t.Helper()
	return waitFlights(t, g.do(keys, h.load))
}

// Overlapping batches: a batch joins the keys already in flight and loads only the others, in one
// load; no key is loaded twice.
func TestFlights_OverlappingBatchesLoadEachKeyOnce(t *testing.T) {
	t.Parallel()
	var g flights[string]
	h := newHeldLoads(t)
	keys := func(from, to int) []string {
		var out []string
		for i := from; i <= to; i++ {
			out = append(out, fmt.Sprint(i))
		}
		return out
	}
	a := g.do(keys(1, 20), h.load)
	if got := <-h.entered; !slices.Equal(got, keys(1, 20)) {
		t.Fatalf("first batch loaded %v", got)
	}
	b := g.do(keys(11, 30), h.load)
	if len(b) != 2 || !b[0].joined || !slices.Equal(b[0].keys, keys(11, 20)) || b[1].joined || !slices.Equal(b[1].keys, keys(21, 30)) {
		t.Fatalf("second batch waits on %+v; want to join 11-20 and load 21-30", b)
	}
	if got := <-h.entered; !slices.Equal(got, keys(21, 30)) {
		t.Fatalf("second batch loaded %v, want 21-30 only", got)
	}
	// A third batch inside both.
	c := g.do(keys(15, 25), h.load)
	if len(c) != 2 || !c[0].joined || !c[1].joined {
		t.Fatalf("third batch waits on %+v; want to join both flights", c)
	}
	h.open()
	for _, w := range [][]wait[string]{a, b, c} {
		for k, e := range waitFlights(t, w) {
			if e.v != "v:"+k {
				t.Fatalf("key %s: %q", k, e.v)
			}
		}
	}
	if got := waitFlights(t, b); len(got) != 20 {
		t.Fatalf("second batch got %d keys, want 20", len(got))
	}
	loaded := map[string]int{}
	for _, batch := range h.seen() {
		for _, k := range batch {
			loaded[k]++
		}
	}
	for k, n := range loaded {
		if n != 1 {
			t.Errorf("key %s loaded %d times", k, n)
		}
	}
	if len(loaded) != 30 || len(h.seen()) != 2 {
		t.Errorf("loads %v; want 2 loads covering 30 keys", h.seen())
	}
}

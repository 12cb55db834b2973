package repository_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// Acceptance (regression: misses of an expired counter hash bypassed singleflight, and 100
// concurrent readers cost 16, 2 and 100 PostgreSQL loads in three runs): 1,000 concurrent readers
// of an article whose counter hash is missing cost exactly one load.
func TestInteractiveRepository_ConcurrentMissesLoadOnce(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	for _, held := range []bool{true, false} {
		name := "load held until every reader missed"
		if !held {
			name = "load not held"
		}
		t.Run(name, func(t *testing.T) {
			e := setup(t, db, envOpts{})
			a := createArticle(t, e, articleOpts{})
			e.like(t, a.ID, createUser(t, e.users, userOpts{}).ID)
			e.dropCounters(t, a.ID) // the like stored its row: start from a miss
			if held {
				e.q.counterGate = testenv.NewGate(t)
			}
			const n = 1000
			got := make([]map[int64]domain.Counters, n)
			errs := make([]error, n)
			done := make(chan struct{})
			go func() {
				defer close(done)
				testenv.Together(n, func(i int) { got[i], errs[i] = e.inter.Counters(t.Context(), domain.BizArticle, []int64{a.ID}) })
			}()
			if held {
				testenv.Recv(t, e.q.counterGate.Entered(), "the first counter load")
				// Every reader has missed the hash and is waiting behind the held load.
				testenv.WaitUntil(t, "all readers missed", func() bool { return e.counters.Stats.Misses.Load() == n })
				e.q.counterGate.Open()
			}
			testenv.Recv(t, done, "the readers")
			for i := range n {
				if errs[i] != nil || got[i][a.ID] != (domain.Counters{Likes: 1}) {
					t.Fatalf("reader %d: %v, %v; want likes 1", i, got[i], errs[i])
				}
			}
			loads := e.q.counterLoads.Load()
			t.Logf("%d concurrent readers, %d missed: %d PostgreSQL load(s)", n, e.counters.Stats.Misses.Load(), loads)
			if loads != 1 {
				t.Fatalf("%d PostgreSQL loads for %d concurrent readers of a missing hash, want exactly 1", loads, n)
			}
			if n, ok := e.redisLikes(t, a.ID); !ok || n != 1 {
				t.Errorf("hash after the load: like_cnt %d, present %v", n, ok)
			}
		})
	}
}

// Acceptance: list pages asking for overlapping batches of counters at once load each article in
// one query only: a batch joins the ids another is loading and loads the rest in one query.
func TestInteractiveRepository_OverlappingBatchesLoadEachIDOnce(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{})
	author := createUser(t, e.users, userOpts{})
	arts := make([]int64, 35)
	for i := range arts {
		arts[i] = createArticle(t, e, articleOpts{Author: author}).ID
	}
	liker := createUser(t, e.users, userOpts{})
	for _, id := range arts[:10] {
		e.like(t, id, liker.ID)
	}
	e.dropCounters(t, arts[:10]...) // the likes stored their rows: every batch starts from misses
	e.q.counterGate = testenv.NewGate(t)
	batches := [][]int64{arts[0:20], arts[10:30], arts[5:35]} // pages of 20, 20 and 30 that overlap
	type result struct {
		got map[int64]domain.Counters
		err error
	}
	results := make([]chan result, len(batches))
	for i, ids := range batches {
		results[i] = make(chan result, 1)
		go func() {
			got, err := e.inter.Counters(t.Context(), domain.BizArticle, ids)
			results[i] <- result{got, err}
		}()
		// Each batch's load is under way before the next batch asks.
		testenv.WaitUntil(t, fmt.Sprintf("batch %d loads", i), func() bool { return e.q.counterLoads.Load() == int64(i+1) })
	}
	e.q.counterGate.Open()
	for i, ids := range batches {
		r := testenv.Recv(t, results[i], "a batch")
		if r.err != nil {
			t.Fatalf("batch %d: %v", i, r.err)
		}
		want := make(map[int64]domain.Counters, len(ids))
		for _, id := range ids {
			want[id] = domain.Counters{}
			if slices.Contains(arts[:10], id) {
				want[id] = domain.Counters{Likes: 1}
			}
		}
		if !maps.Equal(r.got, want) {
			t.Fatalf("batch %d: %v, want %v", i, r.got, want)
		}
	}
	loads := e.q.counterBatches()
	want := [][]int64{arts[0:20], arts[20:30], arts[30:35]}
	if len(loads) != len(want) {
		t.Fatalf("%d counter queries %v, want %d: %v", len(loads), loads, len(want), want)
	}
	seen := map[int64]int{}
	for i, ids := range loads {
		if !slices.Equal(ids, want[i]) {
			t.Errorf("query %d loaded %v, want %v (the ids nobody else was loading)", i, ids, want[i])
		}
		for _, id := range ids {
			seen[id]++
		}
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("article %d loaded %d times", id, n)
		}
	}
}

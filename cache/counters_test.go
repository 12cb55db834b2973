package cache_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

func newCounters(t *testing.T, o envOpts) (*env, *cache.Counters) {
	t.Helper()
	e := setup(t, o)
	if o.Policy == (cache.Policy{}) {
		o.Policy = testPolicy
	}
	return e, cache.NewCounters(e.client, e.ks, o.Policy, testenv.Logger(t))
}

// hash returns the counts an item's hash holds, the sums over its shards (the shards' own fields,
// s<shard>, and the bookkeeping, _ver and _s, left out): empty when it holds none.
func (e *env) hash(t *testing.T, cc *cache.Counters, id int64) map[string]string {
	t.Helper()
	h := e.rawHash(t, cc, id)
	if h["_ver"] == "" {
		return map[string]string{}
	}
	maps.DeleteFunc(h, func(k, _ string) bool { return strings.HasPrefix(k, "_") || strings.HasPrefix(k, "s") })
	return h
}

// rawHash returns every field of an item's hash.
func (e *env) rawHash(t *testing.T, cc *cache.Counters, id int64) map[string]string {
	t.Helper()
	h, err := e.rdb.HGetAll(context.Background(), cc.Key(domain.BizArticle, id)).Result()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// hasCounts reports whether an item's hash holds counts (a hash of bookkeeping alone reads as a
// miss).
func (e *env) hasCounts(t *testing.T, cc *cache.Counters, id int64) bool {
	t.Helper()
	return len(e.hash(t, cc, id)) > 0
}

func counterFields(c domain.Counters) map[string]string {
	return map[string]string{
		cache.FieldReads:    strconv.FormatInt(c.Reads, 10),
		cache.FieldLikes:    strconv.FormatInt(c.Likes, 10),
		cache.FieldCollects: strconv.FormatInt(c.Collects, 10),
	}
}

// fakeTx is a unit of work whose end the test decides.
type fakeTx struct {
	mu        sync.Mutex
	onCommit  []func(context.Context)
	onUnknown []func(context.Context)
	finally   []func()
}

func (f *fakeTx) AfterCommit(fn func(context.Context)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.onCommit = append(f.onCommit, fn)
}

func (f *fakeTx) IfCommitUnknown(fn func(context.Context)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.onUnknown = append(f.onUnknown, fn)
}

func (f *fakeTx) Finally(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.finally = append(f.finally, fn)
}

type txEnd int

const (
	txCommitted txEnd = iota
	txRolledBack
	txUnknown
)

func (f *fakeTx) end(how txEnd) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch how {
	case txCommitted:
		for _, fn := range f.onCommit {
			fn(context.Background())
		}
	case txUnknown:
		for _, fn := range f.onUnknown {
			fn(context.Background())
		}
	}
	for _, fn := range f.finally {
		fn()
	}
}

// change makes one committed change of field of id by delta in p (the fake PostgreSQL) and hands
// the row it left to cc, as a repository's unit of work does.
func change(cc *cache.Counters, p *truth, id int64, field string, delta int64) {
	tx := &fakeTx{}
	cc.Changed(tx, domain.BizArticle, map[int64]cache.CounterRow{id: p.apply(id, field, delta)})
	tx.end(txCommitted)
}

// truth is a fake PostgreSQL: the counter rows a loader returns (each change moves a row's
// version, as the interactives table does), and the loads it served.
type truth struct {
	mu       sync.Mutex
	counts   map[int64]domain.Counters
	versions map[int64]int64
	loads    [][]int64
	gate     *testenv.Gate // nil: answer at once; else hold every load (after reading the rows) until open
	err      error
}

func newTruth(counts map[int64]domain.Counters) *truth {
	return &truth{counts: maps.Clone(counts), versions: map[int64]int64{}}
}

// set replaces id's counts, as a change would.
func (p *truth) set(id int64, c domain.Counters) cache.CounterRow {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts[id] = c
	p.versions[id]++
	return cache.CounterRow{Counters: c, Version: p.versions[id]}
}

// apply moves field of id by delta and returns the row it leaves.
func (p *truth) apply(id int64, field string, delta int64) cache.CounterRow {
	p.mu.Lock()
	c := p.counts[id]
	p.mu.Unlock()
	switch field {
	case cache.FieldReads:
		c.Reads += delta
	case cache.FieldLikes:
		c.Likes += delta
	default:
		c.Collects += delta
	}
	return p.set(id, c)
}

func (p *truth) load(ctx context.Context, ids []int64) (map[int64][]cache.CounterRow, error) {
	p.mu.Lock()
	p.loads = append(p.loads, slices.Clone(ids))
	out := make(map[int64][]cache.CounterRow)
	for _, id := range ids {
		if c, ok := p.counts[id]; ok {
			out[id] = []cache.CounterRow{{Counters: c, Version: p.versions[id]}}
		}
	}
	err := p.err
	p.mu.Unlock()
	if p.gate != nil {
		if err := p.gate.Wait(ctx); err != nil {
			return nil, err
		}
	}
	return out, err
}

func (p *truth) seen() [][]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.loads)
}

func read(t *testing.T, cc *cache.Counters, p *truth, ids ...int64) map[int64]domain.Counters {
	t.Helper()
	got, err := cc.Read(t.Context(), domain.BizArticle, ids, p.load)
	if err != nil {
		t.Fatalf("Read(%v): %v", ids, err)
	}
	return got
}

// Acceptance: a committed change stores the shard row it left; into a complete hash, so the next
// read is a hit; rows arriving out of order never take the hash back.
func TestCounters_ChangesStoreTheirRows(t *testing.T) {
	t.Parallel()
	noLoad := &truth{err: errors.New("a hit was expected, not a load")}

	t.Run("missing hash: the change's row is kept, the next read loads the other shards", func(t *testing.T) {
		t.Parallel()
		e, cc := newCounters(t, envOpts{})
		p := newTruth(map[int64]domain.Counters{1: {Reads: 5}})
		change(cc, p, 1, cache.FieldLikes, 1)
		if d := e.pttl(t, cc.Key(domain.BizArticle, 1)); d <= 0 {
			t.Errorf("PTTL %v: the hash has no expiry", d)
		}
		if got := read(t, cc, p, 1); got[1] != (domain.Counters{Reads: 5, Likes: 1}) || len(p.seen()) != 1 {
			t.Fatalf("read after the change: %+v after %d loads, want one load", got[1], len(p.seen()))
		}
		if got := read(t, cc, noLoad, 1); got[1] != (domain.Counters{Reads: 5, Likes: 1}) {
			t.Fatalf("second read: %+v", got[1])
		}
	})

	t.Run("shards of one item: each stored by its own version, reads get the sums", func(t *testing.T) {
		t.Parallel()
		e, cc := newCounters(t, envOpts{})
		shards := []cache.CounterRow{{Shard: 0, Version: 3, Counters: domain.Counters{Reads: 7, Likes: 2}}, {Shard: 5, Version: 1, Counters: domain.Counters{Likes: -1}}}
		load := func(context.Context, []int64) (map[int64][]cache.CounterRow, error) {
			return map[int64][]cache.CounterRow{1: shards}, nil
		}
		if got, err := cc.Read(t.Context(), domain.BizArticle, []int64{1}, load); err != nil || got[1] != (domain.Counters{Reads: 7, Likes: 1}) {
			t.Fatalf("Read = %+v, %v", got, err)
		}
		for _, row := range []cache.CounterRow{
			{Shard: 5, Version: 3, Counters: domain.Counters{Likes: 1}},  // newer: stored
			{Shard: 5, Version: 2, Counters: domain.Counters{Likes: 9}},  // older: dropped
			{Shard: 9, Version: 1, Counters: domain.Counters{Likes: 1}},  // a shard new to the hash
			{Shard: 0, Version: 3, Counters: domain.Counters{Likes: 50}}, // same version: dropped
		} {
			tx := &fakeTx{}
			cc.Changed(tx, domain.BizArticle, map[int64]cache.CounterRow{1: row})
			tx.end(txCommitted)
		}
		if h := e.hash(t, cc, 1); !maps.Equal(h, counterFields(domain.Counters{Reads: 7, Likes: 4})) {
			t.Fatalf("hash %v, want reads 7, likes 2+1+1", h)
		}
		if got := read(t, cc, noLoad, 1); got[1] != (domain.Counters{Reads: 7, Likes: 4}) {
			t.Fatalf("read: %+v", got[1])
		}
	})

	t.Run("existing hash: each change's row replaces it", func(t *testing.T) {
		t.Parallel()
		e, cc := newCounters(t, envOpts{})
		p := newTruth(map[int64]domain.Counters{7: {Reads: 10, Likes: 20, Collects: 30}})
		read(t, cc, p, 7) // filled
		for _, step := range []struct {
			field string
			delta int64
			want  domain.Counters
		}{
			{cache.FieldLikes, 5, domain.Counters{Reads: 10, Likes: 25, Collects: 30}},
			{cache.FieldLikes, -1, domain.Counters{Reads: 10, Likes: 24, Collects: 30}},
			{cache.FieldReads, 1, domain.Counters{Reads: 11, Likes: 24, Collects: 30}},
			{cache.FieldCollects, 3, domain.Counters{Reads: 11, Likes: 24, Collects: 33}},
		} {
			change(cc, p, 7, step.field, step.delta)
			if h := e.hash(t, cc, 7); !maps.Equal(h, counterFields(step.want)) {
				t.Fatalf("after %s %+d: hash %v, want %v", step.field, step.delta, h, counterFields(step.want))
			}
		}
		if n := len(p.seen()); n != 1 {
			t.Errorf("%d loads, want the first read's only", n)
		}
	})

	t.Run("100 concurrent changes, rows stored in any order: the newest wins", func(t *testing.T) {
		t.Parallel()
		e, cc := newCounters(t, envOpts{})
		p := newTruth(map[int64]domain.Counters{1: {}})
		read(t, cc, p, 1) // filled
		const n = 100
		rows := make([]cache.CounterRow, n)
		for i := range n {
			rows[i] = p.apply(1, cache.FieldLikes, 1) // the commits, in order
		}
		testenv.Together(n, func(i int) { // their post-commit writes, racing
			tx := &fakeTx{}
			cc.Changed(tx, domain.BizArticle, map[int64]cache.CounterRow{1: rows[n-1-i]})
			tx.end(txCommitted)
		})
		if h := e.hash(t, cc, 1); h[cache.FieldLikes] != strconv.Itoa(n) {
			t.Fatalf("like_cnt = %s, want %d", h[cache.FieldLikes], n)
		}
	})

	t.Run("an older row never replaces a newer one", func(t *testing.T) {
		t.Parallel()
		e, cc := newCounters(t, envOpts{})
		p := newTruth(map[int64]domain.Counters{1: {}})
		read(t, cc, p, 1) // filled
		older, newer := p.apply(1, cache.FieldLikes, 1), p.apply(1, cache.FieldLikes, 1)
		for _, row := range []cache.CounterRow{newer, older} {
			tx := &fakeTx{}
			cc.Changed(tx, domain.BizArticle, map[int64]cache.CounterRow{1: row})
			tx.end(txCommitted)
		}
		if h := e.hash(t, cc, 1); h[cache.FieldLikes] != "2" {
			t.Fatalf("hash %v after the newer row then the older: want like_cnt 2", h)
		}
	})

	t.Run("a rolled back change touches nothing", func(t *testing.T) {
		t.Parallel()
		e, cc := newCounters(t, envOpts{})
		if err := cc.Fill(t.Context(), domain.BizArticle, map[int64]domain.Counters{1: {Likes: 3}}); err != nil {
			t.Fatal(err)
		}
		tx := &fakeTx{}
		cc.Changed(tx, domain.BizArticle, map[int64]cache.CounterRow{1: {Counters: domain.Counters{Likes: 4}, Version: 1}})
		tx.end(txRolledBack)
		if h := e.hash(t, cc, 1); !maps.Equal(h, counterFields(domain.Counters{Likes: 3})) {
			t.Fatalf("hash after a rollback: %v", h)
		}
	})
}

// Acceptance: Read serves hashes from Redis in one round trip and loads only the missing ones, in
// one load, in the order asked; what it loaded (zeros for ids the loader did not return) is cached.
func TestCounters_ReadLoadsOnlyTheMissing(t *testing.T) {
	t.Parallel()
	e, cc := newCounters(t, envOpts{})
	stored := map[int64]domain.Counters{1: {Reads: 1, Likes: 2, Collects: 3}, 3: {}, 5: {Likes: 9}}
	if err := cc.Fill(t.Context(), domain.BizArticle, stored); err != nil {
		t.Fatal(err)
	}
	p := newTruth(map[int64]domain.Counters{1: {Likes: 100}, 2: {Likes: 8}})
	got := read(t, cc, p, 1, 2, 3, 4, 5, 6, 2)
	want := map[int64]domain.Counters{1: {Reads: 1, Likes: 2, Collects: 3}, 2: {Likes: 8}, 3: {}, 4: {}, 5: {Likes: 9}, 6: {}}
	if !maps.Equal(got, want) {
		t.Errorf("Read = %v, want %v (a hash of zeros counts as found)", got, want)
	}
	if loads := p.seen(); len(loads) != 1 || !slices.Equal(loads[0], []int64{2, 4, 6}) {
		t.Errorf("loads %v, want one of [2 4 6] in the order asked", loads)
	}
	if again := read(t, cc, p, 2, 4, 6); !maps.Equal(again, map[int64]domain.Counters{2: {Likes: 8}, 4: {}, 6: {}}) || len(p.seen()) != 1 {
		t.Errorf("second Read = %v after %d loads; want the cached values and no load", again, len(p.seen()))
	}
	if h := e.hash(t, cc, 4); !maps.Equal(h, counterFields(domain.Counters{})) {
		t.Errorf("an id the loader did not return is cached as %v, want zeros", h)
	}
	if got := read(t, cc, p); len(got) != 0 || len(p.seen()) != 1 {
		t.Errorf("Read of no ids = %v with %d loads", got, len(p.seen()))
	}
	// Another kind of item with the same id has a hash of its own.
	if _, err := cc.Read(t.Context(), domain.Biz("comment"), []int64{1}, p.load); err != nil || len(p.seen()) != 2 {
		t.Errorf("Read of another biz: %v, %d loads; want a load", err, len(p.seen()))
	}
	// A loader's error is the reader's, and nothing is cached.
	boom := errors.New("database on fire")
	failing := &truth{counts: map[int64]domain.Counters{}, err: boom}
	if _, err := cc.Read(t.Context(), domain.BizArticle, []int64{40}, failing.load); !errors.Is(err, boom) {
		t.Errorf("Read with a failing loader: %v, want %v", err, boom)
	}
	if e.hasCounts(t, cc, 40) {
		t.Error("a failed load was cached")
	}
}

// Acceptance: Fill, and the write-back of Read, write every field of every hash, each with an
// expiry in [TTL, TTL+Jitter], spread so hashes filled together do not expire together.
func TestCounters_FillSetsEveryFieldAndTTL(t *testing.T) {
	t.Parallel()
	p := testPolicy
	e, cc := newCounters(t, envOpts{Policy: p})
	const n = 50
	want := make(map[int64]domain.Counters, n)
	loaded := make(map[int64]domain.Counters, n)
	for i := range int64(n) {
		want[100+i] = domain.Counters{Reads: i, Likes: 2 * i, Collects: 3 * i}
		loaded[200+i] = domain.Counters{Reads: 4 * i, Likes: 5 * i, Collects: 6 * i}
	}
	start := time.Now()
	if err := cc.Fill(t.Context(), domain.BizArticle, want); err != nil {
		t.Fatal(err)
	}
	read(t, cc, newTruth(loaded), slices.Collect(maps.Keys(loaded))...)
	for _, set := range []map[int64]domain.Counters{want, loaded} {
		ttls := make([]time.Duration, 0, n)
		for id, c := range set {
			if h := e.hash(t, cc, id); !maps.Equal(h, counterFields(c)) {
				t.Fatalf("hash of %d = %v, want %v", id, h, counterFields(c))
			}
			ttls = append(ttls, e.pttl(t, cc.Key(domain.BizArticle, id)))
		}
		checkSpread(t, ttls, p.TTL-time.Since(start)-time.Millisecond, p.TTL+p.Jitter, p.Jitter/4)
	}

	// Filling again overwrites the values.
	if err := cc.Fill(t.Context(), domain.BizArticle, map[int64]domain.Counters{100: {Likes: 77}}); err != nil {
		t.Fatal(err)
	}
	if h := e.hash(t, cc, 100); !maps.Equal(h, counterFields(domain.Counters{Likes: 77})) {
		t.Errorf("refilled hash = %v", h)
	}
	if err := cc.Fill(t.Context(), domain.BizArticle, nil); err != nil {
		t.Errorf("Fill of nothing: %v", err)
	}
}

// With Redis down every read is served by the loader, changes do not fail, and Fill reports the
// failure.
func TestCounters_RedisDown(t *testing.T) {
	t.Parallel()
	dead := testenv.DeadRedis(t)
	sent := &allCommands{}
	dead.AddHook(sent)
	cc := cache.NewCounters(dead, cache.Keyspace("dead:"), testPolicy, testenv.Logger(t))
	p := newTruth(map[int64]domain.Counters{1: {Likes: 4}})
	for range 2 {
		if got := read(t, cc, p, 1, 2); !maps.Equal(got, map[int64]domain.Counters{1: {Likes: 4}, 2: {}}) {
			t.Fatalf("Read = %v", got)
		}
	}
	if n := len(p.seen()); n != 2 {
		t.Errorf("%d loads, want 2 (every read)", n)
	}
	if f := cc.Stats.Fallbacks.Load(); f != 4 {
		t.Errorf("Stats.Fallbacks = %d, want 4 (two ids, twice)", f)
	}
	// Reading a dead Redis costs one pipeline of HMGETs per read, and no write-back.
	if cmds := sent.names(); len(cmds) != 4 || slices.ContainsFunc(cmds, func(c string) bool { return c != "hmget" }) {
		t.Errorf("commands sent to the dead Redis: %v, want 4 HMGETs and nothing else", cmds)
	}
	change(cc, p, 1, cache.FieldLikes, 1) // logged, not failed
	if err := cc.Fill(t.Context(), domain.BizArticle, map[int64]domain.Counters{1: {}}); err == nil {
		t.Error("Fill: nil error")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := cc.Read(ctx, domain.BizArticle, []int64{1}, p.load); !errors.Is(err, context.Canceled) || len(p.seen()) != 2 {
		t.Errorf("Read by a caller that gave up: %v after %d loads; want context.Canceled and no load", err, len(p.seen()))
	}
}

// Acceptance: 1,000 readers that miss the same hash at once cost one load.
func TestCounters_ConcurrentMissesShareOneLoad(t *testing.T) {
	t.Parallel()
	e, cc := newCounters(t, envOpts{})
	p := newTruth(map[int64]domain.Counters{7: {Likes: 3}})
	p.gate = testenv.NewGate(t)
	const n = 1000
	got := make([]map[int64]domain.Counters, n)
	errs := make([]error, n)
	done := make(chan struct{})
	go func() {
		defer close(done)
		testenv.Together(n, func(i int) { got[i], errs[i] = cc.Read(t.Context(), domain.BizArticle, []int64{7}, p.load) })
	}()
	testenv.Recv(t, p.gate.Entered(), "the first load")
	// Every reader has looked in Redis and missed; they are queueing behind the held load.
	testenv.WaitUntil(t, "all readers missed", func() bool { return cc.Stats.Misses.Load() == n })
	p.gate.Open()
	testenv.Recv(t, done, "the readers")
	for i := range n {
		if errs[i] != nil || got[i][7] != (domain.Counters{Likes: 3}) {
			t.Fatalf("reader %d: %v, %v", i, got[i], errs[i])
		}
	}
	if loads := p.seen(); len(loads) != 1 {
		t.Fatalf("%d loads, want 1: %v", len(loads), loads)
	}
	if h := e.hash(t, cc, 7); h[cache.FieldLikes] != "3" {
		t.Errorf("hash after the load: %v", h)
	}
	t.Logf("%d concurrent misses: %d load, %d readers shared it", n, len(p.seen()), cc.Stats.SharedLoads.Load())
}

// Acceptance: batches that overlap while they load join each other's ids and load only the rest,
// each in one load; no id is loaded twice.
func TestCounters_OverlappingBatchesLoadEachIDOnce(t *testing.T) {
	t.Parallel()
	_, cc := newCounters(t, envOpts{})
	counts := map[int64]domain.Counters{}
	for id := range int64(40) {
		counts[id] = domain.Counters{Reads: id}
	}
	p := newTruth(counts)
	p.gate = testenv.NewGate(t)
	span := func(from, to int64) []int64 {
		var out []int64
		for i := from; i <= to; i++ {
			out = append(out, i)
		}
		return out
	}
	type result struct {
		got map[int64]domain.Counters
		err error
	}
	batches := [][]int64{span(0, 19), span(10, 29), span(5, 34)}
	results := make([]chan result, len(batches))
	for i, ids := range batches {
		results[i] = make(chan result, 1)
		go func() {
			got, err := cc.Read(t.Context(), domain.BizArticle, ids, p.load)
			results[i] <- result{got, err}
		}()
		// Each batch is in flight (its load started) before the next one asks.
		testenv.WaitUntil(t, fmt.Sprintf("batch %d loads", i), func() bool { return len(p.seen()) == i+1 })
	}
	p.gate.Open()
	for i, ids := range batches {
		r := testenv.Recv(t, results[i], "a batch")
		if r.err != nil || len(r.got) != len(ids) {
			t.Fatalf("batch %d: %d counters, %v", i, len(r.got), r.err)
		}
		for _, id := range ids {
			if r.got[id] != counts[id] {
				t.Fatalf("batch %d: id %d = %+v, want %+v", i, id, r.got[id], counts[id])
			}
		}
	}
	loads := p.seen()
	want := [][]int64{span(0, 19), span(20, 29), span(30, 34)}
	if len(loads) != len(want) {
		t.Fatalf("loads %v, want %v", loads, want)
	}
	for i := range want {
		if !slices.Equal(loads[i], want[i]) {
			t.Errorf("load %d = %v, want %v (the ids nobody else was loading)", i, loads[i], want[i])
		}
	}
}

// Acceptance (issue #13): a fill that raced a change — made by this process or by another
// instance on the same Redis — can neither miss the change nor count it twice. The interleavings
// are forced with a gate on the load.
func TestCounters_RefillRacingAChange(t *testing.T) {
	t.Parallel()
	// writer returns the Counters the change is made through: this process's, or another
	// instance's (its own client, the same keyspace).
	for _, where := range []string{"this process", "another instance"} {
		writer := func(e *env, cc *cache.Counters) *cache.Counters {
			if where == "this process" {
				return cc
			}
			return cache.NewCounters(testenv.NewRedisClient(t, nil), e.ks, testPolicy, testenv.Logger(t))
		}

		t.Run(where+": the load read before the commit, its fill lands after the change's row", func(t *testing.T) {
			t.Parallel()
			e, cc := newCounters(t, envOpts{})
			w := writer(e, cc)
			p := newTruth(map[int64]domain.Counters{7: {Likes: 1}})
			p.gate = testenv.NewGate(t)
			done := make(chan map[int64]domain.Counters, 1)
			go func() {
				got, _ := cc.Read(t.Context(), domain.BizArticle, []int64{7}, p.load)
				done <- got
			}()
			testenv.Recv(t, p.gate.Entered(), "the load to have read likes=1") // before the like
			change(w, p, 7, cache.FieldLikes, 1)                               // committed, its row stored
			p.gate.Open()
			if got := testenv.Recv(t, done, "the racing read"); got[7].Likes != 1 {
				t.Fatalf("the racing read served %+v, want the likes=1 it loaded", got[7])
			}
			if h := e.hash(t, cc, 7); h[cache.FieldLikes] != "2" {
				t.Fatalf("hash %v: the fill that missed the like replaced the like's row", h)
			}
		})

		t.Run(where+": the load read after the commit, the change's row lands after the fill", func(t *testing.T) {
			t.Parallel()
			e, cc := newCounters(t, envOpts{})
			w := writer(e, cc)
			p := newTruth(map[int64]domain.Counters{7: {Likes: 1}})
			row := p.apply(7, cache.FieldLikes, 1) // committed in PostgreSQL, not yet in Redis
			tx := &fakeTx{}
			w.Changed(tx, domain.BizArticle, map[int64]cache.CounterRow{7: row})
			if got := read(t, cc, p, 7); got[7].Likes != 2 { // loads and fills likes=2
				t.Fatalf("racing read: %+v", got[7])
			}
			tx.end(txCommitted) // the change's row arrives: the same version, not stored again
			if h := e.hash(t, cc, 7); h[cache.FieldLikes] != "2" {
				t.Fatalf("hash %v: the like was counted twice", h)
			}
			if got := read(t, cc, p, 7); got[7].Likes != 2 || len(p.seen()) != 1 {
				t.Fatalf("next read: likes %d after %d loads, want 2 from the hash", got[7].Likes, len(p.seen()))
			}
		})
	}
}

// allCommands records the commands a client sends, pipelined or not.
type allCommands struct {
	mu  sync.Mutex
	cmd []string
}

func (a *allCommands) DialHook(next redis.DialHook) redis.DialHook { return next }

func (a *allCommands) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		a.mu.Lock()
		a.cmd = append(a.cmd, cmd.Name())
		a.mu.Unlock()
		return next(ctx, cmd)
	}
}

func (a *allCommands) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		a.mu.Lock()
		for _, c := range cmds {
			a.cmd = append(a.cmd, c.Name())
		}
		a.mu.Unlock()
		return next(ctx, cmds)
	}
}

func (a *allCommands) names() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.cmd)
}

// Acceptance: a hash a change may be missing from — its row's write failed, or its commit's
// outcome is unknown — is marked suspect (as soon as Redis answers): the next read reloads it from
// PostgreSQL, and serves it as it is only while PostgreSQL cannot answer.
func TestCounters_Repair(t *testing.T) {
	t.Parallel()

	t.Run("a lost write", func(t *testing.T) {
		t.Parallel()
		rds := testenv.NewRedis(t)
		outage := &testenv.RedisOutage{}
		client := testenv.NewRedisClient(t, nil)
		client.AddHook(outage)
		cc := cache.NewCounters(client, cache.Keyspace(rds.Prefix), testPolicy, testenv.Logger(t))
		p := newTruth(map[int64]domain.Counters{7: {Likes: 1}})
		read(t, cc, p, 7) // filled
		outage.On(true)
		change(cc, p, 7, cache.FieldLikes, 1) // committed in PostgreSQL; the write to Redis fails
		outage.On(false)
		if got := read(t, cc, p, 7); got[7].Likes != 2 {
			t.Fatalf("likes %d after Redis came back, want 2 (the hash missed the change)", got[7].Likes)
		}
		if got := read(t, cc, p, 7); got[7].Likes != 2 || len(p.seen()) != 2 {
			t.Fatalf("likes %d after %d loads on the next read, want 2 from the refilled hash", got[7].Likes, len(p.seen()))
		}
	})

	t.Run("an unknown commit outcome", func(t *testing.T) {
		t.Parallel()
		e, cc := newCounters(t, envOpts{})
		p := newTruth(map[int64]domain.Counters{7: {Likes: 1}})
		read(t, cc, p, 7) // filled
		tx := &fakeTx{}
		cc.Changed(tx, domain.BizArticle, map[int64]cache.CounterRow{7: p.apply(7, cache.FieldLikes, 1)})
		tx.end(txUnknown)
		// PostgreSQL cannot answer: the suspect count is what there is, so it is served.
		down := &truth{err: errors.New("connection refused")}
		for range 2 {
			if got := read(t, cc, down, 7); got[7].Likes != 1 {
				t.Fatalf("likes %d while PostgreSQL is down; want the suspect hash's 1", got[7].Likes)
			}
		}
		if len(down.seen()) != 2 {
			t.Errorf("%d loads tried while PostgreSQL was down, want one per read", len(down.seen()))
		}
		if got := read(t, cc, p, 7); got[7].Likes != 2 {
			t.Fatalf("likes %d once PostgreSQL answered, want 2", got[7].Likes)
		}
		if got := read(t, cc, p, 7); got[7].Likes != 2 || len(p.seen()) != 2 {
			t.Fatalf("likes %d after %d loads; want the refilled hash's 2", got[7].Likes, len(p.seen()))
		}
		if h := e.rawHash(t, cc, 7); h["_s"] != "" {
			t.Errorf("the refilled hash is still suspect: %v", h)
		}
	})

	t.Run("an unknown outcome that did not commit: a reload at the same version lifts the mark", func(t *testing.T) {
		t.Parallel()
		e, cc := newCounters(t, envOpts{})
		p := newTruth(map[int64]domain.Counters{7: {Likes: 1}})
		read(t, cc, p, 7)
		cc.Suspect(t.Context(), domain.BizArticle, 7)
		if got := read(t, cc, p, 7); got[7].Likes != 1 || len(p.seen()) != 2 {
			t.Fatalf("likes %d after %d loads, want a reload of 1", got[7].Likes, len(p.seen()))
		}
		if h := e.rawHash(t, cc, 7); h["_s"] != "" {
			t.Fatalf("still suspect after a reload at the same version: %v", h)
		}
	})

	t.Run("a fill whose lookup came before the mark does not lift it", func(t *testing.T) {
		t.Parallel()
		e, cc := newCounters(t, envOpts{})
		p := newTruth(map[int64]domain.Counters{7: {Likes: 1}})
		cc.Suspect(t.Context(), domain.BizArticle, 7) // no hash: nothing to mark
		p.gate = testenv.NewGate(t)
		done := make(chan struct{})
		go func() { defer close(done); _, _ = cc.Read(t.Context(), domain.BizArticle, []int64{7}, p.load) }()
		testenv.Recv(t, p.gate.Entered(), "the load to have read likes=1")
		other := cache.NewCounters(testenv.NewRedisClient(t, nil), e.ks, testPolicy, testenv.Logger(t))
		if err := other.Fill(t.Context(), domain.BizArticle, map[int64]domain.Counters{7: {Likes: 1}}); err != nil {
			t.Fatal(err)
		}
		other.Suspect(t.Context(), domain.BizArticle, 7) // a change of unknown outcome, after the lookup
		p.gate.Open()
		testenv.Recv(t, done, "the read")
		if h := e.rawHash(t, cc, 7); h["_s"] == "" {
			t.Fatalf("the mark set after the fill's lookup was lifted: %v", h)
		}
	})
}

package cache_test

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

func newCountersCache(t *testing.T, o envOpts) (*env, *cache.CountersCache) {
	t.Helper()
	e := setup(t, o)
	if o.Policy == (cache.Policy{}) {
		o.Policy = testPolicy
	}
	return e, cache.NewCountersCache(e.client, e.ks, o.Policy)
}

// hash reads an item's whole counter hash straight from Redis.
func (e *env) hash(t *testing.T, cc *cache.CountersCache, id int64) map[string]string {
	t.Helper()
	h, err := e.rdb.HGetAll(context.Background(), cc.Key(domain.BizArticle, id)).Result()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// keys lists every key under the test's prefix.
func (e *env) keys(t *testing.T) []string {
	t.Helper()
	out, err := testenv.ScanKeys(context.Background(), e.rdb, string(e.ks)+"*") // every master of a cluster
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func counterFields(c domain.Counters) map[string]string {
	return map[string]string{
		cache.FieldReads:    strconv.FormatInt(c.Reads, 10),
		cache.FieldLikes:    strconv.FormatInt(c.Likes, 10),
		cache.FieldCollects: strconv.FormatInt(c.Collects, 10),
	}
}

// Acceptance: the Lua script increments a counter only when the item's hash exists, so a hash can
// never be re-created holding a single field (which would then read as zeros for the others).
func TestCountersCache_IncrOnlyWhenHashExists(t *testing.T) {
	t.Parallel()

	t.Run("missing hash: false, and no key created", func(t *testing.T) {
		t.Parallel()
		e, cc := newCountersCache(t, envOpts{})
		for _, delta := range []int64{1, -1} {
			ok, err := cc.Incr(t.Context(), domain.BizArticle, 1, cache.FieldLikes, delta)
			if err != nil || ok {
				t.Fatalf("Incr(%+d) on a missing hash = %v, %v; want false, nil", delta, ok, err)
			}
		}
		if keys := e.keys(t); len(keys) != 0 {
			t.Fatalf("Incr on a missing hash left keys %v", keys)
		}
	})

	t.Run("existing hash: true, and only that field moves", func(t *testing.T) {
		t.Parallel()
		e, cc := newCountersCache(t, envOpts{})
		start := domain.Counters{Reads: 10, Likes: 20, Collects: 30}
		if err := cc.Fill(t.Context(), domain.BizArticle, map[int64]domain.Counters{7: start}); err != nil {
			t.Fatal(err)
		}
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
			ok, err := cc.Incr(t.Context(), domain.BizArticle, 7, step.field, step.delta)
			if err != nil || !ok {
				t.Fatalf("Incr(%s, %+d) = %v, %v; want true, nil", step.field, step.delta, ok, err)
			}
			if h := e.hash(t, cc, 7); !maps.Equal(h, counterFields(step.want)) {
				t.Fatalf("after Incr(%s, %+d): hash %v, want %v", step.field, step.delta, h, counterFields(step.want))
			}
		}
		if d := e.pttl(t, cc.Key(domain.BizArticle, 7)); d <= 0 {
			t.Errorf("PTTL after increments = %v: the hash lost its expiry", d)
		}
		if ok, err := cc.Incr(t.Context(), domain.BizArticle, 8, cache.FieldLikes, 1); ok || err != nil {
			t.Errorf("Incr on another item's missing hash = %v, %v", ok, err)
		}
	})

	t.Run("100 concurrent increments all count", func(t *testing.T) {
		t.Parallel()
		e, cc := newCountersCache(t, envOpts{})
		if err := cc.Fill(t.Context(), domain.BizArticle, map[int64]domain.Counters{1: {}}); err != nil {
			t.Fatal(err)
		}
		const n = 100
		oks, errs := make([]bool, n), make([]error, n)
		together(n, func(i int) { oks[i], errs[i] = cc.Incr(t.Context(), domain.BizArticle, 1, cache.FieldLikes, 1) })
		for i := range n {
			if errs[i] != nil || !oks[i] {
				t.Fatalf("increment %d = %v, %v; want true, nil", i, oks[i], errs[i])
			}
		}
		if h := e.hash(t, cc, 1); h[cache.FieldLikes] != strconv.Itoa(n) {
			t.Fatalf("like_cnt = %s, want %d", h[cache.FieldLikes], n)
		}
	})

	t.Run("an expired hash is not re-created", func(t *testing.T) {
		t.Parallel()
		p := testPolicy
		p.TTL, p.Jitter = 50*time.Millisecond, 0
		e, cc := newCountersCache(t, envOpts{Policy: p})
		if err := cc.Fill(t.Context(), domain.BizArticle, map[int64]domain.Counters{1: {Likes: 3}}); err != nil {
			t.Fatal(err)
		}
		key := cc.Key(domain.BizArticle, 1)
		waitUntil(t, "the hash expired", func() bool { return !e.exists(t, key) })
		if ok, err := cc.Incr(t.Context(), domain.BizArticle, 1, cache.FieldLikes, 1); ok || err != nil {
			t.Fatalf("Incr after expiry = %v, %v; want false, nil", ok, err)
		}
		if e.exists(t, key) {
			t.Fatalf("Incr re-created the hash: %v", e.hash(t, cc, 1))
		}
	})
}

// Acceptance: Get reads a batch in one round trip and reports which items have no hash.
func TestCountersCache_GetReportsMissing(t *testing.T) {
	t.Parallel()
	_, cc := newCountersCache(t, envOpts{})
	stored := map[int64]domain.Counters{1: {Reads: 1, Likes: 2, Collects: 3}, 3: {}, 5: {Likes: 9}}
	if err := cc.Fill(t.Context(), domain.BizArticle, stored); err != nil {
		t.Fatal(err)
	}
	found, missing, err := cc.Get(t.Context(), domain.BizArticle, []int64{1, 2, 3, 4, 5, 6})
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(found, stored) {
		t.Errorf("found %v, want %v (a hash of zeros counts as found)", found, stored)
	}
	if !slices.Equal(missing, []int64{2, 4, 6}) {
		t.Errorf("missing %v, want [2 4 6] in the order asked", missing)
	}

	found, missing, err = cc.Get(t.Context(), domain.BizArticle, []int64{2})
	if err != nil || len(found) != 0 || !slices.Equal(missing, []int64{2}) {
		t.Errorf("Get of one missing id = %v, %v, %v", found, missing, err)
	}
	found, missing, err = cc.Get(t.Context(), domain.BizArticle, nil)
	if err != nil || len(found) != 0 || len(missing) != 0 {
		t.Errorf("Get of no ids = %v, %v, %v; want empty", found, missing, err)
	}
	// Another kind of item with the same id has a hash of its own.
	if _, missing, err := cc.Get(t.Context(), domain.Biz("comment"), []int64{1}); err != nil || !slices.Equal(missing, []int64{1}) {
		t.Errorf("Get of another biz: missing %v, %v", missing, err)
	}
}

// Acceptance: Fill writes every field of every hash, each with an expiry in [TTL, TTL+Jitter],
// spread so hashes filled together do not expire together.
func TestCountersCache_FillSetsEveryFieldAndTTL(t *testing.T) {
	t.Parallel()
	p := testPolicy
	e, cc := newCountersCache(t, envOpts{Policy: p})
	const n = 50
	want := make(map[int64]domain.Counters, n)
	for i := range int64(n) {
		want[100+i] = domain.Counters{Reads: i, Likes: 2 * i, Collects: 3 * i}
	}
	start := time.Now()
	if err := cc.Fill(t.Context(), domain.BizArticle, want); err != nil {
		t.Fatal(err)
	}
	ttls := make([]time.Duration, 0, n)
	for id, c := range want {
		if h := e.hash(t, cc, id); !maps.Equal(h, counterFields(c)) {
			t.Fatalf("hash of %d = %v, want %v", id, h, counterFields(c))
		}
		ttls = append(ttls, e.pttl(t, cc.Key(domain.BizArticle, id)))
	}
	checkSpread(t, ttls, p.TTL-time.Since(start)-time.Millisecond, p.TTL+p.Jitter, p.Jitter/4)

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

	if err := cc.Invalidate(t.Context(), domain.BizArticle, 100); err != nil {
		t.Fatal(err)
	}
	if _, missing, err := cc.Get(t.Context(), domain.BizArticle, []int64{100, 101}); err != nil || !slices.Equal(missing, []int64{100}) {
		t.Errorf("after Invalidate: missing %v, %v; want [100]", missing, err)
	}
}

// With Redis down every operation reports the failure, for the repository to fall back.
func TestCountersCache_RedisDownReturnsErrors(t *testing.T) {
	t.Parallel()
	_, cc := newCountersCache(t, envOpts{DeadRedis: true})
	ctx := t.Context()
	if _, _, err := cc.Get(ctx, domain.BizArticle, []int64{1}); err == nil {
		t.Error("Get: nil error")
	}
	if err := cc.Fill(ctx, domain.BizArticle, map[int64]domain.Counters{1: {}}); err == nil {
		t.Error("Fill: nil error")
	}
	if ok, err := cc.Incr(ctx, domain.BizArticle, 1, cache.FieldLikes, 1); err == nil || ok {
		t.Errorf("Incr = %v, %v; want false and an error", ok, err)
	}
	if err := cc.Invalidate(ctx, domain.BizArticle, 1); err == nil {
		t.Error("Invalidate: nil error")
	}
}

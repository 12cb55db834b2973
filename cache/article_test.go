package cache_test

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

func newArticleCache(t *testing.T, o envOpts) (*env, *cache.ArticleCache) {
	t.Helper()
	e := setup(t, o)
	if o.Policy == (cache.Policy{}) {
		o.Policy = testPolicy
	}
	return e, cache.NewArticleCache(e.client, e.ks, o.Policy, nil, testenv.Logger(t))
}

// articleLoader counts its calls and returns a fixed article (or error).
type articleLoader struct {
	a     domain.Article
	err   error
	calls atomic.Int64
}

func (l *articleLoader) load(context.Context) (domain.Article, error) {
	l.calls.Add(1)
	return l.a, l.err
}

func (l *articleLoader) read(t *testing.T, ac *cache.ArticleCache) domain.Article {
	t.Helper()
	a, err := ac.BySlug(t.Context(), l.a.Slug, l.load)
	if err != nil {
		t.Fatalf("BySlug(%q): %v", l.a.Slug, err)
	}
	return a
}

// gatedArticleLoader returns a after waiting at gate.
type gatedArticleLoader struct {
	a    domain.Article
	gate *testenv.Gate
}

func (l *gatedArticleLoader) load(ctx context.Context) (domain.Article, error) {
	if err := l.gate.Wait(ctx); err != nil {
		return domain.Article{}, err
	}
	return l.a, nil
}

func TestArticleCache(t *testing.T) {
	t.Parallel()

	t.Run("BySlug loads once and round-trips every field", func(t *testing.T) {
		t.Parallel()
		e, ac := newArticleCache(t, envOpts{})
		for _, a := range []domain.Article{testArticle(1, domain.StatusPublished), testArticle(2, domain.StatusDraft)} {
			l := &articleLoader{a: a}
			for i := range 3 {
				if got := l.read(t, ac); !sameArticle(got, a) {
					t.Fatalf("read %d: %+v, want %+v", i, got, a)
				}
			}
			if c := l.calls.Load(); c != 1 {
				t.Errorf("%q loaded %d times, want 1", a.Slug, c)
			}
			if !e.exists(t, ac.Key(a.Slug)) {
				t.Errorf("no entry under Key(%q)", a.Slug)
			}
		}
		if s := ac.Stats(); s.Loads.Load() != 2 || s.Hits.Load() != 4 {
			t.Errorf("Stats: %d loads, %d hits; want 2 and 4", s.Loads.Load(), s.Hits.Load())
		}
	})

	t.Run("nil tags come back empty, not nil", func(t *testing.T) {
		t.Parallel()
		_, ac := newArticleCache(t, envOpts{})
		a := testArticle(3, domain.StatusPublished)
		a.Tags = nil
		l := &articleLoader{a: a}
		for i := range 2 {
			if got := l.read(t, ac); got.Tags == nil || len(got.Tags) != 0 {
				t.Fatalf("read %d: tags %#v, want []string{}", i, got.Tags)
			}
		}
	})

	t.Run("a missing slug is a null marker", func(t *testing.T) {
		t.Parallel()
		e, ac := newArticleCache(t, envOpts{})
		l := &articleLoader{a: domain.Article{Slug: "ghost"}, err: domain.ErrNotFound}
		before := time.Now()
		for i := range 5 {
			if _, err := ac.BySlug(t.Context(), "ghost", l.load); !errors.Is(err, domain.ErrNotFound) {
				t.Fatalf("read %d: err = %v, want ErrNotFound", i, err)
			}
		}
		if c := l.calls.Load(); c != 1 {
			t.Errorf("loaded %d times, want 1", c)
		}
		checkShortNullPTTL(t, e.pttl(t, ac.Key("ghost")), testPolicy, before)
	})

	t.Run("Refresh replaces an entry, even a null marker, with a fresh load", func(t *testing.T) {
		t.Parallel()
		e, ac := newArticleCache(t, envOpts{})
		a := testArticle(4, domain.StatusPublished)
		missing := &articleLoader{a: domain.Article{Slug: a.Slug}, err: domain.ErrNotFound}
		if _, err := ac.BySlug(t.Context(), a.Slug, missing.load); !errors.Is(err, domain.ErrNotFound) {
			t.Fatal(err)
		}
		published := &articleLoader{a: a}
		start := time.Now()
		if err := ac.Refresh(t.Context(), a.Slug, published.load); err != nil {
			t.Fatal(err)
		}
		if d := e.pttl(t, ac.Key(a.Slug)); d < testPolicy.TTL-time.Since(start)-time.Millisecond || d > testPolicy.TTL+testPolicy.Jitter {
			t.Errorf("PTTL after Refresh = %v, want the policy's TTL plus jitter", d)
		}
		if got, err := ac.BySlug(t.Context(), a.Slug, missing.load); err != nil || !sameArticle(got, a) {
			t.Fatalf("read after Refresh: %+v, %v; want %+v", got, err, a)
		}
		newer := a
		newer.Title, newer.Version = "Newer", a.Version+1
		edited := &articleLoader{a: newer}
		if err := ac.Refresh(t.Context(), a.Slug, edited.load); err != nil {
			t.Fatal(err)
		}
		if got, _ := ac.BySlug(t.Context(), a.Slug, missing.load); !sameArticle(got, newer) {
			t.Fatalf("read after a second Refresh: %+v, want %+v", got, newer)
		}
		if c := missing.calls.Load() + published.calls.Load() + edited.calls.Load(); c != 3 {
			t.Errorf("loaded %d times, want 3 (the miss and one per Refresh)", c)
		}
	})

	t.Run("Preload never overwrites", func(t *testing.T) {
		t.Parallel()
		e, ac := newArticleCache(t, envOpts{})
		const ttl = time.Minute
		a := testArticle(5, domain.StatusPublished)
		l := &articleLoader{a: a}
		l.read(t, ac) // cached for testPolicy.TTL
		stale := a
		stale.Title = "stale guess"
		guess := &articleLoader{a: stale}
		if err := ac.Preload(t.Context(), a.Slug, ttl, guess.load); err != nil {
			t.Fatalf("Preload over an entry: %v", err)
		}
		if c := guess.calls.Load(); c != 0 {
			t.Errorf("Preload over an entry loaded %d times, want 0", c)
		}
		if got := l.read(t, ac); !sameArticle(got, a) {
			t.Fatalf("Preload overwrote the entry: %+v", got)
		}
		if d := e.pttl(t, ac.Key(a.Slug)); d < testPolicy.TTL-time.Minute {
			t.Errorf("Preload shortened the entry's life to %v", d)
		}

		b := testArticle(6, domain.StatusDraft)
		start := time.Now()
		if err := ac.Preload(t.Context(), b.Slug, ttl, (&articleLoader{a: b}).load); err != nil {
			t.Fatal(err)
		}
		if d := e.pttl(t, ac.Key(b.Slug)); d < ttl-time.Since(start)-time.Millisecond || d > ttl+ttl/4 {
			t.Errorf("preloaded PTTL = %v, want in [%v, %v]", d, ttl, ttl+ttl/4)
		}
		lb := &articleLoader{a: b}
		if got := lb.read(t, ac); !sameArticle(got, b) || lb.calls.Load() != 0 {
			t.Errorf("read of the preloaded article: %+v with %d loads, want a hit", got, lb.calls.Load())
		}
	})

	t.Run("Invalidate leaves a short tombstone that reads miss and preloads respect", func(t *testing.T) {
		t.Parallel()
		e, ac := newArticleCache(t, envOpts{})
		a := testArticle(7, domain.StatusPublished)
		l := &articleLoader{a: a}
		l.read(t, ac)
		if err := ac.Invalidate(t.Context(), a.Slug); err != nil {
			t.Fatal(err)
		}
		if d := e.pttl(t, ac.Key(a.Slug)); d <= 0 || d > time.Minute {
			t.Errorf("tombstone PTTL = %v, want at most a minute", d)
		}
		// A preload after the invalidation reads the row after the change: it may fill.
		if err := ac.Preload(t.Context(), a.Slug, time.Minute, l.load); err != nil {
			t.Fatal(err)
		}
		if got := l.read(t, ac); !sameArticle(got, a) {
			t.Fatalf("read after Invalidate and a preload: %+v, want %+v", got, a)
		}
		if c := l.calls.Load(); c != 2 {
			t.Errorf("loaded %d times, want 2 (the first read, the preload)", c)
		}
	})

	t.Run("a preload that read before an invalidation is dropped", func(t *testing.T) {
		t.Parallel()
		_, ac := newArticleCache(t, envOpts{})
		a := testArticle(9, domain.StatusPublished)
		held := &gatedArticleLoader{a: a, gate: testenv.NewGate(t)}
		done := make(chan error, 1)
		go func() { done <- ac.Preload(context.Background(), a.Slug, time.Minute, held.load) }()
		testenv.Recv(t, held.gate.Entered(), "the preload to have read the row")
		if err := ac.Invalidate(t.Context(), a.Slug); err != nil { // a write committed meanwhile
			t.Fatal(err)
		}
		held.gate.Open()
		if err := testenv.Recv(t, done, "the preload"); err != nil {
			t.Fatal(err)
		}
		newer := a
		newer.Title = "after the write"
		l := &articleLoader{a: newer}
		if got := l.read(t, ac); !sameArticle(got, newer) || l.calls.Load() != 1 {
			t.Fatalf("read after the racing preload: %+v with %d loads, want a load of %+v", got, l.calls.Load(), newer)
		}
	})

	t.Run("Redis down: reads load, writes report the failure", func(t *testing.T) {
		t.Parallel()
		_, ac := newArticleCache(t, envOpts{DeadRedis: true})
		a := testArticle(8, domain.StatusPublished)
		l := &articleLoader{a: a}
		for range 2 {
			if got := l.read(t, ac); !sameArticle(got, a) {
				t.Fatalf("read: %+v", got)
			}
		}
		if c := l.calls.Load(); c != 2 {
			t.Errorf("loaded %d times, want 2", c)
		}
		if err := ac.Refresh(t.Context(), a.Slug, l.load); err == nil {
			t.Error("Refresh: nil error")
		}
		if err := ac.Preload(t.Context(), a.Slug, time.Minute, l.load); err != nil {
			t.Errorf("Preload with Redis down: %v, want nothing to do", err)
		}
		if err := ac.Invalidate(t.Context(), a.Slug); err == nil {
			t.Error("Invalidate: nil error")
		}
	})
}

func TestTagsCache(t *testing.T) {
	t.Parallel()
	e := setup(t, envOpts{})
	tc := cache.NewTagsCache(e.client, e.ks, testPolicy, testenv.Logger(t))
	var calls atomic.Int64
	want := []string{"go", "sql"}
	load := func(context.Context) ([]string, error) { calls.Add(1); return want, nil }

	start := time.Now()
	for i := range 3 {
		got, err := tc.Get(t.Context(), load)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("read %d: %v, %v; want %v", i, got, err, want)
		}
	}
	if c := calls.Load(); c != 1 {
		t.Errorf("loaded %d times, want 1", c)
	}
	// The tag cloud has its own short TTL, whatever the policy says.
	if d := e.pttl(t, e.ks.Key("tags")); d < cache.TagsTTL-time.Since(start)-time.Millisecond || d > cache.TagsTTL+cache.TagsTTL/5 {
		t.Errorf("PTTL = %v, want in [%v, %v]", d, cache.TagsTTL, cache.TagsTTL+cache.TagsTTL/5)
	}
}

package cache_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// countingRenderer renders a body as "<p>body</p>" and counts its calls.
type countingRenderer struct{ calls atomic.Int64 }

func (r *countingRenderer) Render(md string) string {
	r.calls.Add(1)
	return "<p>" + md + "</p>"
}

func TestArticleCacheRendersOncePerFill(t *testing.T) {
	t.Parallel()

	t.Run("the entry carries the HTML: reads on any instance render nothing", func(t *testing.T) {
		t.Parallel()
		e := setup(t, envOpts{})
		r1, r2 := &countingRenderer{}, &countingRenderer{}
		one := cache.NewArticleCache(e.client, e.ks, testPolicy, r1, testenv.Logger(t))
		two := cache.NewArticleCache(e.client, e.ks, testPolicy, r2, testenv.Logger(t)) // another instance: its own local tier
		l := &articleLoader{a: testArticle(1, domain.StatusPublished)}
		for i := range 3 {
			for _, ac := range []*cache.ArticleCache{one, two} {
				if got := l.read(t, ac); got.BodyHTML != "<p>"+l.a.Body+"</p>" {
					t.Fatalf("read %d: BodyHTML %q", i, got.BodyHTML)
				}
			}
		}
		if c1, c2 := r1.calls.Load(), r2.calls.Load(); c1 != 1 || c2 != 0 {
			t.Errorf("rendered %d and %d times, want once on the filling instance", c1, c2)
		}
	})

	t.Run("a refresh renders the new body", func(t *testing.T) {
		t.Parallel()
		e := setup(t, envOpts{})
		ac := cache.NewArticleCache(e.client, e.ks, testPolicy, &countingRenderer{}, testenv.Logger(t))
		l := &articleLoader{a: testArticle(2, domain.StatusPublished)}
		l.read(t, ac)
		l.a.Body = "edited"
		if err := ac.Refresh(t.Context(), l.a.Slug, l.load); err != nil {
			t.Fatal(err)
		}
		if got := l.read(t, ac); got.BodyHTML != "<p>edited</p>" {
			t.Fatalf("after the refresh: BodyHTML %q", got.BodyHTML)
		}
	})

	t.Run("entries a list fills carry the HTML too", func(t *testing.T) {
		t.Parallel()
		e := setup(t, envOpts{})
		r := &countingRenderer{}
		ac := cache.NewArticleCache(e.client, e.ks, testPolicy, r, testenv.Logger(t))
		a := testArticle(3, domain.StatusPublished)
		got, err := ac.BySlugs(t.Context(), []string{a.Slug}, func(context.Context, []string) (map[string]domain.Article, error) {
			return map[string]domain.Article{a.Slug: a}, nil
		})
		if err != nil || got[a.Slug].BodyHTML != "<p>"+a.Body+"</p>" {
			t.Fatalf("BySlugs = %+v, %v", got, err)
		}
		if one := (&articleLoader{a: a}).read(t, ac); one.BodyHTML != got[a.Slug].BodyHTML || r.calls.Load() != 1 {
			t.Fatalf("BySlug after BySlugs: %q after %d renderings", one.BodyHTML, r.calls.Load())
		}
	})

	t.Run("an entry without HTML (the previous release's) is rendered on read", func(t *testing.T) {
		t.Parallel()
		e := setup(t, envOpts{})
		previous := cache.NewArticleCache(e.client, e.ks, testPolicy, nil, testenv.Logger(t))
		l := &articleLoader{a: testArticle(4, domain.StatusPublished)}
		if got := l.read(t, previous); got.BodyHTML != "" {
			t.Fatalf("no renderer, yet BodyHTML %q", got.BodyHTML)
		}
		current := cache.NewArticleCache(e.client, e.ks, testPolicy, &countingRenderer{}, testenv.Logger(t))
		if got := l.read(t, current); got.BodyHTML != "<p>"+l.a.Body+"</p>" || l.calls.Load() != 1 {
			t.Fatalf("BodyHTML %q after %d loads", got.BodyHTML, l.calls.Load())
		}
	})
}

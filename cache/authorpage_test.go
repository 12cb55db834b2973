package cache_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/cache"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
)

func newAuthorPageCache(t *testing.T, o envOpts) (*env, *cache.AuthorPageCache) {
	t.Helper()
	e := setup(t, o)
	if o.Policy == (cache.Policy{}) {
		o.Policy = testPolicy
	}
	return e, cache.NewAuthorPageCache(e.client, e.ks, o.Policy)
}

// testArticle is a full article with a body, as ListByAuthor would never cache it.
func testArticle(id int64, status domain.ArticleStatus) domain.Article {
	created := time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC).Add(time.Duration(id) * time.Minute)
	a := domain.Article{
		ID: id, Slug: "slug-" + string(rune('a'+id)), AuthorID: 42, Title: "Title", Description: "Description",
		Body: "a body that must not be cached in a list", Tags: []string{"b", "a"}, Status: status, Version: 3,
		CreatedAt: created, UpdatedAt: created.Add(time.Second),
	}
	if status != domain.StatusDraft {
		p := created.Add(2 * time.Second)
		a.PublishedAt = &p
	}
	return a
}

// sameArticle compares articles, timestamps by instant (JSON drops the monotonic clock and the
// location).
func sameArticle(a, b domain.Article) bool {
	samePublished := (a.PublishedAt == nil) == (b.PublishedAt == nil) &&
		(a.PublishedAt == nil || a.PublishedAt.Equal(*b.PublishedAt))
	return a.ID == b.ID && a.Slug == b.Slug && a.AuthorID == b.AuthorID && a.Title == b.Title &&
		a.Description == b.Description && a.Body == b.Body && slices.Equal(a.Tags, b.Tags) &&
		a.Status == b.Status && a.Version == b.Version && a.CreatedAt.Equal(b.CreatedAt) &&
		a.UpdatedAt.Equal(b.UpdatedAt) && samePublished
}

// setPage fills a page as a read that found the hash absent would.
func setPage(t *testing.T, pc *cache.AuthorPageCache, author int64, st domain.ArticleStatus, arts []domain.Article, total int64) error {
	t.Helper()
	_, err := pc.Fill(t.Context(), author, st, cache.AuthorPage{}, arts, total, false)
	return err
}

func getPage(t *testing.T, pc *cache.AuthorPageCache, author int64, st domain.ArticleStatus) ([]domain.Article, int64, bool, error) {
	t.Helper()
	p, err := pc.Get(t.Context(), author, st)
	return p.Articles, p.Total, p.Found, err
}

func TestAuthorPageCache(t *testing.T) {
	t.Parallel()

	t.Run("miss", func(t *testing.T) {
		t.Parallel()
		_, pc := newAuthorPageCache(t, envOpts{})
		arts, total, ok, err := getPage(t, pc, 42, "")
		if ok || err != nil || arts != nil || total != 0 {
			t.Fatalf("Get on an empty cache = %v, %d, %v, %v; want a plain miss", arts, total, ok, err)
		}
	})

	t.Run("round trip drops bodies", func(t *testing.T) {
		t.Parallel()
		_, pc := newAuthorPageCache(t, envOpts{})
		in := []domain.Article{testArticle(2, domain.StatusPublished), testArticle(1, domain.StatusDraft)}
		in[1].Tags = nil
		if err := setPage(t, pc, 42, "", in, 7); err != nil {
			t.Fatal(err)
		}
		if in[0].Body == "" {
			t.Fatal("Set cleared the caller's bodies")
		}
		got, total, ok, err := getPage(t, pc, 42, "")
		if err != nil || !ok || total != 7 || len(got) != len(in) {
			t.Fatalf("Get = %d articles, total %d, %v, %v", len(got), total, ok, err)
		}
		for i := range in {
			want := in[i]
			want.Body = ""
			if want.Tags == nil {
				want.Tags = []string{}
			}
			if !sameArticle(got[i], want) || got[i].Tags == nil {
				t.Errorf("article %d: %+v, want %+v", i, got[i], want)
			}
		}
	})

	t.Run("each status filter has its own field", func(t *testing.T) {
		t.Parallel()
		e, pc := newAuthorPageCache(t, envOpts{})
		pages := map[domain.ArticleStatus][]domain.Article{
			"":                 {testArticle(2, domain.StatusDraft), testArticle(1, domain.StatusPublished)},
			domain.StatusDraft: {testArticle(2, domain.StatusDraft)},
		}
		for st, arts := range pages {
			if err := setPage(t, pc, 42, st, arts, int64(len(arts))); err != nil {
				t.Fatal(err)
			}
		}
		for st, arts := range pages {
			got, total, ok, err := getPage(t, pc, 42, st)
			if err != nil || !ok || total != int64(len(arts)) || len(got) != len(arts) || got[0].ID != arts[0].ID {
				t.Errorf("status %q: %d articles, total %d, %v, %v", st, len(got), total, ok, err)
			}
		}
		if _, _, ok, _ := getPage(t, pc, 42, domain.StatusPublished); ok {
			t.Error("a filter never stored was a hit")
		}
		if _, _, ok, _ := getPage(t, pc, 43, ""); ok {
			t.Error("another author's page was a hit")
		}
		fields, err := e.rdb.HKeys(t.Context(), pc.Key(42)).Result()
		slices.Sort(fields)
		if err != nil || !slices.Equal(fields, []string{"_f", "all", "draft"}) {
			t.Errorf("fields %v, %v; want [_f all draft]", fields, err)
		}
	})

	t.Run("Invalidate drops every filter of one author", func(t *testing.T) {
		t.Parallel()
		_, pc := newAuthorPageCache(t, envOpts{})
		for _, author := range []int64{42, 43} {
			for _, st := range []domain.ArticleStatus{"", domain.StatusDraft, domain.StatusPublished} {
				if err := setPage(t, pc, author, st, []domain.Article{testArticle(1, domain.StatusDraft)}, 1); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := pc.Invalidate(t.Context(), 42); err != nil {
			t.Fatal(err)
		}
		for _, st := range []domain.ArticleStatus{"", domain.StatusDraft, domain.StatusPublished} {
			if _, _, ok, _ := getPage(t, pc, 42, st); ok {
				t.Fatalf("the author's page %q survived Invalidate", st)
			}
		}
		if _, _, ok, err := getPage(t, pc, 43, domain.StatusDraft); !ok || err != nil {
			t.Errorf("another author's page: hit %v, %v; want it kept", ok, err)
		}
		if err := pc.Invalidate(t.Context(), 44); err != nil {
			t.Errorf("Invalidate of an author with nothing cached: %v", err)
		}
	})

	t.Run("TTL is at most five minutes", func(t *testing.T) {
		t.Parallel()
		for _, c := range []struct {
			policyTTL, want time.Duration
		}{{10 * time.Minute, 5 * time.Minute}, {time.Minute, time.Minute}} {
			p := testPolicy
			p.TTL = c.policyTTL
			e, pc := newAuthorPageCache(t, envOpts{Policy: p})
			start := time.Now()
			if err := setPage(t, pc, 42, "", nil, 0); err != nil {
				t.Fatal(err)
			}
			if d := e.pttl(t, pc.Key(42)); d > c.want || d < c.want-time.Since(start)-time.Millisecond {
				t.Errorf("policy TTL %v: PTTL %v, want about %v", c.policyTTL, d, c.want)
			}
		}
	})

	t.Run("a later Set keeps the hash's expiry", func(t *testing.T) {
		t.Parallel()
		e, pc := newAuthorPageCache(t, envOpts{})
		if err := setPage(t, pc, 42, "", nil, 0); err != nil {
			t.Fatal(err)
		}
		if err := e.rdb.PExpire(t.Context(), pc.Key(42), 30*time.Second).Err(); err != nil {
			t.Fatal(err)
		}
		if err := setPage(t, pc, 42, domain.StatusDraft, nil, 0); err != nil {
			t.Fatal(err)
		}
		if d := e.pttl(t, pc.Key(42)); d <= 0 || d > 30*time.Second {
			t.Errorf("PTTL after a second Set = %v, want the first one's (≤ 30s): a busy author's pages must still expire", d)
		}
	})

	t.Run("whether a second page exists is kept; an entry from before it was kept reads as before", func(t *testing.T) {
		t.Parallel()
		e, pc := newAuthorPageCache(t, envOpts{})
		for _, more := range []bool{true, false} {
			seen, err := pc.Get(t.Context(), 42, "")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := pc.Fill(t.Context(), 42, "", seen, []domain.Article{testArticle(1, domain.StatusDraft)}, 30, more); err != nil {
				t.Fatal(err)
			}
			if p, err := pc.Get(t.Context(), 42, ""); err != nil || !p.Found || p.More != more {
				t.Fatalf("stored more=%v, read %+v, %v", more, p, err)
			}
			if err := pc.Invalidate(t.Context(), 42); err != nil {
				t.Fatal(err)
			}
		}
		// A version that did not store "more": a full page may have one, a short one has none.
		full := `{"articles":[` + strings.Repeat(`{"id":1},`, domain.DefaultPageLimit-1) + `{"id":1}],"total":99}`
		for raw, want := range map[string]bool{full: true, `{"articles":[{"id":1}],"total":99}`: false} {
			if err := e.rdb.HSet(t.Context(), pc.Key(42), "all", raw).Err(); err != nil {
				t.Fatal(err)
			}
			if p, err := pc.Get(t.Context(), 42, ""); err != nil || !p.Found || p.More != want {
				t.Fatalf("an old entry of %d articles read as more=%v (%v), want %v", len(p.Articles), p.More, err, want)
			}
		}
	})

	t.Run("an unreadable entry is a miss", func(t *testing.T) {
		t.Parallel()
		e, pc := newAuthorPageCache(t, envOpts{})
		if err := e.rdb.HSet(t.Context(), pc.Key(42), "all", "not json").Err(); err != nil {
			t.Fatal(err)
		}
		if _, _, ok, err := getPage(t, pc, 42, ""); ok || err != nil {
			t.Fatalf("Get = %v, %v; want a miss", ok, err)
		}
	})

	t.Run("Redis down returns errors", func(t *testing.T) {
		t.Parallel()
		_, pc := newAuthorPageCache(t, envOpts{DeadRedis: true})
		if _, _, ok, err := getPage(t, pc, 42, ""); err == nil || ok {
			t.Errorf("Get = %v, %v; want an error", ok, err)
		}
		if _, err := pc.Fill(t.Context(), 42, "", cache.AuthorPage{}, nil, 0, false); err == nil {
			t.Error("Fill: nil error")
		}
		if err := pc.Invalidate(t.Context(), 42); err == nil {
			t.Error("Invalidate: nil error")
		}
	})

	t.Run("a fill loses to an invalidation after its lookup, on any instance", func(t *testing.T) {
		t.Parallel()
		e, reader := newAuthorPageCache(t, envOpts{})
		writer := cache.NewAuthorPageCache(testenv.NewRedisClient(t, nil), e.ks, testPolicy) // another instance
		if err := setPage(t, reader, 42, domain.StatusDraft, nil, 0); err != nil {           // the hash exists
			t.Fatal(err)
		}
		miss, err := reader.Get(t.Context(), 42, "") // the lookup; then the page is read from PostgreSQL…
		if err != nil || miss.Found {
			t.Fatalf("Get = %+v, %v; want a miss", miss, err)
		}
		if err := writer.Invalidate(t.Context(), 42); err != nil { // …while another instance's write commits
			t.Fatal(err)
		}
		old := []domain.Article{testArticle(1, domain.StatusDraft)}
		if stored, err := reader.Fill(t.Context(), 42, "", miss, old, 1, false); err != nil || stored {
			t.Fatalf("Fill after the invalidation = %v, %v; want it dropped", stored, err)
		}
		if _, _, ok, _ := getPage(t, reader, 42, ""); ok {
			t.Fatal("the page read before the invalidation was stored after it")
		}
		again, _ := reader.Get(t.Context(), 42, "")
		if stored, err := reader.Fill(t.Context(), 42, "", again, old, 1, false); err != nil || !stored {
			t.Fatalf("a fill looked up after the invalidation = %v, %v; want it stored", stored, err)
		}
	})
}

package repository_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/job"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/service"
)

// preloadTTL mirrors repository.preloadTTL: a preloaded detail lives this long plus at most a
// quarter of it in jitter.
const preloadTTL = time.Minute

// sameArticle compares articles, timestamps by instant (a JSON round trip through the cache drops
// the monotonic clock and may change the location).
func sameArticle(a, b domain.Article) bool {
	samePublished := (a.PublishedAt == nil) == (b.PublishedAt == nil) &&
		(a.PublishedAt == nil || a.PublishedAt.Equal(*b.PublishedAt))
	return a.ID == b.ID && a.Slug == b.Slug && a.AuthorID == b.AuthorID && a.Title == b.Title &&
		a.Description == b.Description && a.Body == b.Body && slices.Equal(a.Tags, b.Tags) &&
		a.Status == b.Status && a.Version == b.Version && a.CreatedAt.Equal(b.CreatedAt) &&
		a.UpdatedAt.Equal(b.UpdatedAt) && samePublished
}

// summary is a as lists return it: without its body.
func summary(a domain.Article) domain.Article {
	a.Body = ""
	return a
}

func sameArticles(a, b []domain.Article) bool {
	return slices.EqualFunc(a, b, sameArticle)
}

// cachedEntry is what the article cache holds under a slug, as far as these tests look.
type cachedEntry struct {
	ID      int64                `json:"id"`
	Title   string               `json:"title"`
	Status  domain.ArticleStatus `json:"status"`
	Version int32                `json:"version"`
}

// cachedArticle reads the article cache's raw entry for slug; ok is false when there is none.
func (e *env) cachedArticle(t *testing.T, slug string) (c cachedEntry, ok bool) {
	t.Helper()
	raw, err := e.rdb.Get(context.Background(), e.artCache.Key(slug)).Result()
	if err != nil || strings.HasPrefix(raw, "\x01") { // absent, or an invalidation's tombstone
		return cachedEntry{}, false
	}
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		t.Fatalf("article cache entry of %q is not an article: %q (%v)", slug, raw, err)
	}
	return c, true
}

func (e *env) getArticle(t *testing.T, slug string) domain.Article {
	t.Helper()
	a, err := e.articles.GetBySlug(t.Context(), slug)
	if err != nil {
		t.Fatalf("GetBySlug(%q): %v", slug, err)
	}
	return a
}

// Acceptance: articles round-trip, slugs are unique, updates are versioned and transactional,
// status changes are guarded in SQL, and deleting an article takes its comments, likes and
// counters with it.
func TestArticleRepository(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)

	t.Run("Create and GetBySlug round trip", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		author := createUser(t, e.users, userOpts{})
		tags := []string{"zeta", "alpha", "mid"} // not sorted: the order given is kept
		pub := createArticle(t, e, articleOpts{Author: author, Title: "Published one", Body: "Long body", Tags: tags})
		draft := createArticle(t, e, articleOpts{Author: author, Status: domain.StatusDraft})

		if pub.ID == 0 || pub.AuthorID != author.ID || pub.Body != "Long body" || !slices.Equal(pub.Tags, tags) ||
			pub.Status != domain.StatusPublished || pub.Version != 1 || pub.PublishedAt == nil || pub.CreatedAt.IsZero() {
			t.Fatalf("created published article: %+v", pub)
		}
		if draft.Status != domain.StatusDraft || draft.Version != 1 || draft.PublishedAt != nil || draft.Tags == nil {
			t.Fatalf("created draft: %+v (want no published_at, non-nil empty tags)", draft)
		}
		for _, want := range []domain.Article{pub, draft} {
			// Twice: from PostgreSQL (the draft) or the warmed cache (the published one), then from the cache.
			for i := range 2 {
				if got := e.getArticle(t, want.Slug); !sameArticle(got, want) {
					t.Fatalf("read %d of %q: got %+v, want %+v", i, want.Slug, got, want)
				}
			}
		}
	})

	t.Run("duplicate slug is ErrSlugTaken", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{})
		_, err := e.articles.Create(t.Context(), domain.Article{
			Slug: a.Slug, AuthorID: a.AuthorID, Title: "Other", Description: "d", Body: "b", Status: domain.StatusDraft,
		})
		if !errors.Is(err, domain.ErrSlugTaken) {
			t.Fatalf("err = %v, want ErrSlugTaken", err)
		}
		if n := e.count(t, "SELECT count(*) FROM articles WHERE slug = $1", a.Slug); n != 1 {
			t.Errorf("%d articles with the slug, want 1", n)
		}
	})

	t.Run("Create by a missing author is ErrNotFound", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		_, err := e.articles.Create(t.Context(), domain.Article{
			Slug: "orphan-" + testenv.RandomID(4), AuthorID: 1 << 60, Title: "t", Description: "d", Body: "b", Status: domain.StatusPublished,
		})
		if !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
	})

	t.Run("Update bumps the version and keeps the slug", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{Tags: []string{"old"}})
		got, err := e.articles.Update(t.Context(), a.ID, func(cur *domain.Article) error {
			if cur.Version != 1 || cur.Body != a.Body {
				return fmt.Errorf("change saw %+v", cur)
			}
			cur.Title, cur.Description, cur.Body, cur.Tags = "New title", "New description", "New body", []string{"b", "a"}
			cur.Slug = "ignored" // the slug is not updatable: links must not break
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got.Slug != a.Slug || got.Version != 2 || got.Title != "New title" || got.Description != "New description" ||
			got.Body != "New body" || !slices.Equal(got.Tags, []string{"b", "a"}) || !got.CreatedAt.Equal(a.CreatedAt) ||
			got.UpdatedAt.Before(a.UpdatedAt) {
			t.Fatalf("updated: %+v", got)
		}
		if read := e.getArticle(t, a.Slug); !sameArticle(read, got) {
			t.Fatalf("read after Update: %+v, want %+v", read, got)
		}
	})

	t.Run("Update: an error from change rolls back", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{})
		boom := errors.New("change refused")
		_, err := e.articles.Update(t.Context(), a.ID, func(cur *domain.Article) error {
			cur.Title = "must not be stored"
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("err = %v, want the change's own error", err)
		}
		var title string
		var version int32
		if err := e.pool.QueryRow(t.Context(), "SELECT title, version FROM articles WHERE id = $1", a.ID).Scan(&title, &version); err != nil {
			t.Fatal(err)
		}
		if title != a.Title || version != 1 {
			t.Fatalf("row after a failed Update: title %q, version %d; want %q, 1", title, version, a.Title)
		}
		// The row lock was released with the rollback: another Update goes through.
		if _, err := e.articles.Update(t.Context(), a.ID, func(*domain.Article) error { return nil }); err != nil {
			t.Fatalf("Update after the rolled-back one: %v", err)
		}
	})

	t.Run("Update of a missing article is ErrNotFound", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		called := false
		_, err := e.articles.Update(t.Context(), 1<<60, func(*domain.Article) error { called = true; return nil })
		if !errors.Is(err, domain.ErrNotFound) || called {
			t.Fatalf("err = %v, change called %v; want ErrNotFound, not called", err, called)
		}
	})

	t.Run("Transition is guarded in SQL", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{Status: domain.StatusDraft})
		ctx := t.Context()
		publishable := []domain.ArticleStatus{domain.StatusDraft, domain.StatusWithdrawn}
		published := []domain.ArticleStatus{domain.StatusPublished}

		if _, err := e.articles.Transition(ctx, a.ID, published, domain.StatusWithdrawn); !errors.Is(err, domain.ErrIllegalTransition) {
			t.Fatalf("withdraw a draft: err = %v, want ErrIllegalTransition", err)
		}
		first, err := e.articles.Transition(ctx, a.ID, publishable, domain.StatusPublished)
		if err != nil {
			t.Fatalf("draft → published: %v", err)
		}
		if first.Status != domain.StatusPublished || first.PublishedAt == nil || first.Version != 2 {
			t.Fatalf("after publishing: %+v", first)
		}
		_, err = e.articles.Transition(ctx, a.ID, publishable, domain.StatusPublished)
		if !errors.Is(err, domain.ErrIllegalTransition) || !errors.Is(err, domain.ErrConflict) {
			t.Fatalf("published → published: err = %v, want ErrIllegalTransition (a conflict)", err)
		}
		withdrawn, err := e.articles.Transition(ctx, a.ID, published, domain.StatusWithdrawn)
		if err != nil {
			t.Fatalf("published → withdrawn: %v", err)
		}
		if withdrawn.Status != domain.StatusWithdrawn || withdrawn.Version != 3 || withdrawn.PublishedAt == nil ||
			!withdrawn.PublishedAt.Equal(*first.PublishedAt) {
			t.Fatalf("after withdrawing: %+v", withdrawn)
		}
		again, err := e.articles.Transition(ctx, a.ID, publishable, domain.StatusPublished)
		if err != nil {
			t.Fatalf("withdrawn → published: %v", err)
		}
		if again.Status != domain.StatusPublished || again.Version != 4 || again.PublishedAt == nil ||
			!again.PublishedAt.Equal(*first.PublishedAt) {
			t.Fatalf("republished: %+v; published_at must stay %v", again, first.PublishedAt)
		}
		if got := e.getArticle(t, a.Slug); !sameArticle(got, again) {
			t.Fatalf("read after the transitions: %+v, want %+v", got, again)
		}
	})

	t.Run("20 concurrent publishes of one draft, exactly 1 wins", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{Status: domain.StatusDraft})
		const n = 20
		errs := make([]error, n)
		testenv.Together(n, func(i int) {
			_, errs[i] = e.articles.Transition(t.Context(), a.ID,
				[]domain.ArticleStatus{domain.StatusDraft, domain.StatusWithdrawn}, domain.StatusPublished)
		})
		var ok, illegal int
		for i, err := range errs {
			switch {
			case err == nil:
				ok++
			case errors.Is(err, domain.ErrIllegalTransition):
				illegal++
			default:
				t.Errorf("publisher %d: unexpected err %v", i, err)
			}
		}
		if ok != 1 || illegal != n-1 {
			t.Fatalf("%d succeeded, %d got ErrIllegalTransition; want 1 and %d", ok, illegal, n-1)
		}
		if v := e.count(t, "SELECT version::bigint FROM articles WHERE id = $1", a.ID); v != 2 {
			t.Errorf("version %d, want 2 (one transition)", v)
		}
	})

	t.Run("Delete removes comments, likes and counters", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{})
		other := createArticle(t, e, articleOpts{}) // its rows must survive
		for _, art := range []domain.Article{a, other} {
			for range 2 {
				u := createUser(t, e.users, userOpts{})
				if err := e.inter.Like(t.Context(), domain.BizArticle, art.ID, u.ID); err != nil {
					t.Fatal(err)
				}
				if _, err := e.comments.Create(t.Context(), domain.Comment{ArticleID: art.ID, AuthorID: u.ID, Body: "hi"}); err != nil {
					t.Fatal(err)
				}
			}
		}
		e.getArticle(t, a.Slug)
		rows := func(id int64) map[string]int64 {
			return map[string]int64{
				"articles":             e.count(t, "SELECT count(*) FROM articles WHERE id = $1", id),
				"comments":             e.count(t, "SELECT count(*) FROM comments WHERE article_id = $1", id),
				"article_comment_seqs": e.count(t, "SELECT count(*) FROM article_comment_seqs WHERE article_id = $1", id),
				"likes":                e.count(t, "SELECT count(*) FROM likes WHERE biz = 'article' AND biz_id = $1", id),
				"interactives":         e.count(t, "SELECT count(DISTINCT biz_id) FROM interactives WHERE biz = 'article' AND biz_id = $1", id), // rows: shards
			}
		}
		if got, want := rows(a.ID), map[string]int64{"articles": 1, "comments": 2, "article_comment_seqs": 1, "likes": 2, "interactives": 1}; !equalMaps(got, want) {
			t.Fatalf("rows before Delete: %v, want %v", got, want)
		}

		if err := e.articles.Delete(t.Context(), a); err != nil {
			t.Fatal(err)
		}
		for table, n := range rows(a.ID) {
			if n != 0 {
				t.Errorf("%d rows of the deleted article left in %s", n, table)
			}
		}
		if got, want := rows(other.ID), map[string]int64{"articles": 1, "comments": 2, "article_comment_seqs": 1, "likes": 2, "interactives": 1}; !equalMaps(got, want) {
			t.Errorf("rows of another article after the Delete: %v, want %v", got, want)
		}
		if _, err := e.articles.GetBySlug(t.Context(), a.Slug); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("GetBySlug after Delete: err = %v, want ErrNotFound", err)
		}
		if err := e.articles.Delete(t.Context(), a); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("second Delete: err = %v, want ErrNotFound", err)
		}
	})
}

func equalMaps(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// Acceptance: two concurrent Updates of one article both succeed, one after the other: the second
// waits on the first one's row lock and then sees its result, so the version ends at 3.
func TestArticleRepository_ConcurrentUpdatesSerializeOnRowLock(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t) // alone in its database: it watches pg_stat_activity for a lock wait
	e := setup(t, db, envOpts{})
	a := createArticle(t, e, articleOpts{})

	firstLocked, releaseFirst := make(chan struct{}), make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(releaseFirst) }) })
	type result struct {
		a   domain.Article
		err error
		saw int32 // the version the change func was given
	}
	first, second := make(chan result, 1), make(chan result, 1)
	go func() {
		var saw int32
		got, err := e.articles.Update(t.Context(), a.ID, func(cur *domain.Article) error {
			saw = cur.Version
			close(firstLocked)
			<-releaseFirst // hold the row lock
			cur.Title = "first"
			return nil
		})
		first <- result{got, err, saw}
	}()
	testenv.Recv(t, firstLocked, "the first Update to lock the row")
	go func() {
		var saw int32
		got, err := e.articles.Update(t.Context(), a.ID, func(cur *domain.Article) error {
			saw = cur.Version
			cur.Body = "second"
			return nil
		})
		second <- result{got, err, saw}
	}()
	// Bounded polling on PostgreSQL's own view: the second Update is queued on the row lock.
	testenv.WaitUntil(t, "the second Update waits on the row lock", func() bool {
		return e.count(t, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE%'`) == 1
	})
	once.Do(func() { close(releaseFirst) })

	r1, r2 := testenv.Recv(t, first, "the first Update"), testenv.Recv(t, second, "the second Update")
	if r1.err != nil || r2.err != nil {
		t.Fatalf("errors: first %v, second %v; want both nil", r1.err, r2.err)
	}
	if r1.saw != 1 || r1.a.Version != 2 || r2.saw != 2 || r2.a.Version != 3 {
		t.Fatalf("first saw v%d → v%d, second saw v%d → v%d; want 1 → 2, 2 → 3", r1.saw, r1.a.Version, r2.saw, r2.a.Version)
	}
	// Nothing was lost: the second Update started from the first one's result.
	if r2.a.Title != "first" || r2.a.Body != "second" {
		t.Fatalf("final article %+v, want both changes", r2.a)
	}
	if got := e.getArticle(t, a.Slug); got.Version != 3 || got.Title != "first" || got.Body != "second" {
		t.Fatalf("read after both: %+v", got)
	}
}

// readArticleConcurrently runs n GetBySlug calls at once against a cold cache: the first
// PostgreSQL load is held until every caller has missed, then let go.
func readArticleConcurrently(t *testing.T, e *env, n int, slug string) ([]domain.Article, []error) {
	t.Helper()
	g := testenv.NewGate(t)
	e.q.gate = g
	missesBefore := e.artCache.Stats().Misses.Load()
	var ready, done sync.WaitGroup
	ready.Add(n)
	got, errs := make([]domain.Article, n), make([]error, n)
	for i := range n {
		done.Go(func() {
			ready.Done()
			got[i], errs[i] = e.articles.GetBySlug(t.Context(), slug)
		})
	}
	ready.Wait()
	testenv.Recv(t, g.Entered(), "the first PostgreSQL load to start")
	testenv.WaitUntil(t, fmt.Sprintf("all %d readers missed the cache", n), func() bool {
		return e.artCache.Stats().Misses.Load()-missesBefore == int64(n)
	})
	g.Open()
	done.Wait()
	return got, errs
}

// Acceptance: the article detail cache (the generic read-through helper) loads once per key, caches
// absence, is dropped by every write, is warmed by publishing, and falls back to PostgreSQL when
// Redis is down.
func TestArticleRepository_DetailCache(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)

	t.Run("100 concurrent first reads, 1 load", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{})
		if err := e.rdb.Del(t.Context(), e.artCache.Key(a.Slug)).Err(); err != nil { // undo the publish warm-up
			t.Fatal(err)
		}
		e.q.bySlug.Store(0) // and forget its load
		const n = 100
		got, errs := readArticleConcurrently(t, e, n, a.Slug)
		for i := range n {
			if errs[i] != nil || !sameArticle(got[i], a) {
				t.Fatalf("reader %d: %+v, %v; want %+v", i, got[i], errs[i], a)
			}
		}
		if c := e.q.bySlug.Load(); c != 1 {
			t.Errorf("%d PostgreSQL loads, want 1", c)
		}
		if got := e.getArticle(t, a.Slug); !sameArticle(got, a) || e.q.bySlug.Load() != 1 {
			t.Errorf("read after the fill: %+v, loads %d; want a hit", got, e.q.bySlug.Load())
		}
	})

	t.Run("missing slug read 50 times, 1 load", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		ghost := "ghost-" + testenv.RandomID(4)
		for i := range 50 {
			if _, err := e.articles.GetBySlug(t.Context(), ghost); !errors.Is(err, domain.ErrNotFound) {
				t.Fatalf("read %d: err = %v, want ErrNotFound", i, err)
			}
		}
		if c := e.q.bySlug.Load(); c != 1 {
			t.Errorf("%d PostgreSQL loads, want 1", c)
		}
		if d := e.pttl(t, e.artCache.Key(ghost)); d <= 0 || d > testPolicy.NullTTL+testPolicy.NullTTL/4 {
			t.Errorf("null marker PTTL = %v, want in (0, NullTTL+NullTTL/4]", d)
		}
	})

	t.Run("Create as draft removes a stale null marker", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{}) // NullTTL of a minute: only Create can remove the marker
		slug := "latecomer-" + testenv.RandomID(4)
		if _, err := e.articles.GetBySlug(t.Context(), slug); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
		a := createArticle(t, e, articleOpts{Slug: slug, Status: domain.StatusDraft})
		got, err := e.articles.GetBySlug(t.Context(), slug)
		if err != nil || !sameArticle(got, a) {
			t.Fatalf("read after Create: %+v, %v; want %+v", got, err, a)
		}
		if c := e.q.bySlug.Load(); c != 2 {
			t.Errorf("%d PostgreSQL loads, want 2", c)
		}
	})

	t.Run("Update invalidates", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		for _, st := range []domain.ArticleStatus{domain.StatusDraft, domain.StatusPublished} {
			a := createArticle(t, e, articleOpts{Status: st})
			e.getArticle(t, a.Slug) // cached
			updated, err := e.articles.Update(t.Context(), a.ID, func(cur *domain.Article) error {
				cur.Title = "Retitled"
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if c, ok := e.cachedArticle(t, a.Slug); ok && c.Version != 2 {
				t.Fatalf("%s: cache still holds version %d after Update", st, c.Version)
			}
			if got := e.getArticle(t, a.Slug); !sameArticle(got, updated) {
				t.Fatalf("%s: read after Update: %+v, want %+v", st, got, updated)
			}
		}
	})

	t.Run("Transition invalidates", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{})
		e.getArticle(t, a.Slug)
		moved, err := e.articles.Transition(t.Context(), a.ID, []domain.ArticleStatus{domain.StatusPublished}, domain.StatusWithdrawn)
		if err != nil {
			t.Fatal(err)
		}
		if e.exists(t, e.artCache.Key(a.Slug)) {
			t.Fatal("the entry survived a withdrawal")
		}
		if got := e.getArticle(t, a.Slug); !sameArticle(got, moved) || got.Status != domain.StatusWithdrawn {
			t.Fatalf("read after withdrawing: %+v, want %+v", got, moved)
		}
	})

	t.Run("Delete invalidates", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{})
		e.getArticle(t, a.Slug)
		if err := e.articles.Delete(t.Context(), a); err != nil {
			t.Fatal(err)
		}
		if _, err := e.articles.GetBySlug(t.Context(), a.Slug); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("read after Delete: err = %v, want ErrNotFound", err)
		}
	})

	t.Run("publishing warms the cache", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		a := createArticle(t, e, articleOpts{Status: domain.StatusDraft})
		if e.exists(t, e.artCache.Key(a.Slug)) {
			t.Fatal("a draft was cached on Create")
		}
		e.getArticle(t, a.Slug) // the draft is now cached: publishing must replace it
		published, err := e.articles.Transition(t.Context(), a.ID, []domain.ArticleStatus{domain.StatusDraft}, domain.StatusPublished)
		if err != nil {
			t.Fatal(err)
		}
		c, ok := e.cachedArticle(t, a.Slug)
		if !ok || c.Status != domain.StatusPublished || c.Version != published.Version {
			t.Fatalf("cache after publishing: %+v (present %v), want the published version %d", c, ok, published.Version)
		}
		// publishWarmTTL is 10 minutes, with at most a quarter of it in jitter.
		if d := e.pttl(t, e.artCache.Key(a.Slug)); d < 9*time.Minute || d > 10*time.Minute+10*time.Minute/4 {
			t.Errorf("warmed entry PTTL = %v, want about 10m..12m30s", d)
		}
		loads := e.q.bySlug.Load()
		if got := e.getArticle(t, a.Slug); !sameArticle(got, published) {
			t.Fatalf("read after publishing: %+v, want %+v", got, published)
		}
		if c := e.q.bySlug.Load() - loads; c != 0 {
			t.Errorf("%d PostgreSQL loads after publishing, want 0", c)
		}
	})

	t.Run("Redis down: served from PostgreSQL", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{DeadRedis: true})
		a := createArticle(t, e, articleOpts{})
		const n = 3
		for i := range n {
			if got, err := e.articles.GetBySlug(t.Context(), a.Slug); err != nil || !sameArticle(got, a) {
				t.Fatalf("read %d: %+v, %v; want %+v", i, got, err, a)
			}
		}
		if _, err := e.articles.GetBySlug(t.Context(), "ghost-"+testenv.RandomID(4)); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("missing slug: err = %v, want ErrNotFound", err)
		}
		if c := e.q.bySlug.Load(); c != n+1 {
			t.Errorf("%d PostgreSQL loads, want %d", c, n+1)
		}
		if f := e.artCache.Stats().Fallbacks.Load(); f != n+1 {
			t.Errorf("Stats.Fallbacks = %d, want %d", f, n+1)
		}
		// Writes succeed too; only their cache maintenance fails, and that is logged.
		updated, err := e.articles.Update(t.Context(), a.ID, func(cur *domain.Article) error { cur.Title = "Offline edit"; return nil })
		if err != nil {
			t.Fatal(err)
		}
		if got := e.getArticle(t, a.Slug); !sameArticle(got, updated) {
			t.Fatalf("read after Update: %+v, want %+v", got, updated)
		}
	})
}

// Acceptance: the first page of an author's own list (default limit) is cached per status filter,
// dropped by every write to the author's articles, and serving it (ArticleService.Mine) preloads
// the newest detail.
func TestArticleRepository_AuthorPageCache(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	firstPage := domain.Page{Limit: domain.DefaultPageLimit}

	list := func(t *testing.T, e *env, author int64, status domain.ArticleStatus, p domain.Page) ([]domain.Article, int64) {
		t.Helper()
		arts, total, err := unpage(e.articles.ListByAuthor(t.Context(), author, status, p))
		if err != nil {
			t.Fatalf("ListByAuthor(%d, %q, %+v): %v", author, status, p, err)
		}
		return arts, total
	}

	t.Run("the second first-page read costs no query", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		author := createUser(t, e.users, userOpts{})
		var want []domain.Article
		for i := range 3 {
			a := createArticle(t, e, articleOpts{Author: author, Tags: []string{fmt.Sprint("t", i)}})
			want = append([]domain.Article{summary(a)}, want...) // newest first
		}
		createArticle(t, e, articleOpts{}) // someone else's

		first, total := list(t, e, author.ID, "", firstPage)
		if !sameArticles(first, want) || total != 3 {
			t.Fatalf("first read: %d articles, total %d; want %+v", len(first), total, want)
		}
		if c := e.q.listByAuthor.Load(); c != 1 {
			t.Fatalf("%d list queries after the first read, want 1", c)
		}
		if !e.exists(t, e.pages.Key(author.ID)) {
			t.Fatal("the first page was not cached")
		}
		second, total2 := list(t, e, author.ID, "", firstPage)
		if c, n := e.q.listByAuthor.Load(), e.q.countByAuthor.Load(); c != 1 || n != 1 {
			t.Errorf("%d list and %d count queries after the second read, want 1 and 1", c, n)
		}
		if !sameArticles(second, first) || total2 != total {
			t.Fatalf("cached read: %+v (total %d), want %+v (total %d)", second, total2, first, total)
		}
		for _, a := range second {
			if a.Body != "" {
				t.Fatalf("cached summary %q carries a body", a.Slug)
			}
		}
	})

	t.Run("non-default pages are never cached", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		author := createUser(t, e.users, userOpts{})
		for range 3 {
			createArticle(t, e, articleOpts{Author: author})
		}
		pages := []domain.Page{{Limit: 10}, {Limit: domain.DefaultPageLimit, Offset: 20}, {Limit: domain.DefaultPageLimit, Offset: 1}}
		for _, p := range pages {
			for range 2 {
				list(t, e, author.ID, "", p)
			}
		}
		if c := e.q.listByAuthor.Load(); c != int64(2*len(pages)) {
			t.Errorf("%d list queries, want %d (every read of a non-default page queries)", c, 2*len(pages))
		}
		if e.exists(t, e.pages.Key(author.ID)) {
			t.Error("a non-default page was cached")
		}
		arts, total := list(t, e, author.ID, "", domain.Page{Limit: domain.DefaultPageLimit, Offset: 1})
		if len(arts) != 2 || total != 3 {
			t.Errorf("offset 1: %d articles, total %d; want 2 and 3", len(arts), total)
		}
	})

	t.Run("status filters are cached separately", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		author := createUser(t, e.users, userOpts{})
		pub := createArticle(t, e, articleOpts{Author: author})
		draft := createArticle(t, e, articleOpts{Author: author, Status: domain.StatusDraft})
		want := map[domain.ArticleStatus][]domain.Article{
			"":                     {summary(draft), summary(pub)},
			domain.StatusDraft:     {summary(draft)},
			domain.StatusPublished: {summary(pub)},
			domain.StatusWithdrawn: {},
		}
		for range 2 {
			for st, w := range want {
				if got, total := list(t, e, author.ID, st, firstPage); !sameArticles(got, w) || total != int64(len(w)) {
					t.Fatalf("status %q: %+v (total %d), want %+v", st, got, total, w)
				}
			}
		}
		if c := e.q.listByAuthor.Load(); c != int64(len(want)) {
			t.Errorf("%d list queries for two rounds over %d filters, want %d", c, len(want), len(want))
		}
		fields, err := e.rdb.HKeys(t.Context(), e.pages.Key(author.ID)).Result()
		if err != nil {
			t.Fatal(err)
		}
		fields = slices.DeleteFunc(fields, func(f string) bool { return strings.HasPrefix(f, "_") }) // the fill guard's bookkeeping
		slices.Sort(fields)
		if !slices.Equal(fields, []string{"all", "draft", "published", "withdrawn"}) {
			t.Errorf("cached fields %v", fields)
		}
	})

	t.Run("every write invalidates", func(t *testing.T) {
		t.Parallel()
		writes := []struct {
			name  string
			write func(t *testing.T, e *env, author domain.User, newest domain.Article)
			check func(t *testing.T, before, after []domain.Article, newest domain.Article)
		}{
			{"Create", func(t *testing.T, e *env, author domain.User, _ domain.Article) {
				createArticle(t, e, articleOpts{Author: author, Title: "Brand new", Status: domain.StatusDraft})
			}, func(t *testing.T, before, after []domain.Article, _ domain.Article) {
				if len(after) != len(before)+1 || after[0].Title != "Brand new" {
					t.Errorf("list after Create: %+v", after)
				}
			}},
			{"Update", func(t *testing.T, e *env, _ domain.User, newest domain.Article) {
				if _, err := e.articles.Update(t.Context(), newest.ID, func(a *domain.Article) error { a.Title = "Edited"; return nil }); err != nil {
					t.Fatal(err)
				}
			}, func(t *testing.T, _, after []domain.Article, _ domain.Article) {
				if after[0].Title != "Edited" || after[0].Version != 2 {
					t.Errorf("list after Update: %+v", after[0])
				}
			}},
			{"Transition", func(t *testing.T, e *env, _ domain.User, newest domain.Article) {
				if _, err := e.articles.Transition(t.Context(), newest.ID, []domain.ArticleStatus{domain.StatusPublished}, domain.StatusWithdrawn); err != nil {
					t.Fatal(err)
				}
			}, func(t *testing.T, _, after []domain.Article, _ domain.Article) {
				if after[0].Status != domain.StatusWithdrawn {
					t.Errorf("list after Transition: %+v", after[0])
				}
			}},
			{"Delete", func(t *testing.T, e *env, _ domain.User, newest domain.Article) {
				if err := e.articles.Delete(t.Context(), newest); err != nil {
					t.Fatal(err)
				}
			}, func(t *testing.T, before, after []domain.Article, newest domain.Article) {
				if len(after) != len(before)-1 || after[0].ID == newest.ID {
					t.Errorf("list after Delete: %+v", after)
				}
			}},
		}
		for _, w := range writes {
			t.Run(w.name, func(t *testing.T) {
				t.Parallel()
				e := setup(t, db, envOpts{})
				author := createUser(t, e.users, userOpts{})
				createArticle(t, e, articleOpts{Author: author})
				newest := createArticle(t, e, articleOpts{Author: author})
				before, _ := list(t, e, author.ID, "", firstPage)
				list(t, e, author.ID, domain.StatusPublished, firstPage)
				if !e.exists(t, e.pages.Key(author.ID)) {
					t.Fatal("the first page was not cached")
				}
				w.write(t, e, author, newest)
				if e.exists(t, e.pages.Key(author.ID)) {
					t.Fatalf("the author's cached pages survived %s", w.name)
				}
				queries := e.q.listByAuthor.Load()
				after, total := list(t, e, author.ID, "", firstPage)
				if e.q.listByAuthor.Load() != queries+1 || total != int64(len(after)) {
					t.Errorf("read after %s: not from PostgreSQL, or total %d for %d articles", w.name, total, len(after))
				}
				w.check(t, before, after, newest)
			})
		}
	})

	t.Run("serving the author's first page preloads the newest detail", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		author := createUser(t, e.users, userOpts{})
		createArticle(t, e, articleOpts{Author: author})
		newest := createArticle(t, e, articleOpts{Author: author, Status: domain.StatusDraft}) // drafts are not warmed on Create
		key := e.artCache.Key(newest.Slug)
		if e.exists(t, key) {
			t.Fatal("detail cached before the list was read")
		}
		mine := e.mineWithPreloads(t)
		mine(author.ID, firstPage)
		if d := e.pttl(t, key); d <= 0 || d > preloadTTL+preloadTTL/4 {
			t.Fatalf("preloaded entry PTTL = %v, want in (0, %v]", d, preloadTTL+preloadTTL/4)
		}
		loads := e.q.bySlug.Load()
		if got := e.getArticle(t, newest.Slug); !sameArticle(got, newest) || got.Body == "" {
			t.Fatalf("preloaded detail: %+v, want %+v", got, newest)
		}
		if c := e.q.bySlug.Load() - loads; c != 0 {
			t.Errorf("%d PostgreSQL loads reading the preloaded article, want 0", c)
		}
		// A page served from the cache preloads too.
		if err := e.rdb.Del(t.Context(), key).Err(); err != nil {
			t.Fatal(err)
		}
		mine(author.ID, firstPage)
		if e.q.listByAuthor.Load() != 1 || !e.exists(t, key) {
			t.Errorf("after a cached page: %d list queries, detail cached %v; want 1, true", e.q.listByAuthor.Load(), e.exists(t, key))
		}
		// Other pages are not a sign the newest article is next.
		if err := e.rdb.Del(t.Context(), key).Err(); err != nil {
			t.Fatal(err)
		}
		mine(author.ID, domain.Page{Limit: domain.DefaultPageLimit, Offset: 1})
		mine(author.ID, domain.Page{Limit: 5})
		if e.exists(t, key) {
			t.Error("a page other than the first preloaded the newest detail")
		}
	})

	t.Run("preload does not overwrite an existing entry", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		author := createUser(t, e.users, userOpts{})
		newest := createArticle(t, e, articleOpts{Author: author, Status: domain.StatusDraft})
		e.getArticle(t, newest.Slug) // cached for testPolicy.TTL
		// Change the row behind the cache's back: a preload that overwrote would store this title.
		if _, err := e.pool.Exec(t.Context(), "UPDATE articles SET title = 'changed behind the cache' WHERE id = $1", newest.ID); err != nil {
			t.Fatal(err)
		}
		arts, _ := list(t, e, author.ID, "", firstPage)
		if arts[0].Title != "changed behind the cache" {
			t.Fatalf("list: %+v", arts[0])
		}
		if err := e.articles.Preload(t.Context(), newest.Slug); err != nil {
			t.Fatalf("Preload: %v", err)
		}
		if e.q.bySlug.Load() != 1 {
			t.Fatalf("%d article loads, want 1: the preload must not even load an article that is cached", e.q.bySlug.Load())
		}
		if c, ok := e.cachedArticle(t, newest.Slug); !ok || c.Title != newest.Title {
			t.Errorf("cached entry %+v (present %v): the preload overwrote it", c, ok)
		}
		if d := e.pttl(t, e.artCache.Key(newest.Slug)); d < testPolicy.TTL-time.Minute {
			t.Errorf("entry PTTL = %v: the preload replaced its lifetime", d)
		}
	})

	t.Run("preload of a missing article stores nothing", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		slug := "never-written-" + testenv.RandomID(4)
		if err := e.articles.Preload(t.Context(), slug); err != nil {
			t.Fatalf("Preload: %v", err)
		}
		if e.exists(t, e.artCache.Key(slug)) {
			t.Error("a preload of a missing article left an entry (a null marker would hide its creation)")
		}
	})
}

// mineWithPreloads returns the use case that serves an author's own list (ArticleService.Mine)
// over the env's repositories, with the server's preloader running; each call returns once the
// preloads it asked for have ended.
func (e *env) mineWithPreloads(t *testing.T) func(author int64, p domain.Page) {
	t.Helper()
	pre := job.NewPreloader(job.PreloadConfig{Queue: 8, Workers: 1}, e.articles.Preload, testenv.Logger(t))
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- pre.Run(ctx) }()
	t.Cleanup(func() { // before the Redis cleanup: no preload outlives the test's keys
		cancel()
		if err := testenv.Recv(t, stopped, "the preloader to stop"); err != nil {
			t.Errorf("preloader: %v", err)
		}
	})
	svc := service.NewArticleService(e.articles, e.inter, e.users, e.follows, noReads{}, func() string { return testenv.RandomID(3) }, nil, pre, noBlocks{}, repository.NewUploadReferences(e.pool, e.q), plainRenderer{})
	return func(author int64, p domain.Page) {
		t.Helper()
		if _, err := svc.Mine(t.Context(), author, "", p); err != nil {
			t.Fatalf("Mine(%d, %+v): %v", author, p, err)
		}
		if err := pre.Flush(t.Context()); err != nil {
			t.Fatalf("waiting for the preloads: %v", err)
		}
	}
}

// Acceptance: the tag cloud counts published articles only, most used first, and is cached.
func TestArticleRepository_Tags(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t) // alone: the tag cloud is global to the database
	e := setup(t, db, envOpts{})
	author := createUser(t, e.users, userOpts{})
	for _, tags := range [][]string{{"go", "sql"}, {"go", "redis", "sql"}, {"go"}, {"zebra"}} {
		createArticle(t, e, articleOpts{Author: author, Tags: tags})
	}
	for range 5 {
		createArticle(t, e, articleOpts{Author: author, Status: domain.StatusDraft, Tags: []string{"draftonly", "go"}})
		w := createArticle(t, e, articleOpts{Author: author, Tags: []string{"withdrawnonly"}})
		if _, err := e.articles.Transition(t.Context(), w.ID, []domain.ArticleStatus{domain.StatusPublished}, domain.StatusWithdrawn); err != nil {
			t.Fatal(err)
		}
	}

	want := []string{"go", "sql", "redis", "zebra"} // by use (3, 2, 1, 1), ties by name
	for i := range 3 {
		got, err := e.articles.Tags(t.Context())
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("Tags read %d: %v, %v; want %v", i, got, err, want)
		}
	}
	if c := e.q.tagLists.Load(); c != 1 {
		t.Errorf("%d tag queries for 3 reads, want 1", c)
	}

	for _, tag := range []string{"draftonly", "withdrawnonly"} {
		arts, total, err := unpage(e.articles.ListPublished(t.Context(), service.ArticleQuery{Tag: tag, Page: domain.Page{Limit: 20}}))
		if err != nil || len(arts) != 0 || total != 0 {
			t.Errorf("ListPublished(tag=%s): %d articles, total %d, %v; want none", tag, len(arts), total, err)
		}
	}
	arts, total, err := unpage(e.articles.ListPublished(t.Context(), service.ArticleQuery{Page: domain.Page{Limit: 20}}))
	if err != nil || len(arts) != 4 || total != 4 {
		t.Errorf("ListPublished: %d articles, total %d, %v; want the 4 published", len(arts), total, err)
	}
}

// Acceptance: every committed article write drops the cached tag cloud, so a new tag, or one
// whose last article was withdrawn or deleted, shows on the next read, not after the TTL.
func TestArticleRepository_TagsFollowWrites(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t) // alone: the tag cloud is global to the database
	e := setup(t, db, envOpts{})
	author := createUser(t, e.users, userOpts{})
	tags := func(t *testing.T) []string {
		t.Helper()
		got, err := e.articles.Tags(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	createArticle(t, e, articleOpts{Author: author, Tags: []string{"old"}})
	if got := tags(t); !slices.Equal(got, []string{"old"}) {
		t.Fatalf("tags = %v, want [old]", got)
	}
	fresh := createArticle(t, e, articleOpts{Author: author, Tags: []string{"fresh"}})
	if got := tags(t); !slices.Contains(got, "fresh") {
		t.Fatalf("after publishing a new tag the cloud is %v (served from the cache)", got)
	}
	if _, err := e.articles.Transition(t.Context(), fresh.ID, []domain.ArticleStatus{domain.StatusPublished}, domain.StatusWithdrawn); err != nil {
		t.Fatal(err)
	}
	if got := tags(t); slices.Contains(got, "fresh") {
		t.Fatalf("after withdrawing its only article the cloud is %v", got)
	}
	if _, err := e.articles.Transition(t.Context(), fresh.ID, []domain.ArticleStatus{domain.StatusWithdrawn}, domain.StatusPublished); err != nil {
		t.Fatal(err)
	}
	if got := tags(t); !slices.Contains(got, "fresh") {
		t.Fatalf("after re-publishing the cloud is %v", got)
	}
	if err := e.articles.Delete(t.Context(), fresh); err != nil {
		t.Fatal(err)
	}
	if got := tags(t); !slices.Equal(got, []string{"old"}) {
		t.Fatalf("after deleting the cloud is %v, want [old]", got)
	}
}

// Acceptance: the public list filters by tag, author and favoriting user (alone or combined), its
// total ignores paging, and its keyset cursor walks every item once even through created_at ties.
func TestArticleRepository_ListPublished(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)

	t.Run("filters", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		tag := "tag" + testenv.RandomID(4) // no other subtest uses it
		alice, bob := createUser(t, e.users, userOpts{}), createUser(t, e.users, userOpts{})
		fan := createUser(t, e.users, userOpts{})
		a1 := createArticle(t, e, articleOpts{Author: alice, Tags: []string{tag, "x"}})
		a2 := createArticle(t, e, articleOpts{Author: alice})
		b1 := createArticle(t, e, articleOpts{Author: bob, Tags: []string{"x", tag}})
		b2 := createArticle(t, e, articleOpts{Author: bob, Tags: []string{tag}})
		createArticle(t, e, articleOpts{Author: alice, Tags: []string{tag}, Status: domain.StatusDraft})
		for _, a := range []domain.Article{a1, b1, a2} {
			if err := e.inter.Like(t.Context(), domain.BizArticle, a.ID, fan.ID); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.inter.Unlike(t.Context(), domain.BizArticle, a2.ID, fan.ID); err != nil { // a like taken back
			t.Fatal(err)
		}
		cases := []struct {
			name string
			q    service.ArticleQuery
			want []domain.Article // newest first
		}{
			{"tag", service.ArticleQuery{Tag: tag}, []domain.Article{b2, b1, a1}},
			{"author", service.ArticleQuery{AuthorID: alice.ID}, []domain.Article{a2, a1}},
			{"favorited", service.ArticleQuery{FavoritedBy: fan.ID}, []domain.Article{b1, a1}},
			{"tag and author", service.ArticleQuery{Tag: tag, AuthorID: bob.ID}, []domain.Article{b2, b1}},
			{"tag and favorited", service.ArticleQuery{Tag: tag, FavoritedBy: fan.ID}, []domain.Article{b1, a1}},
			{"all three", service.ArticleQuery{Tag: tag, AuthorID: alice.ID, FavoritedBy: fan.ID}, []domain.Article{a1}},
			{"nobody's favorites", service.ArticleQuery{FavoritedBy: alice.ID}, nil},
		}
		for _, c := range cases {
			q := c.q
			q.Page = domain.Page{Limit: 20}
			arts, total, err := unpage(e.articles.ListPublished(t.Context(), q))
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			want := make([]domain.Article, len(c.want)) // lists carry summaries, no bodies
			for i, a := range c.want {
				want[i] = summary(a)
			}
			if !sameArticles(arts, want) || total != int64(len(want)) {
				t.Errorf("%s: got %v (total %d), want %v", c.name, slugs(arts), total, slugs(want))
			}
			// The total ignores paging.
			q.Page = domain.Page{Limit: 1, Offset: 1}
			page, total, err := unpage(e.articles.ListPublished(t.Context(), q))
			if err != nil || total != int64(len(want)) || len(page) != min(1, max(len(want)-1, 0)) {
				t.Errorf("%s, second page of 1: %v (total %d), %v", c.name, slugs(page), total, err)
			}
		}
	})

	t.Run("keyset cursor walks ties on created_at", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		author := createUser(t, e.users, userOpts{})
		const n = 9
		ids := make([]int64, n)
		for i := range n {
			ids[i] = createArticle(t, e, articleOpts{Author: author}).ID
		}
		createArticle(t, e, articleOpts{Author: author, Status: domain.StatusDraft}) // never listed
		// Three groups of three articles share a created_at each; the groups are a second apart.
		base := time.Now().Add(-time.Hour).Truncate(time.Second)
		for i, id := range ids {
			if _, err := e.pool.Exec(t.Context(), "UPDATE articles SET created_at = $1 WHERE id = $2",
				base.Add(time.Duration(i/3)*time.Second), id); err != nil {
				t.Fatal(err)
			}
		}
		var want []int64 // created_at DESC, id DESC
		for g := n/3 - 1; g >= 0; g-- {
			group := slices.Clone(ids[g*3 : g*3+3])
			slices.Sort(group)
			slices.Reverse(group)
			want = append(want, group...)
		}

		var walked []int64
		p := domain.Page{Limit: 2}
		for pages := 0; ; pages++ {
			if pages > n {
				t.Fatalf("still walking after %d pages: %v", pages, walked)
			}
			arts, total, err := unpage(e.articles.ListPublished(t.Context(), service.ArticleQuery{AuthorID: author.ID, Page: p}))
			if err != nil {
				t.Fatal(err)
			}
			if total != n {
				t.Fatalf("page %d: total %d, want %d", pages, total, n)
			}
			for _, a := range arts {
				walked = append(walked, a.ID)
			}
			if len(arts) < p.Limit {
				break
			}
			last := arts[len(arts)-1]
			p = domain.Page{Limit: 2, Cursor: &domain.Cursor{CreatedAt: last.CreatedAt, ID: last.ID}}
		}
		if !slices.Equal(walked, want) {
			t.Fatalf("walked %v, want %v (each once, newest first, ties by id)", walked, want)
		}
	})

	t.Run("a cursor overrides the offset", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		author := createUser(t, e.users, userOpts{})
		var all []domain.Article
		for range 4 {
			all = append([]domain.Article{createArticle(t, e, articleOpts{Author: author})}, all...)
		}
		c := &domain.Cursor{CreatedAt: all[0].CreatedAt, ID: all[0].ID}
		arts, _, err := unpage(e.articles.ListPublished(t.Context(), service.ArticleQuery{AuthorID: author.ID, Page: domain.Page{Limit: 10, Offset: 2, Cursor: c}}))
		if err != nil || len(arts) != 3 || arts[0].ID != all[1].ID {
			t.Fatalf("cursor after the newest, offset 2: %v, %v; want the other 3", slugs(arts), err)
		}
	})
}

func slugs(arts []domain.Article) []string {
	out := make([]string, len(arts))
	for i, a := range arts {
		out[i] = a.Slug
	}
	return out
}

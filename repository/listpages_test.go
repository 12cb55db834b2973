package repository_test

import (
	"slices"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/service"
)

// The global and per-tag first pages are served from the cache, and every write that changes
// them shows on the next read: publish, a tag edit (on the old tag's page and the new one's),
// withdraw and delete.
func TestArticleRepository_FirstPagesFollowTheWrites(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{})
	ctx := t.Context()
	author := createUser(t, e.users, userOpts{})
	first := domain.Page{Limit: domain.DefaultPageLimit}
	page := func(tag string) ([]string, int64) {
		t.Helper()
		arts, total, err := unpage(e.articles.ListPublished(ctx, service.ArticleQuery{Tag: tag, Page: first}))
		if err != nil {
			t.Fatal(err)
		}
		return slugs(arts), total
	}
	requirePage := func(tag string, want ...string) {
		t.Helper()
		got, total := page(tag)
		if !slices.Equal(got, want) || total != int64(len(want)) {
			t.Fatalf("first page of %q = %v (articlesCount %d), want %v", tag, got, total, want)
		}
	}
	a, err := e.articles.Create(ctx, domain.Article{Slug: "first-" + testenv.RandomID(4), AuthorID: author.ID,
		Title: "t", Description: "d", Body: "b", Tags: []string{"go"}, Status: domain.StatusPublished})
	if err != nil {
		t.Fatal(err)
	}
	requirePage("", a.Slug)
	requirePage("go", a.Slug)
	listQueries := e.q.listPublished.Load()
	requirePage("", a.Slug)
	requirePage("go", a.Slug)
	if n := e.q.listPublished.Load() - listQueries; n != 0 {
		t.Fatalf("cached first pages ran %d list queries", n)
	}

	b, err := e.articles.Create(ctx, domain.Article{Slug: "second-" + testenv.RandomID(4), AuthorID: author.ID,
		Title: "t", Description: "d", Body: "b", Tags: []string{"go"}, Status: domain.StatusDraft})
	if err != nil {
		t.Fatal(err)
	}
	requirePage("", a.Slug) // a draft is on no list
	if _, err := e.articles.Transition(ctx, b.ID, []domain.ArticleStatus{domain.StatusDraft}, domain.StatusPublished); err != nil {
		t.Fatal(err)
	}
	requirePage("", b.Slug, a.Slug)
	requirePage("go", b.Slug, a.Slug)

	if _, err := e.articles.Update(ctx, a.ID, func(art *domain.Article) error { art.Tags = []string{"sql"}; return nil }); err != nil {
		t.Fatal(err)
	}
	requirePage("go", b.Slug)
	requirePage("sql", a.Slug)

	if _, err := e.articles.Transition(ctx, b.ID, []domain.ArticleStatus{domain.StatusPublished}, domain.StatusWithdrawn); err != nil {
		t.Fatal(err)
	}
	requirePage("", a.Slug)
	requirePage("go")
	a, err = e.articles.GetBySlug(ctx, a.Slug)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.articles.Delete(ctx, a); err != nil {
		t.Fatal(err)
	}
	requirePage("")
	requirePage("sql")
}

// A reader's first feed page is cached under the feed's stamp: reading it again runs no SQL at
// all, and every change of what it shows (a followed author publishing, retitling or
// withdrawing, a follow or an unfollow) shows on the next read.
func TestArticleRepository_FeedFirstPageFollowsTheWrites(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{})
	ctx := t.Context()
	reader, alice, bob := createUser(t, e.users, userOpts{}), createUser(t, e.users, userOpts{}), createUser(t, e.users, userOpts{})
	first := domain.Page{Limit: domain.DefaultPageLimit}
	requireFeed := func(want ...string) []domain.Article {
		t.Helper()
		arts, total, err := unpage(e.articles.Feed(ctx, reader.ID, first))
		if err != nil {
			t.Fatal(err)
		}
		if got := slugs(arts); !slices.Equal(got, want) || total != int64(len(want)) {
			t.Fatalf("feed = %v (articlesCount %d), want %v", got, total, want)
		}
		return arts
	}
	publish := func(author domain.User) domain.Article {
		t.Helper()
		a, err := e.articles.Create(ctx, domain.Article{Slug: "feed-" + testenv.RandomID(5), AuthorID: author.ID,
			Title: "t", Description: "d", Body: "b", Tags: []string{}, Status: domain.StatusPublished})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a1 := publish(alice)
	b1 := publish(bob)
	requireFeed()
	if err := e.follows.Follow(ctx, reader.ID, alice.ID); err != nil {
		t.Fatal(err)
	}
	requireFeed(a1.Slug)
	sql := func() int64 { return e.q.feedPages.Load() + e.q.feedCounts.Load() + e.q.followLists.Load() }
	before := sql()
	requireFeed(a1.Slug)
	if n := sql() - before; n != 0 {
		t.Fatalf("the cached first feed page ran %d queries", n)
	}
	a2 := publish(alice)
	requireFeed(a2.Slug, a1.Slug)
	if _, err := e.articles.Update(ctx, a1.ID, func(a *domain.Article) error { a.Title = "Retitled"; return nil }); err != nil {
		t.Fatal(err)
	}
	if arts := requireFeed(a2.Slug, a1.Slug); arts[1].Title != "Retitled" {
		t.Fatalf("feed shows title %q after the edit", arts[1].Title)
	}
	if _, err := e.articles.Transition(ctx, a2.ID, []domain.ArticleStatus{domain.StatusPublished}, domain.StatusWithdrawn); err != nil {
		t.Fatal(err)
	}
	requireFeed(a1.Slug)
	if err := e.follows.Follow(ctx, reader.ID, bob.ID); err != nil {
		t.Fatal(err)
	}
	requireFeed(b1.Slug, a1.Slug)
	if err := e.follows.Unfollow(ctx, reader.ID, alice.ID); err != nil {
		t.Fatal(err)
	}
	requireFeed(b1.Slug)

	// Redis loses the authors' tokens (evicted, or restarted empty but for the page) while an
	// article changes behind every cache's back: a lost token is replaced by a new one, never
	// rebuilt, so the page filed under the old stamp is not served again.
	requireFeed(b1.Slug)
	tokens, err := testenv.ScanKeys(ctx, e.rdb, e.ks.Key("feed", "token", "*"))
	if err != nil || len(tokens) == 0 {
		t.Fatalf("the authors' tokens: %v, %v", tokens, err)
	}
	if err := e.rdb.Del(ctx, tokens...).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pool.Exec(ctx, "UPDATE articles SET title = 'Behind the cache' WHERE id = $1", b1.ID); err != nil {
		t.Fatal(err)
	}
	if arts := requireFeed(b1.Slug); arts[0].Title != "Behind the cache" {
		t.Fatalf("feed shows title %q after the tokens were lost: an old page came back", arts[0].Title)
	}
}

// With Redis unreachable the feed's first page comes from PostgreSQL, exact.
func TestArticleRepository_FeedWithoutRedis(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{DeadRedis: true})
	ctx := t.Context()
	reader, alice := createUser(t, e.users, userOpts{}), createUser(t, e.users, userOpts{})
	a, err := e.articles.Create(ctx, domain.Article{Slug: "feed-" + testenv.RandomID(5), AuthorID: alice.ID,
		Title: "t", Description: "d", Body: "b", Tags: []string{}, Status: domain.StatusPublished})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.follows.Follow(ctx, reader.ID, alice.ID); err != nil {
		t.Fatal(err)
	}
	arts, total, err := unpage(e.articles.Feed(ctx, reader.ID, domain.Page{Limit: domain.DefaultPageLimit}))
	if err != nil || total != 1 || !slices.Equal(slugs(arts), []string{a.Slug}) {
		t.Fatalf("feed without Redis = %v (articlesCount %d), %v; want [%s], 1", slugs(arts), total, err, a.Slug)
	}
}

package repository_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/service"
)

// statementCounter is a pgx.QueryTracer that records every statement sent through its pool.
type statementCounter struct {
	mu   sync.Mutex
	sqls []string
}

func (c *statementCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	sql := data.SQL
	if name, _, ok := strings.Cut(strings.TrimPrefix(sql, "-- name: "), " "); ok && strings.HasPrefix(sql, "-- name: ") {
		sql = name // sqlc's queries start with their name
	}
	c.sqls = append(c.sqls, sql)
	return ctx
}

func (c *statementCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// measure returns the statements run by fn.
func (c *statementCounter) measure(fn func()) []string {
	c.mu.Lock()
	c.sqls = nil
	c.mu.Unlock()
	fn()
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.sqls...)
}

// tracedPool opens a pool on db whose every statement passes through a statementCounter.
func tracedPool(t *testing.T, db *testenv.DB) (*pgxpool.Pool, *statementCounter) {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	counter := &statementCounter{}
	cfg.ConnConfig.Tracer = counter
	testenv.LimitPool(cfg) // under the tests' shared connection budget
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close) // runs before the database is dropped
	return pool, counter
}

// Acceptance: a page of the public list or of the feed costs a fixed number of statements,
// whatever the number of articles on it: authors, counters, follows and likes are each fetched in
// one batch, never per article.
func TestArticleService_ListsAreBatched(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t) // alone: the public list spans the whole database
	pool, counter := tracedPool(t, db)
	e := setup(t, db, envOpts{Pool: pool})
	svc := service.NewArticleService(e.articles, e.inter, e.users, e.follows, noReads{}, func() string { return testenv.RandomID(3) }, nil, noPreloads{}, noBlocks{}, repository.NewUploadReferences(e.pool, e.q), plainRenderer{})

	viewer := createUser(t, e.users, userOpts{})
	authors := make([]domain.User, 4)
	for i := range authors {
		authors[i] = createUser(t, e.users, userOpts{})
		if i < 3 { // the viewer follows three of the four
			if err := e.follows.Follow(t.Context(), viewer.ID, authors[i].ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	fans := []domain.User{createUser(t, e.users, userOpts{}), createUser(t, e.users, userOpts{})}
	var created int
	want := expectedViews{followed: map[int64]bool{}, authors: map[int64]string{}, liked: map[int64]bool{}, likes: map[int64]int64{}}
	for i, u := range authors {
		want.followed[u.ID] = i < 3
		want.authors[u.ID] = u.Username
	}
	addArticles := func(n int) {
		for range n {
			author := authors[created%3]
			if created == 1 {
				author = authors[3] // the one the viewer does not follow
			}
			a := createArticle(t, e, articleOpts{Author: author, Tags: []string{"t"}})
			if created%2 == 0 {
				e.like(t, a.ID, viewer.ID)
				want.liked[a.ID] = true
				want.likes[a.ID]++
			}
			if created%3 == 0 {
				e.like(t, a.ID, fans[created%2].ID)
				want.likes[a.ID]++
			}
			created++
		}
	}
	page := domain.Page{Limit: 20}
	type run struct {
		articles   int
		statements []string
	}
	// Each measurement starts from cold counter hashes, authors and viewer flags, so it pays for
	// loading them.
	coldCounters := func(t *testing.T) {
		t.Helper()
		keys, err := testenv.ScanKeys(t.Context(), e.rdb, e.ks.Key("counters", "*")) // every master of a cluster
		if err != nil {
			t.Fatal(err)
		}
		users, err := testenv.ScanKeys(t.Context(), e.rdb, e.ks.Key("user", "*"))
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, users...)
		flags, err := testenv.ScanKeys(t.Context(), e.rdb, e.ks.Key("viewer", "*"))
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, flags...)
		feed, err := testenv.ScanKeys(t.Context(), e.rdb, e.ks.Key("feed", "*")) // the follow list
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, feed...)
		for _, k := range keys {
			if err := e.rdb.Del(t.Context(), k).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	measureList := func(t *testing.T) run {
		coldCounters(t)
		var out service.ArticleList
		stmts := counter.measure(func() {
			var err error
			if out, err = svc.List(t.Context(), viewer.ID, service.ListInput{Page: page}); err != nil {
				t.Fatal(err)
			}
		})
		want.check(t, out.Articles)
		return run{len(out.Articles), stmts}
	}
	measureFeed := func(t *testing.T) run {
		coldCounters(t)
		var out service.ArticleList
		stmts := counter.measure(func() {
			var err error
			if out, err = svc.Feed(t.Context(), viewer.ID, page); err != nil {
				t.Fatal(err)
			}
		})
		want.check(t, out.Articles)
		for _, v := range out.Articles {
			if !v.Author.Following {
				t.Fatalf("feed shows %q by %s, whom the viewer does not follow", v.Slug, v.Author.Username)
			}
		}
		return run{len(out.Articles), stmts}
	}

	addArticles(5)
	list5, feed5 := measureList(t), measureFeed(t)
	addArticles(20)
	list25, feed25 := measureList(t), measureFeed(t)

	for _, c := range []struct {
		name        string
		small, full run
		wantSmall   int
		most        int
	}{
		{"List", list5, list25, 5, 7},
		// 4 of the first 5 are by followed authors; cold, the feed also loads the follow list its
		// stamp is made from.
		{"Feed", feed5, feed25, 4, 8},
	} {
		t.Logf("%s: %d articles in %d statements %v; %d articles in %d statements %v", c.name,
			c.small.articles, len(c.small.statements), c.small.statements, c.full.articles, len(c.full.statements), c.full.statements)
		if c.small.articles != c.wantSmall || c.full.articles != 20 {
			t.Errorf("%s: pages of %d and %d articles, want %d and 20", c.name, c.small.articles, c.full.articles, c.wantSmall)
		}
		if !slices.Equal(c.small.statements, c.full.statements) {
			t.Errorf("%s: %d statements for %d articles but %d for %d: some query runs per article",
				c.name, len(c.small.statements), c.small.articles, len(c.full.statements), c.full.articles)
		}
		if n := len(c.full.statements); n > c.most {
			t.Errorf("%s: %d statements for one page, want at most %d", c.name, n, c.most)
		}
	}
}

// expectedViews is what the views of a page must carry, as PostgreSQL has it.
type expectedViews struct {
	followed map[int64]bool   // author id → the viewer follows them
	authors  map[int64]string // author id → username
	liked    map[int64]bool   // article id → the viewer likes it
	likes    map[int64]int64  // article id → like count
}

func (w expectedViews) check(t *testing.T, views []domain.ArticleView) {
	t.Helper()
	for _, v := range views {
		if v.Author.Username != w.authors[v.AuthorID] || v.Author.Following != w.followed[v.AuthorID] {
			t.Fatalf("%q: author %+v, want %s with following=%v", v.Slug, v.Author, w.authors[v.AuthorID], w.followed[v.AuthorID])
		}
		if v.Favorited != w.liked[v.ID] || v.Counters.Likes != w.likes[v.ID] || v.Body != "" {
			t.Fatalf("%q: favorited %v, %d likes, body %q; want %v, %d, no body (lists are summaries)", v.Slug, v.Favorited, v.Counters.Likes, v.Body, w.liked[v.ID], w.likes[v.ID])
		}
	}
}

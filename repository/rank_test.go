package repository_test

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
)

// The ranking repository reads articles and counters straight from PostgreSQL. The subtests share
// one database; each works in a time window of its own (far in the future, where nothing else
// is), bounded above by a starting cursor and below by since, so they never see each other's rows.

// rankQuerier counts the ranking queries.
type rankQuerier struct {
	dao.Querier
	scans, likes, summaries atomic.Int64
}

func (q *rankQuerier) ArticleRankScan(ctx context.Context, db dao.DBTX, arg dao.ArticleRankScanParams) ([]dao.ArticleRankScanRow, error) {
	q.scans.Add(1)
	return q.Querier.ArticleRankScan(ctx, db, arg)
}

func (q *rankQuerier) InteractiveLikesMany(ctx context.Context, db dao.DBTX, arg dao.InteractiveLikesManyParams) ([]dao.InteractiveLikesManyRow, error) {
	q.likes.Add(1)
	return q.Querier.InteractiveLikesMany(ctx, db, arg)
}

func (q *rankQuerier) ArticleSummariesByIDs(ctx context.Context, db dao.DBTX, ids []int64) ([]dao.ArticleSummariesByIDsRow, error) {
	q.summaries.Add(1)
	return q.Querier.ArticleSummariesByIDs(ctx, db, ids)
}

type rankEnv struct {
	db     *testenv.DB
	q      *rankQuerier
	repo   *repository.RankRepository
	author int64
}

func newRankEnv(t *testing.T, db *testenv.DB) *rankEnv {
	t.Helper()
	q := &rankQuerier{Querier: dao.New()}
	e := &rankEnv{db: db, q: q, repo: repository.NewRankRepository(db.Pool, q)}
	name := uniqueName("ranked")
	if err := db.Pool.QueryRow(t.Context(),
		`INSERT INTO users (email, username, password_hash) VALUES ($1, $2, 'x') RETURNING id`,
		name+"@example.com", name).Scan(&e.author); err != nil {
		t.Fatalf("insert user: %v", err)
	}
	return e
}

// rankArticle is an article row to insert.
type rankArticle struct {
	Status      domain.ArticleStatus // empty: published
	PublishedAt *time.Time           // nil: not published (NULL)
	Tags        []string
}

// insert writes the article straight into the table and returns its id.
func (e *rankEnv) insert(t *testing.T, a rankArticle) int64 {
	t.Helper()
	if a.Status == "" {
		a.Status = domain.StatusPublished
	}
	if a.Tags == nil {
		a.Tags = []string{}
	}
	slug := "ranked-" + testenv.RandomID(6)
	var id int64
	if err := e.db.Pool.QueryRow(t.Context(), `
		INSERT INTO articles (slug, author_id, title, description, body, tag_list, status, published_at)
		VALUES ($1, $2, 'Title of ' || $1, 'About ' || $1, 'The body of ' || $1, $3, $4, $5) RETURNING id`,
		slug, e.author, a.Tags, string(a.Status), a.PublishedAt).Scan(&id); err != nil {
		t.Fatalf("insert article: %v", err)
	}
	return id
}

func (e *rankEnv) setLikes(t *testing.T, biz string, id, likes int64) {
	t.Helper()
	if _, err := e.db.Pool.Exec(t.Context(),
		`INSERT INTO interactives (biz, biz_id, like_cnt, read_cnt) VALUES ($1, $2, $3, 7)`, biz, id, likes); err != nil {
		t.Fatalf("insert counters: %v", err)
	}
}

// startAt is the keyset position just above every article published before end.
func startAt(end time.Time) *domain.Cursor { return &domain.Cursor{CreatedAt: end, ID: math.MaxInt64} }

// scanAll pages through the window as the ranking pass does, failing on a page larger than
// limit, and returns the candidates in the order read and the number of queries.
func (e *rankEnv) scanAll(t *testing.T, since time.Time, after *domain.Cursor, limit int) ([]domain.Candidate, int) {
	t.Helper()
	var all []domain.Candidate
	pages := 0
	for {
		page, err := e.repo.ScanPublished(t.Context(), since, after, limit)
		if err != nil {
			t.Fatalf("ScanPublished: %v", err)
		}
		pages++
		if len(page) > limit {
			t.Fatalf("page of %d, limit %d", len(page), limit)
		}
		all = append(all, page...)
		if len(page) < limit {
			return all, pages
		}
		last := page[len(page)-1]
		after = &domain.Cursor{CreatedAt: last.PublishedAt, ID: last.ID}
		if pages > 10_000 {
			t.Fatal("the scan does not end")
		}
	}
}

func candidateIDs(cs []domain.Candidate) []int64 {
	out := make([]int64, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func TestRankRepository(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)

	t.Run("pages newest first by (published_at, id), ties included, without duplicates or gaps", func(t *testing.T) {
		t.Parallel()
		e := newRankEnv(t, db)
		// The latest window of all, so a scan without a cursor starts in it.
		base := time.Date(2400, 1, 1, 0, 0, 0, 0, time.UTC)
		instants := []time.Time{
			base.Add(123456 * time.Microsecond), base.Add(time.Hour), base.Add(time.Hour + time.Microsecond),
			base.Add(2 * time.Hour), base.Add(3*time.Hour + 999999*time.Microsecond),
		}
		type row struct {
			id int64
			at time.Time
		}
		var want []row
		for i := range 23 { // several articles share each instant
			at := instants[(i*7)%len(instants)]
			want = append(want, row{e.insert(t, rankArticle{PublishedAt: &at}), at})
		}
		slices.SortFunc(want, func(a, b row) int {
			if c := b.at.Compare(a.at); c != 0 {
				return c
			}
			return cmp.Compare(b.id, a.id)
		})
		wantIDs := make([]int64, len(want))
		for i, r := range want {
			wantIDs[i] = r.id
		}
		for _, limit := range []int{1, 2, 3, 4, 5, 22, 23, 24, 100} {
			for _, start := range []struct {
				name  string
				after *domain.Cursor
			}{{"no cursor", nil}, {"a cursor above the window", startAt(base.Add(24 * time.Hour))}} {
				got, pages := e.scanAll(t, base, start.after, limit)
				if !slices.Equal(candidateIDs(got), wantIDs) {
					t.Fatalf("limit %d, %s: scanned %v, want %v", limit, start.name, candidateIDs(got), wantIDs)
				}
				for i, c := range got {
					if !c.PublishedAt.Equal(want[i].at) {
						t.Fatalf("limit %d: candidate %d published at %v, want %v", limit, c.ID, c.PublishedAt, want[i].at)
					}
				}
				if wantPages := len(want)/limit + 1; pages != wantPages {
					t.Fatalf("limit %d: %d queries, want %d", limit, pages, wantPages)
				}
			}
		}
	})

	t.Run("only published articles at or after since", func(t *testing.T) {
		t.Parallel()
		e := newRankEnv(t, db)
		since := time.Date(2300, 6, 1, 0, 0, 0, 0, time.UTC)
		at := func(d time.Duration) *time.Time { v := since.Add(d); return &v }
		onTheCutoff := e.insert(t, rankArticle{PublishedAt: at(0)})
		inside := e.insert(t, rankArticle{PublishedAt: at(5 * time.Hour)})
		e.insert(t, rankArticle{PublishedAt: at(-time.Microsecond)})                             // a moment too old
		e.insert(t, rankArticle{PublishedAt: at(-30 * 24 * time.Hour)})                          // long too old
		e.insert(t, rankArticle{Status: domain.StatusDraft})                                     // never published
		e.insert(t, rankArticle{Status: domain.StatusWithdrawn, PublishedAt: at(2 * time.Hour)}) // published, then withdrawn
		e.insert(t, rankArticle{Status: domain.StatusDraft, PublishedAt: at(3 * time.Hour)})     // back to draft
		got, _ := e.scanAll(t, since, startAt(since.Add(24*time.Hour)), 10)
		if want := []int64{inside, onTheCutoff}; !slices.Equal(candidateIDs(got), want) {
			t.Fatalf("scanned %v, want %v", candidateIDs(got), want)
		}
	})

	t.Run("an empty window is an empty page", func(t *testing.T) {
		t.Parallel()
		e := newRankEnv(t, db)
		since := time.Date(2350, 1, 1, 0, 0, 0, 0, time.UTC)
		page, err := e.repo.ScanPublished(t.Context(), since, startAt(since.Add(time.Hour)), 10)
		if err != nil || len(page) != 0 {
			t.Fatalf("ScanPublished = %v, %v; want an empty page", page, err)
		}
	})

	t.Run("like counts of a batch in one query", func(t *testing.T) {
		t.Parallel()
		e := newRankEnv(t, db)
		liked := e.insert(t, rankArticle{PublishedAt: nowPtr()})
		unliked := e.insert(t, rankArticle{PublishedAt: nowPtr()})
		noCounters := e.insert(t, rankArticle{PublishedAt: nowPtr()})
		otherBiz := e.insert(t, rankArticle{PublishedAt: nowPtr()})
		e.setLikes(t, "article", liked, 42)
		e.setLikes(t, "article", unliked, 0)
		e.setLikes(t, "comment", otherBiz, 9) // another kind of item with the same id
		// Many ids, as a real batch has, still cost one query.
		ids := []int64{liked, unliked, noCounters, otherBiz}
		for i := range 2000 {
			ids = append(ids, -int64(i)-1)
		}
		got, err := e.repo.LikeCounts(t.Context(), ids)
		if err != nil {
			t.Fatalf("LikeCounts: %v", err)
		}
		want := map[int64]int64{liked: 42, unliked: 0}
		if len(got) != len(want) || got[liked] != 42 || got[unliked] != 0 {
			t.Fatalf("LikeCounts = %v, want %v", got, want)
		}
		if _, ok := got[otherBiz]; ok {
			t.Fatalf("LikeCounts counted another kind of item: %v", got)
		}
		if n := e.q.likes.Load(); n != 1 {
			t.Fatalf("%d queries, want 1", n)
		}
		// No ids, no query.
		if got, err := e.repo.LikeCounts(t.Context(), nil); err != nil || got == nil || len(got) != 0 {
			t.Fatalf("LikeCounts(nil) = %v, %v; want an empty map", got, err)
		}
		if n := e.q.likes.Load(); n != 1 {
			t.Fatalf("LikeCounts(nil) queried: %d queries", n)
		}
	})

	t.Run("summaries of the winners in one query, without bodies", func(t *testing.T) {
		t.Parallel()
		e := newRankEnv(t, db)
		p := time.Now().UTC().Truncate(time.Microsecond)
		a := e.insert(t, rankArticle{PublishedAt: &p, Tags: []string{"go", "ranking"}})
		b := e.insert(t, rankArticle{PublishedAt: &p})
		got, err := e.repo.Summaries(t.Context(), []int64{b, a, -1})
		if err != nil {
			t.Fatalf("Summaries: %v", err)
		}
		if n := e.q.summaries.Load(); n != 1 {
			t.Fatalf("%d queries, want 1", n)
		}
		slices.SortFunc(got, func(x, y domain.Article) int { return cmp.Compare(x.ID, y.ID) })
		if len(got) != 2 || got[0].ID != a || got[1].ID != b {
			t.Fatalf("Summaries = %+v, want articles %d and %d only", got, a, b)
		}
		s := got[0]
		if s.Body != "" || s.AuthorID != e.author || s.Status != domain.StatusPublished || s.Version != 1 ||
			!slices.Equal(s.Tags, []string{"go", "ranking"}) || s.Slug == "" || s.Title != "Title of "+s.Slug ||
			s.Description != "About "+s.Slug || s.PublishedAt == nil || !s.PublishedAt.Equal(p) || s.CreatedAt.IsZero() {
			t.Fatalf("summary %+v", s)
		}
		if got[1].Tags == nil {
			t.Fatal("an article without tags has nil Tags; want an empty list")
		}
		if got, err := e.repo.Summaries(t.Context(), nil); err != nil || len(got) != 0 {
			t.Fatalf("Summaries(nil) = %v, %v", got, err)
		}
		if n := e.q.summaries.Load(); n != 1 {
			t.Fatalf("Summaries(nil) queried: %d queries", n)
		}
	})
}

// The scan stays a range read of the ranking index whatever the plan cache does: pgx prepares
// statements, and a generic plan must keep the keyset bound as an index condition (a filter would
// read every newer row again for each batch: quadratic in the window).
func TestRankRepository_GenericPlanBoundsTheIndexByTheCursor(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	ctx := t.Context()
	conn, err := db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		_, _ = conn.Exec(context.Background(), "DISCARD ALL") // the settings and the statement go with the test
		conn.Release()
	}()
	for _, sql := range []string{
		"SET plan_cache_mode = force_generic_plan",
		"SET enable_seqscan = off", // an empty table would otherwise be read whole, as is cheapest
		"SET enable_sort = off",
		"PREPARE rank_scan AS " + rankScanSQL(t),
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	var plan strings.Builder
	for _, args := range []string{"(now(), now(), 1, 100)", "(now(), NULL, NULL, 100)"} {
		rows, err := conn.Query(ctx, "EXPLAIN EXECUTE rank_scan"+args)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan.WriteString(line + "\n")
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	p := plan.String()
	if strings.Count(p, "Index Only Scan using articles_published_at_idx") != 2 || strings.Count(p, "ROW(published_at, id) < ROW(") != 2 ||
		strings.Contains(p, "Filter") {
		t.Fatalf("the generic plan of the ranking scan does not bound the index by the cursor:\n%s", p)
	}
}

// sqlCapture is a DBTX that records the SQL it is given and runs nothing.
type sqlCapture struct{ sql *string }

func (c sqlCapture) Exec(_ context.Context, sql string, _ ...any) (pgconn.CommandTag, error) {
	*c.sql = sql
	return pgconn.CommandTag{}, errCaptured
}

func (c sqlCapture) Query(_ context.Context, sql string, _ ...any) (pgx.Rows, error) {
	*c.sql = sql
	return nil, errCaptured
}

func (c sqlCapture) QueryRow(_ context.Context, sql string, _ ...any) pgx.Row {
	*c.sql = sql
	return capturedRow{}
}

// capturedRow is the row of a query that was captured, not run.
type capturedRow struct{}

func (capturedRow) Scan(...any) error { return errCaptured }

var errCaptured = errors.New("captured, not run")

// rankScanSQL is the scan's SQL as sqlc generated it.
func rankScanSQL(t *testing.T) string {
	t.Helper()
	return captureSQL(t, func(c dao.DBTX) { _, _ = dao.New().ArticleRankScan(t.Context(), c, dao.ArticleRankScanParams{}) })
}

func nowPtr() *time.Time {
	v := time.Now()
	return &v
}

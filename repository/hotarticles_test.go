package repository_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository"
)

// ranking is a ranking of n articles whose ids start at first, best first, ranked at at (to the
// microsecond, as PostgreSQL keeps it).
func ranking(first int64, n int, at time.Time) domain.Ranking {
	r := domain.Ranking{Entries: make([]domain.Scored, n), RankedAt: at.UTC().Truncate(time.Microsecond)}
	for i := range n {
		r.Entries[i] = domain.Scored{ID: first + int64(i), Likes: int64(10*n - i), Score: float64(n-i) + 0.25}
	}
	return r
}

func replace(t *testing.T, s *repository.HotArticleStore, r domain.Ranking) {
	t.Helper()
	if err := s.Replace(t.Context(), r.RankedAt, r.Entries); err != nil {
		t.Fatalf("Replace(%d articles): %v", len(r.Entries), err)
	}
}

func requireLatest(t *testing.T, s *repository.HotArticleStore, want domain.Ranking) {
	t.Helper()
	got, err := s.Latest(t.Context())
	if err != nil {
		t.Fatalf("Latest: %v", err)
	}
	if !sameRanking(got, want) {
		t.Fatalf("Latest = %d entries ranked at %v (%v...), want %d ranked at %v (%v...)",
			len(got.Entries), got.RankedAt, head(got.Entries), len(want.Entries), want.RankedAt, head(want.Entries))
	}
}

// sameRanking compares the instants, not their locations (pgx reads timestamptz in local time).
func sameRanking(a, b domain.Ranking) bool {
	return a.RankedAt.Equal(b.RankedAt) && reflect.DeepEqual(a.Entries, b.Entries)
}

func head(s []domain.Scored) []domain.Scored { return s[:min(len(s), 3)] }

// requireRows checks the table holds exactly n rows, at positions 1..n.
func requireRows(t *testing.T, db *testenv.DB, n int) {
	t.Helper()
	var rows, lo, hi int
	if err := db.Pool.QueryRow(t.Context(),
		`SELECT count(*), coalesce(min(position), 0), coalesce(max(position), 0) FROM hot_articles`).Scan(&rows, &lo, &hi); err != nil {
		t.Fatal(err)
	}
	if rows != n || (n > 0 && (lo != 1 || hi != n)) {
		t.Fatalf("hot_articles holds %d rows at positions %d..%d, want %d at 1..%d", rows, lo, hi, n, n)
	}
}

func TestHotArticleStore_ReplacesTheRankingAsAWhole(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	s := repository.NewHotArticleStore(db.Pool, dao.New())
	if _, err := s.Latest(t.Context()); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("Latest before any ranking = %v, want domain.ErrNotFound", err)
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)

	first := ranking(1000, 5, at)
	replace(t, s, first)
	requireLatest(t, s, first)
	requireRows(t, db, 5)

	// A shorter ranking leaves nothing of the longer one.
	second := ranking(2000, 2, at.Add(time.Minute))
	replace(t, s, second)
	requireLatest(t, s, second)
	requireRows(t, db, 2)

	// A full-size list (the largest INKWELL_RANK_TOP_N) in one replacement.
	big := ranking(3000, 10000, at.Add(2*time.Minute))
	replace(t, s, big)
	requireLatest(t, s, big)
	requireRows(t, db, 10000)

	// Run after run, the table holds one list, never more.
	for i := range 5 {
		r := ranking(int64(4000+100*i), 3+i, at.Add(time.Duration(3+i)*time.Minute))
		replace(t, s, r)
		requireLatest(t, s, r)
		requireRows(t, db, 3+i)
	}

	// An empty ranking keeps none.
	replace(t, s, domain.Ranking{RankedAt: at.Add(time.Hour)})
	requireRows(t, db, 0)
	if _, err := s.Latest(t.Context()); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("Latest after an empty ranking = %v, want domain.ErrNotFound", err)
	}
}

// A reader is not blocked by a replacement under way and sees the previous ranking until it
// commits; then the new one, whole.
func TestHotArticleStore_ReadersSeeOneRankingWhole(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	s := repository.NewHotArticleStore(db.Pool, dao.New())
	at := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	old := ranking(1, 4, at)
	replace(t, s, old)

	// The replacement's statements, as Replace runs them, in a transaction left open.
	q := dao.New()
	tx, err := db.Pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	next := ranking(100, 2, at.Add(time.Minute))
	if err := q.HotArticleLockForReplace(t.Context(), tx); err != nil {
		t.Fatal(err)
	}
	if err := q.HotArticleDeleteAll(t.Context(), tx); err != nil {
		t.Fatal(err)
	}
	if err := q.HotArticleInsertRanking(t.Context(), tx, dao.HotArticleInsertRankingParams{
		RankedAt: next.RankedAt, Positions: []int32{1, 2}, ArticleIds: []int64{100, 101},
		Likes: []int64{next.Entries[0].Likes, next.Entries[1].Likes}, Scores: []float64{next.Entries[0].Score, next.Entries[1].Score},
	}); err != nil {
		t.Fatal(err)
	}
	// A bounded wait: a reader that blocked on the replacement's lock would fail here, not hang.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	got, err := s.Latest(ctx)
	if err != nil || !sameRanking(got, old) {
		t.Fatalf("Latest during a replacement = %+v, %v; want the previous ranking %+v", got, err, old)
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	requireLatest(t, s, next)
}

// Replacements that overlap (the ranking lock changed hands mid-run) queue behind each other:
// none fails, and the table ends up holding one of the rankings, whole.
func TestHotArticleStore_OverlappingReplacements(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	s := repository.NewHotArticleStore(db.Pool, dao.New())
	at := time.Date(2026, 3, 3, 8, 0, 0, 0, time.UTC)
	rankings := make([]domain.Ranking, 8)
	for i := range rankings {
		rankings[i] = ranking(int64(1000*(i+1)), 20+i, at.Add(time.Duration(i)*time.Second))
	}
	errs := make(chan error, 4*len(rankings))
	testenv.Together(4*len(rankings), func(i int) {
		r := rankings[i%len(rankings)]
		if err := s.Replace(context.Background(), r.RankedAt, r.Entries); err != nil {
			errs <- fmt.Errorf("replace %d: %w", i, err)
		}
	})
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	got, err := s.Latest(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rankings {
		if r.RankedAt.Equal(got.RankedAt) {
			if !sameRanking(got, r) {
				t.Fatalf("the table mixes rankings: %d entries ranked at %v", len(got.Entries), got.RankedAt)
			}
			requireRows(t, db, len(r.Entries))
			return
		}
	}
	t.Fatalf("Latest ranked at %v, which no replacement wrote", got.RankedAt)
}

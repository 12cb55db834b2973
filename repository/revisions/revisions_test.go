package revisions_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

func TestRevisions_KeptForPublishedAndScheduledEditsOnly(t *testing.T) {
	t.Parallel()
	e := setup(t)

	t.Run("draft edits keep nothing", func(t *testing.T) {
		a := e.createArticle(t, domain.StatusDraft)
		e.edit(t, a.ID, "Body 2")
		e.edit(t, a.ID, "Body 3")
		if got := e.versions(t, a.ID); len(got) != 0 {
			t.Fatalf("a draft's edits kept versions %v", got)
		}
	})

	t.Run("published edits keep the version they replaced", func(t *testing.T) {
		a := e.createArticle(t, domain.StatusPublished)
		first := e.edit(t, a.ID, "Body 2")
		e.edit(t, a.ID, "Body 3")
		if got, want := e.versions(t, a.ID), []int32{a.Version + 1, a.Version}; !slices.Equal(got, want) {
			t.Fatalf("versions = %v, want %v", got, want)
		}
		rev, err := e.revs.Get(t.Context(), a.ID, a.Version)
		if err != nil {
			t.Fatal(err)
		}
		if rev.Body != "Body 1" || rev.Title != a.Title || rev.Description != a.Description || !slices.Equal(rev.Tags, []string{"go"}) {
			t.Fatalf("version %d = %+v, want the article as created", a.Version, rev)
		}
		if !rev.CreatedAt.Equal(a.UpdatedAt) {
			t.Fatalf("createdAt = %v, want the version's updatedAt %v", rev.CreatedAt, a.UpdatedAt)
		}
		rev, err = e.revs.Get(t.Context(), a.ID, first.Version)
		if err != nil || rev.Body != "Body 2" {
			t.Fatalf("version %d = %+v, %v; want Body 2", first.Version, rev, err)
		}
		list, err := e.revs.List(t.Context(), a.ID, 0, 10)
		if err != nil || len(list) != 2 || list[0].Body != "" {
			t.Fatalf("list = %+v, %v; want two summaries without bodies", list, err)
		}
	})

	t.Run("withdrawn edits keep nothing", func(t *testing.T) {
		a := e.createArticle(t, domain.StatusPublished)
		if _, err := e.articles.Transition(t.Context(), a.ID, []domain.ArticleStatus{domain.StatusPublished}, domain.StatusWithdrawn); err != nil {
			t.Fatal(err)
		}
		e.edit(t, a.ID, "Body 2")
		if got := e.versions(t, a.ID); len(got) != 0 {
			t.Fatalf("a withdrawn article's edit kept versions %v", got)
		}
	})

	t.Run("scheduled edits keep the version they replaced", func(t *testing.T) {
		a := e.createArticle(t, domain.StatusDraft)
		err := pg.NewUnitOfWork(e.pool).InTx(t.Context(), func(tx service.Tx) error {
			_, err := e.articles.ScheduleIn(t.Context(), tx, a.ID, time.Now().Add(time.Hour))
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		e.edit(t, a.ID, "Body 2")
		if got := e.versions(t, a.ID); len(got) != 1 {
			t.Fatalf("a scheduled article's edit kept versions %v, want one", got)
		}
	})

	t.Run("a missing version is not found", func(t *testing.T) {
		a := e.createArticle(t, domain.StatusPublished)
		if _, err := e.revs.Get(t.Context(), a.ID, 99); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("get a missing version: %v, want ErrNotFound", err)
		}
	})
}

func TestRevisions_FailedEditKeepsNothing(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a := e.createArticle(t, domain.StatusPublished)
	refused := errors.New("refused")
	_, err := e.articles.Update(t.Context(), a.ID, func(cur *domain.Article) error {
		cur.Body = "never"
		return refused
	})
	if !errors.Is(err, refused) {
		t.Fatalf("update: %v", err)
	}
	// An edit whose statement fails after the change (a NUL PostgreSQL cannot store) rolls back
	// the revision with it.
	_, err = e.articles.Update(t.Context(), a.ID, func(cur *domain.Article) error {
		cur.Body = "nul \x00 here"
		return nil
	})
	if err == nil {
		t.Fatal("an unstorable body was accepted")
	}
	if got := e.versions(t, a.ID); len(got) != 0 {
		t.Fatalf("failed edits kept versions %v", got)
	}
}

func TestRevisions_RetentionKeepsTheNewest50(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a := e.createArticle(t, domain.StatusPublished)
	var last domain.Article
	for i := range 55 {
		last = e.edit(t, a.ID, fmt.Sprintf("Body %d", i+2))
	}
	got := e.versions(t, a.ID)
	if len(got) != domain.MaxRevisionsKept {
		t.Fatalf("kept %d revisions, want %d", len(got), domain.MaxRevisionsKept)
	}
	if got[0] != last.Version-1 || got[len(got)-1] != last.Version-domain.MaxRevisionsKept {
		t.Fatalf("kept versions %d..%d, want %d..%d", got[len(got)-1], got[0], last.Version-domain.MaxRevisionsKept, last.Version-1)
	}
	var n int
	if err := e.pool.QueryRow(t.Context(), `SELECT count(*) FROM article_revisions WHERE article_id = $1`, a.ID).Scan(&n); err != nil || n != domain.MaxRevisionsKept {
		t.Fatalf("rows = %d, %v", n, err)
	}
	if _, err := e.revs.Get(t.Context(), a.ID, a.Version); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("the first version is still kept: %v", err)
	}
}

// A restore and an edit made against the same version race: the row lock orders them, the second
// sees the version moved and is refused as stale (the edit's 409), and the winner's unit of work
// kept the version it replaced. The loser, retried on the new version, keeps the winner's.
func TestRevisions_ConcurrentRestoreAndEdit_OneWinsNoRevisionLost(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a := e.createArticle(t, domain.StatusPublished)
	v2 := e.edit(t, a.ID, "Body 2") // keeps version 1

	restore := func(expected int32) error {
		rev, err := e.revs.Get(t.Context(), a.ID, a.Version)
		if err != nil {
			return err
		}
		_, err = e.articles.Update(context.Background(), a.ID, func(cur *domain.Article) error {
			if cur.Version != expected {
				return fmt.Errorf("%w: at %d", domain.ErrStaleVersion, cur.Version)
			}
			cur.Title, cur.Description, cur.Body, cur.Tags = rev.Title, rev.Description, rev.Body, rev.Tags
			return nil
		})
		return err
	}
	edit := func(expected int32) error {
		_, err := e.articles.Update(context.Background(), a.ID, func(cur *domain.Article) error {
			if cur.Version != expected {
				return fmt.Errorf("%w: at %d", domain.ErrStaleVersion, cur.Version)
			}
			cur.Body = "Body 3"
			return nil
		})
		return err
	}

	start := make(chan struct{})
	results := make(chan error, 2)
	for _, op := range []func(int32) error{restore, edit} {
		go func() {
			<-start
			results <- op(v2.Version)
		}()
	}
	close(start)
	var won, stale int
	for range 2 {
		switch err := testenv.Recv(t, results, "a racer's result"); {
		case err == nil:
			won++
		case errors.Is(err, domain.ErrStaleVersion):
			stale++
		default:
			t.Fatalf("racer: %v", err)
		}
	}
	if won != 1 || stale != 1 {
		t.Fatalf("won %d, stale %d; want one of each", won, stale)
	}
	cur, err := e.articles.GetBySlug(t.Context(), a.Slug)
	if err != nil {
		t.Fatal(err)
	}
	if cur.Version != v2.Version+1 {
		t.Fatalf("version = %d, want %d", cur.Version, v2.Version+1)
	}
	if got, want := e.versions(t, a.ID), []int32{v2.Version, a.Version}; !slices.Equal(got, want) {
		t.Fatalf("versions = %v, want %v", got, want)
	}
	// The loser tries again on the version it now sees: the winner's content is kept too.
	if cur.Body == "Body 3" {
		err = restore(cur.Version)
	} else {
		err = edit(cur.Version)
	}
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e.versions(t, a.ID), []int32{cur.Version, v2.Version, a.Version}; !slices.Equal(got, want) {
		t.Fatalf("versions after the retry = %v, want %v", got, want)
	}
}

// The list page and the retention's prune walk the primary key, whatever the number of articles
// and revisions: their generic plans (pgx prepares statements) keep the article and the cursor as
// index conditions and need no sort.
func TestRevisions_QueriesWalkThePrimaryKey(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := t.Context()
	for _, s := range []string{
		`INSERT INTO users (email, username, password_hash) VALUES ('plans@example.com', 'plans', 'x')`,
		`INSERT INTO articles (slug, author_id, title, description, body, status)
		 SELECT 'a-' || g, u.id, 't', 'd', 'b', 'published' FROM generate_series(1, 2000) g, users u WHERE u.username = 'plans'`,
		`INSERT INTO article_revisions (article_id, version, title, description, body, tags, created_at)
		 SELECT a.id, v, 't', 'd', 'b', '{}', now() FROM articles a, generate_series(1, 50) v`,
		`ANALYZE`,
	} {
		if _, err := e.pool.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	q := dao.New()
	cases := []struct {
		name    string
		sql     func(dao.DBTX)
		args    string
		want    []string
		notWant []string
	}{
		{
			name:    "list page",
			sql:     func(c dao.DBTX) { _, _ = q.ArticleRevisionList(ctx, c, dao.ArticleRevisionListParams{}) },
			args:    "(1000, 30, 21)",
			want:    []string{"Limit", "Index Scan Backward using article_revisions_pkey", "Index Cond: ((article_id = $1) AND (version < $2))"},
			notWant: []string{"Sort", "Seq Scan", "Filter", "Bitmap"},
		},
		{
			name: "prune",
			sql:  func(c dao.DBTX) { _, _ = q.ArticleRevisionPrune(ctx, c, dao.ArticleRevisionPruneParams{}) },
			args: "(1000, 50)",
			// The rows deleted are a range of the key (a bitmap of it is fine: bounded by the range).
			want:    []string{"Index Only Scan Backward using article_revisions_pkey", "on article_revisions_pkey", "Index Cond: ((article_id = $1) AND (version <="},
			notWant: []string{"Sort", "Seq Scan"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			plan := genericPlan(t, e, captureSQL(t, tc.sql), tc.args)
			for _, w := range tc.want {
				if !strings.Contains(plan, w) {
					t.Errorf("the generic plan lacks %q:\n%s", w, plan)
				}
			}
			for _, nw := range tc.notWant {
				if strings.Contains(plan, nw) {
					t.Errorf("the generic plan holds %q:\n%s", nw, plan)
				}
			}
		})
	}
}

// captureSQL returns the SQL a generated query sends.
func captureSQL(t *testing.T, run func(dao.DBTX)) string {
	t.Helper()
	var c sqlCapture
	run(&c)
	if c.sql == "" {
		t.Fatal("could not capture the query's SQL")
	}
	return c.sql
}

// sqlCapture is a dao.DBTX that records the SQL sent and runs nothing.
type sqlCapture struct{ sql string }

func (c *sqlCapture) Exec(_ context.Context, sql string, _ ...any) (pgconn.CommandTag, error) {
	c.sql = sql
	return pgconn.CommandTag{}, errors.New("captured")
}

func (c *sqlCapture) Query(_ context.Context, sql string, _ ...any) (pgx.Rows, error) {
	c.sql = sql
	return nil, errors.New("captured")
}

func (c *sqlCapture) QueryRow(_ context.Context, sql string, _ ...any) pgx.Row {
	c.sql = sql
	return errRow{}
}

type errRow struct{}

func (errRow) Scan(...any) error { return errors.New("captured") }

// genericPlan prepares sql on a connection of its own and explains its generic plan for args.
func genericPlan(t *testing.T, e *env, sql, args string) string {
	t.Helper()
	return testenv.GenericPlan(t, e.pool, sql, args)
}

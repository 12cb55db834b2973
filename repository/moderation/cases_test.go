package moderation_test

// These tests run against the real PostgreSQL (TEST_DATABASE_URL). Each top-level test migrates a
// database of its own.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/inkwell-dev/inkwell/dao"
	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/repository/moderation"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/service"
)

type fixture struct {
	db        *testenv.DB
	reports   *moderation.Reports
	cases     *moderation.Cases
	uow       *pg.UnitOfWork
	announced *announcements
}

// announcements records what a NoticePublisher was told, in order.
type announcements struct {
	mu    sync.Mutex
	users [][]int64
}

func (a *announcements) Notified(_ context.Context, userIDs []int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.users = append(a.users, append([]int64(nil), userIDs...))
}

func (a *announcements) take() [][]int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.users
	a.users = nil
	return out
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	db := testenv.NewDB(t)
	q := dao.New()
	pub := &announcements{}
	return fixture{db: db, reports: moderation.NewReports(db.Pool, q), cases: moderation.NewCases(db.Pool, q, pub), uow: pg.NewUnitOfWork(db.Pool), announced: pub}
}

// user inserts an account and returns its id.
func (f fixture) user(t *testing.T, name string) int64 {
	t.Helper()
	var id int64
	err := f.db.Pool.QueryRow(t.Context(), `INSERT INTO users (email, username, password_hash) VALUES ($1, $2, 'x') RETURNING id`,
		name+"@example.com", name).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// article inserts a published article by author and returns its id.
func (f fixture) article(t *testing.T, author int64, slug string) int64 {
	t.Helper()
	var id int64
	err := f.db.Pool.QueryRow(t.Context(), `INSERT INTO articles (slug, author_id, title, description, body) VALUES ($1, $2, 't', 'd', 'b') RETURNING id`,
		slug, author).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func (f fixture) comment(t *testing.T, articleID, author int64) int64 {
	t.Helper()
	var id int64
	err := f.db.Pool.QueryRow(t.Context(), `INSERT INTO comments (article_id, seq, author_id, body)
		VALUES ($1, (SELECT coalesce(max(seq), 0) + 1 FROM comments WHERE article_id = $1), $2, 'c') RETURNING id`,
		articleID, author).Scan(&id)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func articleTarget(id int64) domain.ModerationTarget {
	return domain.ModerationTarget{Kind: domain.TargetArticle, ID: id}
}

func (f fixture) file(t *testing.T, reporter int64, target domain.ModerationTarget, reason domain.ReportReason, note string) (domain.Report, bool) {
	t.Helper()
	r, created, err := f.reports.File(t.Context(), domain.Report{ReporterID: reporter, Target: target, Reason: reason, Note: note})
	if err != nil {
		t.Fatal(err)
	}
	return r, created
}

func (f fixture) openCases(t *testing.T) []domain.ModerationCase {
	t.Helper()
	cs, err := f.cases.List(t.Context(), domain.CaseOpen, nil, 100)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func TestReports_FileGroupsReportsIntoOneCasePerTarget(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	author, alice, bob := f.user(t, "author"), f.user(t, "alice"), f.user(t, "bob")
	art := f.article(t, author, "spammy")

	r1, created := f.file(t, alice, articleTarget(art), domain.ReasonSpam, "buy pills")
	if !created || r1.ID == 0 || r1.Status != domain.CaseOpen || r1.Reason != domain.ReasonSpam || r1.Note != "buy pills" {
		t.Fatalf("first report = %+v, created %v", r1, created)
	}
	again, created := f.file(t, alice, articleTarget(art), domain.ReasonAbuse, "changed my mind")
	if created || again.ID != r1.ID || again.Reason != domain.ReasonSpam || again.Note != "buy pills" {
		t.Fatalf("repeat = %+v, created %v; want the first report, not created", again, created)
	}
	if _, created := f.file(t, bob, articleTarget(art), domain.ReasonAbuse, ""); !created {
		t.Fatal("bob's report was not created")
	}
	cs := f.openCases(t)
	if len(cs) != 1 {
		t.Fatalf("open cases = %d, want 1", len(cs))
	}
	c := cs[0]
	if c.ReportCount != 2 || fmt.Sprint(c.Reasons) != "[spam abuse]" || c.NewestNote != "buy pills" ||
		c.Target.Kind != domain.TargetArticle || c.Target.ID != art || c.Target.Label != "spammy" || c.Target.OwnerID != author || c.ArticleSlug != "spammy" {
		t.Fatalf("case = %+v", c)
	}
}

func TestReports_ConcurrentFilersMakeOneCaseAndAnExactCount(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	author := f.user(t, "author")
	art := f.article(t, author, "contested")
	const n = 12
	reporters := make([]int64, n)
	for i := range reporters {
		reporters[i] = f.user(t, fmt.Sprintf("r%d", i))
	}
	// Every reporter at once, and the first reporter a second time at once.
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, n+1)
	createdFirst := make(chan bool, 2)
	for _, id := range append(reporters, reporters[0]) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			_, created, err := f.reports.File(context.Background(), domain.Report{ReporterID: id, Target: articleTarget(art), Reason: domain.ReasonSpam})
			if err != nil {
				errs <- err
			}
			if id == reporters[0] {
				createdFirst <- created
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if a, b := <-createdFirst, <-createdFirst; a == b {
		t.Fatalf("the same reporter twice at once: created %v and %v, want exactly one true", a, b)
	}
	cs := f.openCases(t)
	if len(cs) != 1 || cs[0].ReportCount != n {
		t.Fatalf("cases = %+v, want one case with %d reports", cs, n)
	}
	var reports int
	if err := f.db.Pool.QueryRow(t.Context(), `SELECT count(*) FROM reports WHERE case_id = $1`, cs[0].ID).Scan(&reports); err != nil {
		t.Fatal(err)
	}
	if reports != n {
		t.Fatalf("report rows = %d, want %d", reports, n)
	}
}

func TestCases_ResolveTargetInResolvesEveryReportAndNoticesEachReporter(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	author, alice, bob, mod := f.user(t, "author"), f.user(t, "alice"), f.user(t, "bob"), f.user(t, "mod")
	art := f.article(t, author, "the-slug")
	com := f.comment(t, art, author)
	commentTarget := domain.ModerationTarget{Kind: domain.TargetComment, ID: com, ArticleID: art}
	f.file(t, alice, articleTarget(art), domain.ReasonSpam, "")
	f.file(t, bob, articleTarget(art), domain.ReasonOther, "")
	f.file(t, alice, commentTarget, domain.ReasonAbuse, "rude")

	target := articleTarget(art)
	target.Label = "the-slug"
	resolve := func(target domain.ModerationTarget, event string) bool {
		t.Helper()
		var resolved bool
		err := f.uow.InTx(ctx, func(tx service.Tx) error {
			var err error
			resolved, err = f.cases.ResolveTargetIn(ctx, tx, target, mod, domain.ResolutionDismiss, event)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return resolved
	}
	// A resolution rolled back announces nobody.
	rollback := errors.New("roll back")
	if err := f.uow.InTx(ctx, func(tx service.Tx) error {
		if _, err := f.cases.ResolveTargetIn(ctx, tx, target, mod, domain.ResolutionDismiss, "mod:0"); err != nil {
			return err
		}
		return rollback
	}); !errors.Is(err, rollback) {
		t.Fatalf("rolled-back resolution: %v", err)
	}
	if got := f.announced.take(); len(got) != 0 {
		t.Fatalf("a rolled-back resolution announced %v", got)
	}
	if !resolve(target, "mod:1") {
		t.Fatal("the open case was not resolved")
	}
	// The reporters noticed are announced to their live streams once, after COMMIT.
	if got, want := fmt.Sprint(f.announced.take()), fmt.Sprint([][]int64{{min(alice, bob), max(alice, bob)}}); got != want {
		t.Fatalf("announced %s, want %s", got, want)
	}
	if resolve(target, "mod:2") {
		t.Fatal("a second resolution found an open case")
	}
	if got := f.announced.take(); len(got) != 0 {
		t.Fatalf("a resolution without an open case announced %v", got)
	}
	var open int
	if err := f.db.Pool.QueryRow(ctx, `SELECT count(*) FROM reports r JOIN moderation_cases c ON c.id = r.case_id
		WHERE c.target_kind = 'article' AND r.status = 'open'`).Scan(&open); err != nil {
		t.Fatal(err)
	}
	if open != 0 {
		t.Fatalf("open reports of the article after resolution = %d", open)
	}
	rows, err := f.db.Pool.Query(ctx, `SELECT user_id, kind, event_id, detail FROM notifications ORDER BY user_id`)
	if err != nil {
		t.Fatal(err)
	}
	type notice struct {
		User                int64
		Kind, Event, Detail string
	}
	got, err := pgx.CollectRows(rows, pgx.RowToStructByPos[notice])
	if err != nil {
		t.Fatal(err)
	}
	want := []notice{{alice, domain.NoticeReportResolved, "mod:1", "Your report about the-slug was reviewed."},
		{bob, domain.NoticeReportResolved, "mod:1", "Your report about the-slug was reviewed."}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("notices = %+v, want %+v", got, want)
	}
	// The comment's case is still open; the resolved list has the article's.
	cs := f.openCases(t)
	if len(cs) != 1 || cs[0].Target.Kind != domain.TargetComment || cs[0].Target.Label != fmt.Sprintf("comment %d on the-slug", com) || cs[0].Target.ArticleID != art {
		t.Fatalf("open cases = %+v", cs)
	}
	resolved, err := f.cases.List(ctx, domain.CaseResolved, nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(resolved) != 1 || resolved[0].Resolution != domain.ResolutionDismiss || resolved[0].ResolvedAt.IsZero() || resolved[0].ReportCount != 2 {
		t.Fatalf("resolved = %+v", resolved)
	}
	// A later report opens a new case.
	if _, created := f.file(t, alice, articleTarget(art), domain.ReasonSpam, ""); !created {
		t.Fatal("a report after resolution was not created")
	}
	if cs := f.openCases(t); len(cs) != 2 {
		t.Fatalf("open cases after a new report = %d, want 2", len(cs))
	}
}

func TestCases_ListPagesAndStats(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	author := f.user(t, "author")
	reporter := f.user(t, "reporter")
	st, err := f.cases.OpenStats(ctx)
	if err != nil || st != (moderation.QueueStats{}) {
		t.Fatalf("empty stats = %+v, %v", st, err)
	}
	var ids []int64
	for i := range 5 {
		art := f.article(t, author, fmt.Sprintf("a%d", i))
		r, _ := f.file(t, reporter, articleTarget(art), domain.ReasonSpam, "")
		ids = append(ids, r.CaseID)
	}
	var seen []int64
	var cursor *domain.Cursor
	for {
		page, err := f.cases.List(ctx, domain.CaseOpen, cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range page {
			seen = append(seen, c.ID)
		}
		if len(page) < 2 {
			break
		}
		pos := page[len(page)-1].Position()
		cursor = &pos
	}
	if fmt.Sprint(seen) != fmt.Sprint(ids) {
		t.Fatalf("open queue in pages = %v, want oldest first %v", seen, ids)
	}
	st, err = f.cases.OpenStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	first, err := f.cases.Get(ctx, ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if st.OpenCases != 5 || st.OpenReports != 5 || !st.OldestOpenedAt.Equal(first.OpenedAt) {
		t.Fatalf("stats = %+v, want 5 open, oldest at %v", st, first.OpenedAt)
	}
	if _, err := f.cases.Get(ctx, 999999); !errors.Is(err, domain.ErrNotFound) {
		t.Fatalf("unknown case: %v, want ErrNotFound", err)
	}
}

// The queue's pages are each one index range, whatever the number of cases: a generic plan walks
// moderation_cases_open_idx (resolved: moderation_cases_resolved_idx) in order and stops at the
// limit, with no sort of the matching rows.
func TestCases_ListGenericPlansWalkTheQueueIndex(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	author := f.user(t, "author")
	for _, s := range []string{
		`INSERT INTO moderation_cases (target_kind, target_id, status, opened_at, resolved_at, resolution, report_count, reasons)
		 SELECT 'user', g, CASE WHEN g % 4 = 0 THEN 'open' ELSE 'resolved' END,
		        now() - g * interval '1 minute', CASE WHEN g % 4 = 0 THEN NULL ELSE now() - g * interval '30 seconds' END,
		        CASE WHEN g % 4 = 0 THEN NULL ELSE 'dismiss' END, 1, '{spam}'
		 FROM generate_series(1, 40000) g`,
		fmt.Sprintf(`INSERT INTO articles (slug, author_id, title, description, body) SELECT 'p' || g, %d, 't', 'd', 'b' FROM generate_series(1, 2000) g`, author),
		`ANALYZE`,
	} {
		if _, err := f.db.Pool.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	q := dao.New()
	for _, tc := range []struct {
		name  string
		sql   func(dao.DBTX)
		args  string
		index string
	}{
		{"open", func(c dao.DBTX) { _, _ = q.ModerationCaseListOpen(ctx, c, dao.ModerationCaseListOpenParams{}) }, "('0001-01-01', 0, 20)", "moderation_cases_open_idx"},
		{"resolved", func(c dao.DBTX) { _, _ = q.ModerationCaseListResolved(ctx, c, dao.ModerationCaseListResolvedParams{}) }, "('9999-12-31', 9223372036854775807, 20)", "moderation_cases_resolved_idx"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var sql string
			tc.sql(sqlCapture{sql: &sql})
			plan := genericPlan(t, f.db, sql, tc.args)
			top := strings.SplitN(plan, "\n", 2)[0]
			if !strings.HasPrefix(strings.TrimSpace(top), "Limit") {
				t.Errorf("plan does not stop at the page (top node %q):\n%s", top, plan)
			}
			if !strings.Contains(plan, "using "+tc.index) || !strings.Contains(plan, "Index Cond: (ROW(") {
				t.Errorf("plan does not walk %s with the cursor as its index condition:\n%s", tc.index, plan)
			}
			for _, bad := range []string{"Sort", "Seq Scan on moderation_cases"} {
				if strings.Contains(plan, bad) {
					t.Errorf("plan holds %q:\n%s", bad, plan)
				}
			}
		})
	}
	st, err := f.cases.OpenStats(ctx)
	if err != nil || st.OpenCases != 10000 {
		t.Fatalf("stats = %+v, %v", st, err)
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

type capturedRow struct{}

func (capturedRow) Scan(...any) error { return errCaptured }

var errCaptured = errors.New("captured, not run")

// genericPlan prepares sql on a connection of its own and explains its generic plan for args.
func genericPlan(t *testing.T, db *testenv.DB, sql, args string) string {
	t.Helper()
	ctx := t.Context()
	pooled, err := db.Pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn := pooled.Hijack() // its settings and statement must not reach the pool
	defer func() { _ = conn.Close(context.Background()) }()
	for _, s := range []string{"SET plan_cache_mode = force_generic_plan", "PREPARE list_query AS " + sql} {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	rows, err := conn.Query(ctx, "EXPLAIN EXECUTE list_query"+args, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// A report filed while a resolution holds the case waits for it and then opens a new case: it is
// never counted into the case being resolved, nor left open on it.
func TestReports_FilingDuringAResolutionOpensANewCase(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := t.Context()
	author, alice, bob, mod := f.user(t, "author"), f.user(t, "alice"), f.user(t, "bob"), f.user(t, "mod")
	art := f.article(t, author, "raced")
	first, _ := f.file(t, alice, articleTarget(art), domain.ReasonSpam, "")

	resolving, release := make(chan struct{}), make(chan struct{})
	resolved := make(chan error, 1)
	go func() {
		resolved <- f.uow.InTx(context.Background(), func(tx service.Tx) error {
			if _, err := f.cases.LockIn(context.Background(), tx, first.CaseID); err != nil {
				return err
			}
			close(resolving)
			<-release
			_, err := f.cases.ResolveTargetIn(context.Background(), tx, articleTarget(art), mod, domain.ResolutionDismiss, "mod:1")
			return err
		})
	}()
	testenv.Recv(t, resolving, "the resolution to hold the case")
	filed := make(chan domain.Report, 1)
	go func() {
		r, _, err := f.reports.File(context.Background(), domain.Report{ReporterID: bob, Target: articleTarget(art), Reason: domain.ReasonAbuse})
		if err != nil {
			t.Error(err)
		}
		filed <- r
	}()
	testenv.WaitUntil(t, "the filing to wait for the case's lock", func() bool {
		var n int
		_ = f.db.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%moderation_cases%'`).Scan(&n)
		return n == 1
	})
	close(release)
	if err := testenv.Recv(t, resolved, "the resolution"); err != nil {
		t.Fatal(err)
	}
	bobs := testenv.Recv(t, filed, "the filing")
	if bobs.CaseID == first.CaseID {
		t.Fatalf("the report joined case %d, which was being resolved", first.CaseID)
	}
	old, err := f.cases.Get(ctx, first.CaseID)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := f.cases.Get(ctx, bobs.CaseID)
	if err != nil {
		t.Fatal(err)
	}
	if old.Status != domain.CaseResolved || old.ReportCount != 1 || fresh.Status != domain.CaseOpen || fresh.ReportCount != 1 {
		t.Fatalf("resolved case %+v, new case %+v", old, fresh)
	}
}

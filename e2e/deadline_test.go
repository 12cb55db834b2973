package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/ioc"
)

// TestRequestDeadlineStopsTheStatement: a request whose statement waits on a lock longer than
// INKWELL_REQUEST_TIMEOUT is answered 503 when its deadline passes, and its statement stops with
// it: PostgreSQL is left with nobody waiting on the lock (and no connection held for a client
// that has gone).
func TestRequestDeadlineStopsTheStatement(t *testing.T) {
	parallel(t)
	// Long enough that the setup's register and publish, on a machine busy with the whole suite
	// under -race, finish inside it (at 1 s the publish itself was sometimes answered 503).
	const timeout = 3 * time.Second
	app := startApp(t, func(c *ioc.Config) { c.Server.RequestTimeout = timeout })
	author := app.Register("deadlineauthor")
	slug := app.publish(author, "Locked for a while")
	// The publication's fan-out reads the article too; let it finish, so the only statement that
	// can wait on the test's lock is the request's.
	app.waitFor("the publication is fanned out", func() bool {
		return app.pgCount(t, `SELECT count(*) FROM article_fanouts f JOIN articles a ON a.id = f.article_id WHERE a.slug = $1`, slug) == 1
	})

	ctx := context.Background()
	tx, err := app.DB.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, `SELECT 1 FROM articles WHERE slug = $1 FOR UPDATE`, slug); err != nil {
		t.Fatal(err)
	}
	edit := map[string]any{"article": map[string]any{"body": "edited while locked"}}
	began := time.Now()
	r := app.call(t, "PUT", "/api/articles/"+slug, author, edit)
	took := time.Since(began)
	requireErrorField(t, r, http.StatusServiceUnavailable, "body")
	if r.Header.Get("Retry-After") == "" {
		t.Errorf("503 without Retry-After")
	}
	if took < timeout {
		t.Errorf("answered after %v, before the %v deadline: something else refused it", took, timeout)
	}
	app.waitFor("no statement waits on the test's lock any more", func() bool {
		return app.pgCount(t, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`) == 0
	})
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	app.call(t, "PUT", "/api/articles/"+slug, author, edit).Expect(t, http.StatusOK)
}

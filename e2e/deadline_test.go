package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// TestRequestDeadlineStopsTheStatement: a request whose statement waits on a lock longer than
// INKWELL_REQUEST_TIMEOUT is answered 503 when its deadline passes, and its statement stops with
// it: PostgreSQL is left with nobody waiting on the lock (and no connection held for a client
// that has gone).
func TestRequestDeadlineStopsTheStatement(t *testing.T) {
	parallel(t)
	// The setup's register and publish go through an instance with the default timeout (on a
	// machine busy with the whole suite under -race, a short one sometimes refused the publish);
	// the edit under test goes through an instance of the same fleet with a short one.
	const timeout = time.Second
	db, rds := testenv.NewDB(t), testenv.NewRedis(t)
	setup := startReplica(t, db, rds.Prefix)
	app := startReplica(t, db, rds.Prefix, func(c *ioc.Config) { c.Server.RequestTimeout = timeout })
	author := setup.Register("deadlineauthor")
	slug := setup.publish(author, "Locked for a while")
	// The publication's fan-out reads the article too; let it finish, so the only statement that
	// can wait on the test's lock is the request's.
	setup.waitFor("the publication is fanned out", func() bool {
		return setup.pgCount(t, `SELECT count(*) FROM article_fanouts f JOIN articles a ON a.id = f.article_id WHERE a.slug = $1`, slug) == 1
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
	setup.call(t, "PUT", "/api/articles/"+slug, author, edit).Expect(t, http.StatusOK)
}

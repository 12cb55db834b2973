package e2e

import (
	"context"
	"net/http"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/inkwell-dev/inkwell/ioc"
)

// TestGivenUpSearchesDoNotPauseTheSearchPool: searches given up in the middle of their statement
// (their clients went away, as a load generator's do when it stops; a request deadline running
// out does the same) make pgx close their connections and send PostgreSQL cancel requests, which
// it never answers. The searches after them get new connections and are answered, not 503: before
// the fix those cancel requests counted as failed connection attempts and paused the search pool
// of a healthy server (issue 26, where wrk's warm-up stopping did it).
func TestGivenUpSearchesDoNotPauseTheSearchPool(t *testing.T) {
	parallel(t)
	singleInstance(t, "the given-up searches must all reach one instance's search pool")
	app := startApp(t, noAuthLimit, func(c *ioc.Config) { c.Server.RateWrites, c.Server.RateSearch = "0", "0" })
	author := signUp(t, app, accountOpts{})
	word := searchWord()
	app.publish(author.Token, "Overload "+word)

	// Hold the searches at their first statement, which reads site_article_counts.
	ctx := context.Background()
	lock, err := app.DB.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = lock.Rollback(ctx) }()
	if _, err := lock.Exec(ctx, `LOCK TABLE site_article_counts IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	const givenUp = 4 // more than the connect gate's three failures in a row
	var lockPID int64
	if err := lock.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&lockPID); err != nil {
		t.Fatal(err)
	}
	// waiters are the sessions whose statement waits on the test's lock.
	waiters := func() []int64 {
		rows, err := app.DB.Pool.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database()
			AND wait_event_type = 'Lock' AND query LIKE '%site_article_counts%' AND pid <> $1`, lockPID)
		if err != nil {
			t.Fatal(err)
		}
		pids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
		if err != nil {
			t.Fatal(err)
		}
		return pids
	}
	clients, giveUp := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range givenUp {
		req, err := http.NewRequestWithContext(clients, "GET", app.URL+"/api/search/articles?q="+searchWord(), nil)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			if res, err := app.HTTP.Do(req); err == nil {
				_ = res.Body.Close()
				t.Errorf("a search held by the lock was answered %d", res.StatusCode)
			}
		})
	}
	var pids []int64
	app.waitFor("every search waits on the lock", func() bool { pids = waiters(); return len(pids) == givenUp })
	giveUp()
	wg.Wait()
	// pgx sends a connection's cancel request before it closes the connection, so once these
	// sessions are gone every cancel request has been sent and answered (by a close).
	app.waitFor("the given-up searches' sessions end", func() bool {
		return app.pgCount(t, `SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1)`, pids) == 0
	})
	if err := lock.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	results := make([]response, givenUp)
	errs := make([]error, givenUp)
	for i := range givenUp { // as many as were given up: each needs a new connection
		wg.Go(func() { results[i], errs[i] = app.fetch(nil, "GET", "/api/search/articles?q="+word, "", nil) })
	}
	wg.Wait()
	for i, res := range results {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		if res.Status != http.StatusOK {
			t.Fatalf("search %d after %d given-up searches: %d %s", i, givenUp, res.Status, res.Body)
		}
	}
}

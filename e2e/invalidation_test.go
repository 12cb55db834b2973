package e2e

import (
	"net/http"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// TestEditShowsOnAnotherInstanceBeforeItsLocalCopyExpires: an edit through A reaches B's
// in-process copy through the invalidation channel, not by expiry. The local tiers keep entries
// for a minute here, so a fresh read on B within the test can only come from the broadcast.
func TestEditShowsOnAnotherInstanceBeforeItsLocalCopyExpires(t *testing.T) {
	parallel(t)
	inProcess(t, "sets tuning constants through ioc.Config.Tune, which no setting carries to a process")
	db, rds := testenv.NewDB(t), testenv.NewRedis(t)
	longLocal := func(c *ioc.Config) { c.Tune.CacheLocalTTL = &aMinute }
	a, b := startReplica(t, db, rds.Prefix, longLocal), startReplica(t, db, rds.Prefix, longLocal)
	for _, app := range []*testApp{a, b} {
		// Until an instance has subscribed it keeps no local copies at all; wait for it so that
		// B's reads below do fill its tier.
		app.waitFor("the invalidation channel is subscribed", func() bool {
			return strings.Contains(app.metrics(), "\ninkwell_cache_invalidation_subscribed 1\n")
		})
	}
	author := a.Register("bcastauthor")
	slug := articleOf(t, a.Do("POST", "/api/articles", author, newArticle("Broadcast")).Expect(t, http.StatusCreated))["slug"].(string)
	bodyOn := func(app *testApp) string {
		t.Helper()
		return articleOf(t, app.Do("GET", "/api/articles/"+slug, "", nil).Expect(t, http.StatusOK))["body"].(string)
	}
	before := bodyOn(b)
	bodyOn(b) // from B's tier now

	a.Do("PUT", "/api/articles/"+slug, author, map[string]any{"article": map[string]any{"body": "edited on A"}}).Expect(t, http.StatusOK)
	// B applies the message on its own goroutine, within milliseconds of A's answer; poll for it
	// (an external effect) rather than guess how long it takes. Without the broadcast B would
	// serve the old body for a minute.
	b.waitFor("B serves the edit", func() bool { return bodyOn(b) == "edited on A" })
	if before == "edited on A" {
		t.Fatal("the body was already the edited one")
	}
	if m := a.metrics(); strings.Contains(m, "\ninkwell_cache_invalidations_published_total 0\n") {
		t.Errorf("A published no invalidations:\n%s", m)
	}
}

func (a *testApp) metrics() string {
	a.T.Helper()
	return a.Metrics()
}

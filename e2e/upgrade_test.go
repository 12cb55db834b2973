package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/apptest"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// The mechanisms that cross instances, across releases: in the middle of a rolling upgrade an
// instance of the previous release and one of this tree share one database and one Redis, and
// each must act on what the other sends (docs/OPERATIONS.md, "Upgrading a fleet"). Each test runs
// both ways, old → new and new → old. They need the two binaries: make test-upgrade runs them
// (INKWELL_E2E_UPGRADE=1); the other runs skip them.

// twoReleases is an instance of the previous release and one of this tree, addressed directly,
// on one database and one Redis key prefix.
type twoReleases struct {
	old, cur *testApp
	db       *testenv.DB
	prefix   string
}

func startTwoReleases(t *testing.T, tweak ...func(*ioc.Config)) twoReleases {
	t.Helper()
	if !upgradeRun(t) {
		t.Skipf("needs the previous release beside this tree: %s=1 (make test-upgrade)", upgradeEnv)
	}
	db, prefix := testenv.NewDB(t), testenv.NewRedis(t).Prefix
	rels := releases(t)
	return twoReleases{
		old: &testApp{apptest.StartProcess(t, rels[0], db, prefix, tweak...)},
		cur: &testApp{apptest.StartProcess(t, rels[1], db, prefix, tweak...)},
		db:  db, prefix: prefix,
	}
}

// ways are the two directions: the first instance acts, the second must see it.
func (r twoReleases) ways() [][2]*testApp { return [][2]*testApp{{r.old, r.cur}, {r.cur, r.old}} }

func (a *testApp) releaseName() string { return a.Release.Name }

// TestUpgrade_AnEditOnOneReleaseDropsTheOthersCopy: the invalidation channel between releases.
// The previous release keeps local copies a minute (previousReleaseEnv), so an edit made on this
// release shows there only through the message. This release's local tier lives cache.LocalTTL
// (a constant no setting carries to a process), so the other direction is proven in process
// with copies that live a minute (TestEditShowsOnAnotherInstanceBeforeItsLocalCopyExpires).
func TestUpgrade_AnEditOnOneReleaseDropsTheOthersCopy(t *testing.T) {
	parallel(t)
	r := startTwoReleases(t)
	for _, app := range []*testApp{r.old, r.cur} {
		app.waitFor("the invalidation channel is subscribed on "+app.releaseName(), func() bool {
			return strings.Contains(app.metrics(), "\ninkwell_cache_invalidation_subscribed 1\n")
		})
	}
	author := r.old.Register("upgradeauthor")
	for _, way := range r.ways() {
		writer, reader := way[0], way[1]
		slug := articleOf(t, writer.Do("POST", "/api/articles", author, newArticle("Edited on "+writer.releaseName())).
			Expect(t, http.StatusCreated))["slug"].(string)
		body := func() string {
			return articleOf(t, reader.Do("GET", "/api/articles/"+slug, "", nil).Expect(t, http.StatusOK))["body"].(string)
		}
		before := body()
		body() // from the reader's tier now
		edited := "edited on " + writer.releaseName()
		writer.Do("PUT", "/api/articles/"+slug, author, map[string]any{"article": map[string]any{"body": edited}}).Expect(t, http.StatusOK)
		reader.waitFor(reader.releaseName()+" serves the edit made on "+writer.releaseName(), func() bool { return body() == edited })
		if before == edited {
			t.Fatalf("the body was already the edited one")
		}
	}
}

// TestUpgrade_ALogoutOnOneReleaseRevokesOnTheOther: the acknowledged invalidation of a
// revocation between releases: the other instance, which has just answered the session from its
// memory, refuses it on the very next request, every round.
func TestUpgrade_ALogoutOnOneReleaseRevokesOnTheOther(t *testing.T) {
	parallel(t)
	r := startTwoReleases(t, noAuthLimit)
	rds := testenv.NewRedis(t) // a client; its own prefix is unused
	r.old.waitFor("the revocation lease is held", func() bool {
		return rds.Client.Exists(t.Context(), revocationLeaseKey(r.prefix)).Val() == 1
	})
	acc := signUp(t, r.cur, accountOpts{})
	for _, way := range r.ways() {
		revoker, other := way[0], way[1]
		for round := range 5 {
			s := logIn(t, revoker, acc)
			hits := memoryHits(t, other)
			for range 3 {
				other.call(t, "GET", "/api/user", s.Access, nil).Expect(t, http.StatusOK)
			}
			if memoryHits(t, other) == hits {
				t.Fatalf("round %d: %s never answered from its memory", round, other.releaseName())
			}
			revoker.call(t, "POST", "/api/users/logout", s.Access, nil).Expect(t, http.StatusNoContent)
			res := other.call(t, "GET", "/api/user", s.Access, nil)
			if res.Status != http.StatusUnauthorized {
				t.Fatalf("round %d: GET /api/user on %s right after the logout on %s: %d %s, want 401",
					round, other.releaseName(), revoker.releaseName(), res.Status, res.Body)
			}
		}
	}
}

// TestUpgrade_APublishOnOneReleaseIsFannedOutByTheOther: the outbox between releases. An
// article's event goes through three hands — the instance whose request wrote the outbox row
// (its payload), the relay that put it in the stream (its entry), the consumer that notified the
// followers — and any of them may be of either release. The spans say whose hands (each process
// exports under its release's service name): articles are published, on the two instances in
// turn, until every hand-over between releases has happened both ways, each article notifying the
// follower exactly once.
func TestUpgrade_APublishOnOneReleaseIsFannedOutByTheOther(t *testing.T) {
	// Not parallel: the OTEL_* variables are the process's, and the instances inherit them.
	if !upgradeRun(t) {
		t.Skipf("needs the previous release beside this tree: %s=1 (make test-upgrade)", upgradeEnv)
	}
	recv := apptest.StartOTLPReceiver(t)
	r := startTwoReleases(t)
	author, follower := r.old.Register("fanoutauthor"), r.cur.Register("fanoutfollower")
	r.old.Do("POST", "/api/profiles/fanoutauthor/follow", follower, nil).Expect(t, http.StatusOK)

	seen := map[string]bool{} // "payload|entry old→new" ...
	want := []string{"payload old→new", "payload new→old", "entry old→new", "entry new→old"}
	done := func() bool {
		for _, w := range want {
			if !seen[w] {
				return false
			}
		}
		return true
	}
	oldName := apptest.ServiceName(r.old.Release)
	direction := func(from, to string) string {
		if from == oldName {
			return "old→new"
		}
		return "new→old"
	}
	const maxArticles = 40 // each hand-over is one of two, about at random: 2·(3/4)^40 to miss one
	published := 0
	for ; published < maxArticles && !done(); published++ {
		writer := []*testApp{r.old, r.cur}[published%2]
		header, traceID, _ := traceparent(t)
		writer.Do("POST", "/api/articles", author, newArticle(fmt.Sprintf("Fanned out %d", published)), "traceparent", header).
			Expect(t, http.StatusCreated)
		var request, relay, consumer apptest.Span
		writer.waitFor("the spans of article "+fmt.Sprint(published)+" from request to consumer", func() bool {
			tr := treeOf(recv.Trace(traceID))
			servers, pubs, notes := tr.named("POST /api/articles"), tr.named("outbox publish article.published"), tr.named("notify followers article.published")
			if len(servers) != 1 || len(pubs) == 0 || len(notes) == 0 {
				return false
			}
			request, relay, consumer = servers[0], pubs[len(pubs)-1], notes[len(notes)-1]
			return true
		})
		if request.Service != serviceOf(writer) {
			t.Fatalf("the request span of a create on %s is %s's", writer.releaseName(), request.Service)
		}
		if consumer.Service != request.Service {
			seen["payload "+direction(request.Service, consumer.Service)] = true
		}
		if consumer.Service != relay.Service {
			seen["entry "+direction(relay.Service, consumer.Service)] = true
		}
	}
	if !done() {
		t.Fatalf("after %d articles the hand-overs between releases were %v; want all of %v", published, seen, want)
	}
	t.Logf("every hand-over between releases seen after %d articles", published)
	page := r.cur.awaitNotifications(follower, published)
	slugs := map[string]bool{}
	for _, n := range page.Items {
		slugs[slugOfNotification(n)] = true
	}
	if len(slugs) != published {
		t.Fatalf("%d notifications of %d articles, want one each", len(slugs), published)
	}
}

// serviceOf is the service name of an instance's spans.
func serviceOf(a *testApp) string { return apptest.ServiceName(a.Release) }

// TestUpgrade_TheOldReleaseServesOnTheNewSchema walks a rolling upgrade's database steps from an
// empty database: the previous release migrates it and serves; this tree's `migrate up` runs
// while it serves (expand-only migrations: it keeps serving, ready); a database newer than both
// (what the next release's migration leaves) keeps both ready, and an old instance that restarts
// with INKWELL_MIGRATE_ON_START finds nothing to do; the new instance joins, and each serves what
// the other wrote.
func TestUpgrade_TheOldReleaseServesOnTheNewSchema(t *testing.T) {
	parallel(t)
	if !upgradeRun(t) {
		t.Skipf("needs the previous release beside this tree: %s=1 (make test-upgrade)", upgradeEnv)
	}
	rels := releases(t)
	db, prefix := testenv.NewEmptyDB(t), testenv.NewRedis(t).Prefix
	apptest.RunCommand(t, rels[0], db, "migrate", "up")
	old := &testApp{apptest.StartProcess(t, rels[0], db, prefix)}
	readyz := func(app *testApp) string {
		t.Helper()
		return string(app.Do("GET", "/readyz", "", nil).Expect(t, http.StatusOK).Body)
	}
	author := old.Register("schemaauthor")
	first := articleOf(t, old.Do("POST", "/api/articles", author, newArticle("Before the migration")).Expect(t, http.StatusCreated))["slug"].(string)

	out := apptest.RunCommand(t, rels[1], db, "migrate", "up")
	if !strings.Contains(out, "the database is at version") {
		t.Fatalf("migrate up of this tree printed %q", out)
	}
	if body := readyz(old); !strings.Contains(body, `"status":"ready"`) {
		t.Fatalf("the old release after this tree's migrations: /readyz %s", body)
	}
	second := articleOf(t, old.Do("POST", "/api/articles", author, newArticle("After the migration")).Expect(t, http.StatusCreated))["slug"].(string)

	// What a later release's migration leaves: a version above every one either binary knows.
	if _, err := db.Pool.Exec(t.Context(), `INSERT INTO goose_db_version (version_id, is_applied)
		SELECT max(version_id) + 1000, true FROM goose_db_version`); err != nil {
		t.Fatal(err)
	}
	if body := readyz(old); !strings.Contains(body, `"status":"ready"`) {
		t.Fatalf("the old release on a database newer than itself: /readyz %s", body)
	}
	old.Stop()
	restarted := &testApp{apptest.StartProcess(t, rels[0], db, prefix, migrateOnStartWithoutPoolSettings)}
	cur := &testApp{apptest.StartProcess(t, rels[1], db, prefix, func(c *ioc.Config) { c.Server.MigrateOnStart = true })}
	for _, app := range []*testApp{restarted, cur} {
		if body := readyz(app); !strings.Contains(body, `"status":"ready"`) {
			t.Fatalf("%s on the newer database: /readyz %s", app.releaseName(), body)
		}
		for _, slug := range []string{first, second} {
			app.Do("GET", "/api/articles/"+slug, "", nil).Expect(t, http.StatusOK)
		}
	}
	third := articleOf(t, cur.Do("POST", "/api/articles", author, newArticle("Written by the new release")).Expect(t, http.StatusCreated))["slug"].(string)
	restarted.Do("GET", "/api/articles/"+third, "", nil).Expect(t, http.StatusOK)
}

// migrateOnStartWithoutPoolSettings restarts an old instance as an operator may: migrating on
// start. v0.1.0's migration runner refuses pool_* parameters in DATABASE_URL (this release takes
// them), so its URL goes without the fleet's pool settings.
func migrateOnStartWithoutPoolSettings(c *ioc.Config) {
	c.Server.MigrateOnStart = true
	u, err := url.Parse(c.Database.URL)
	if err != nil {
		return // the process reports the bad URL
	}
	q := u.Query()
	for k := range q {
		if strings.HasPrefix(k, "pool_") {
			q.Del(k)
		}
	}
	u.RawQuery = q.Encode()
	c.Database.URL = u.String()
}

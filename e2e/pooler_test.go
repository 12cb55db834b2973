package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"sync"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/apptest"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// poolerEnv names the setting that runs the suite through PgBouncer and a read replica (make
// test-pooler): INKWELL_E2E_POOLER=1 makes every startApp one instance whose DATABASE_URL is the
// PgBouncer in transaction pooling mode before the replica pair's primary (DATABASE_POOLER=
// pgbouncer, DATABASE_DIRECT_URL the primary itself) and whose DATABASE_REPLICA_URLS is the
// primary's streaming replica, 500 ms behind.
const poolerEnv = "INKWELL_E2E_POOLER"

func poolerRun() bool { return os.Getenv(poolerEnv) != "" }

// startPooled serves one instance on a fresh database of the replica pair, reached through
// PgBouncer, with its replica in rotation, as docs/OPERATIONS.md's pooled layout runs it.
func startPooled(t *testing.T, tweak ...func(*ioc.Config)) (*testApp, *testenv.ReplicatedDB) {
	t.Helper()
	db, rds := testenv.NewReplicatedDB(t), testenv.NewRedis(t)
	pooled := testenv.PooledURL(t, db)
	through := func(c *ioc.Config) {
		c.Database.URL = pooled
		c.Database.Pooler = ioc.PoolerPgBouncer
		c.Database.DirectURL = db.URL
		c.Database.ReplicaURLs = db.ReplicaURL
	}
	app := apptest.StartReplica(t, &db.DB, rds.Prefix, append([]func(*ioc.Config){through}, tweak...)...)
	if poolerRun() {
		// The suite reads as one user what another (or nobody) has just written, and a reader
		// other than the writer may see data up to INKWELL_REPLICA_MAX_LAG old: the contract,
		// which the suite's assertions do not allow for. So in this run a write returns once the
		// replica has replayed it; a writer's own reads are proved fresh without the wait by
		// TestReplicas_ReadYourWritesThroughTheFleet.
		app.AfterWrite = func() error { return db.Replayed(context.Background()) }
	}
	return &testApp{app}, db
}

// TestPooler_ThroughPgBouncerAndAReplica: an instance whose request pool reaches PostgreSQL
// through PgBouncer in transaction pooling mode (no prepared statements survive from one
// transaction to the next there) serves eight writers at once, each registering, publishing,
// editing, commenting, favoriting and following an author, then reading it all back; every answer
// is the right one, PgBouncer carried the requests, the replica served reads, and the outbox
// and consumers (LISTEN, on DATABASE_DIRECT_URL) notify every follower of the author's next article.
func TestPooler_ThroughPgBouncerAndAReplica(t *testing.T) {
	parallel(t)
	inProcess(t, "the instance is wired with pooler settings a previous release does not have")
	app, db := startPooled(t, func(c *ioc.Config) { c.Server.RateWrites, c.Server.RateAuth = "0", "0" })

	author := app.Register("pooledauthor")
	const writers = 8
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	tokens := make([]string, writers)
	for w := range writers {
		wg.Go(func() {
			var err error
			if tokens[w], err = pooledWriter(app, w); err != nil {
				errs <- fmt.Errorf("writer %d: %w", w, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		return
	}

	db.WaitReplayed(t) // an anonymous reader may read up to the lag bound behind
	list := app.Do("GET", "/api/articles?tag=pooled&limit=20", "", nil).Expect(t, http.StatusOK).JSON(t)
	if n := list["articlesCount"]; n != float64(writers) {
		t.Errorf("articlesCount %v, want %d", n, writers)
	}
	app.publish(author, "Pooled news for followers")
	for _, token := range tokens {
		app.awaitNotifications(token, 1)
	}
	if clients, servers := testenv.PgBouncerConnections(t, db.Name); clients == 0 || servers == 0 {
		t.Errorf("PgBouncer holds %d client and %d server connections for %s: the requests did not go through it", clients, servers, db.Name)
	}
	app.waitFor("the replica to serve an anonymous list", func() bool {
		app.Do("GET", "/api/articles?limit=5", "", nil).Expect(t, http.StatusOK)
		return regexp.MustCompile(`(?m)^inkwell_db_routed_reads_total\{target="replica"\} [1-9]`).MatchString(app.Metrics())
	})
}

// pooledWriter is one user's session against a pooled instance: every step must answer as it
// would without PgBouncer.
func pooledWriter(app *testApp, w int) (string, error) {
	name := fmt.Sprintf("pooledwriter%d", w)
	client := &http.Client{}
	step := func(method, path, token string, body any, want int) (map[string]any, error) {
		res, err := app.Fetch(client, method, path, token, body)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", method, path, err)
		}
		if res.Status != want {
			return nil, fmt.Errorf("%s %s: %d %s, want %d", method, path, res.Status, res.Body, want)
		}
		var out map[string]any
		if len(res.Body) > 0 {
			if err := json.Unmarshal(res.Body, &out); err != nil {
				return nil, fmt.Errorf("%s %s: %w", method, path, err)
			}
		}
		return out, nil
	}
	user, err := step("POST", "/api/users", "", map[string]any{"user": map[string]any{
		"username": name, "email": name + "@example.com", "password": "correct horse battery"}}, http.StatusCreated)
	if err != nil {
		return "", err
	}
	token := user["user"].(map[string]any)["token"].(string)
	created, err := step("POST", "/api/articles", token, apptest.NewArticle("Pooled "+name, "pooled"), http.StatusCreated)
	if err != nil {
		return "", err
	}
	slug := created["article"].(map[string]any)["slug"].(string)
	want := "edited by " + name
	for _, s := range []struct {
		method, path string
		body         any
		status       int
	}{
		{"PUT", "/api/articles/" + slug, map[string]any{"article": map[string]any{"description": want}}, http.StatusOK},
		{"POST", "/api/articles/" + slug + "/comments", map[string]any{"comment": map[string]any{"body": "a comment by " + name}}, http.StatusOK},
		{"POST", "/api/articles/" + slug + "/favorite", nil, http.StatusOK},
		{"POST", "/api/profiles/pooledauthor/follow", nil, http.StatusOK},
	} {
		if _, err := step(s.method, s.path, token, s.body, s.status); err != nil {
			return "", err
		}
	}
	got, err := step("GET", "/api/articles/"+slug, token, nil, http.StatusOK)
	if err != nil {
		return "", err
	}
	art := got["article"].(map[string]any)
	if art["description"] != want || art["favorited"] != true || art["favoritesCount"] != float64(1) {
		return "", fmt.Errorf("read back %v, want the edit %q and one favorite of theirs", art, want)
	}
	comments, err := step("GET", "/api/articles/"+slug+"/comments", token, nil, http.StatusOK)
	if err != nil {
		return "", err
	}
	if cs, _ := comments["comments"].([]any); len(cs) != 1 {
		return "", fmt.Errorf("%d comments read back, want 1", len(cs))
	}
	return token, nil
}

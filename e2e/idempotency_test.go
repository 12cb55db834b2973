package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// burstClient is an HTTP client for many requests at once: it keeps enough idle connections that
// a burst does not open (and leave in TIME_WAIT) a new connection per request, and it times out
// rather than hang a test.
func burstClient(t *testing.T) *http.Client {
	t.Helper()
	tr := &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: 512, IdleConnTimeout: 30 * time.Second}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}
}

// fetch sends a request from any goroutine (apptest.App.Fetch).
func (a *testApp) fetch(client *http.Client, method, path, token string, body any, headers ...string) (response, error) {
	return a.Fetch(client, method, path, token, body, headers...)
}

// call is do for subtests: it fails t, the subtest, rather than the test that started the app.
func (a *testApp) call(t *testing.T, method, path, token string, body any, headers ...string) response {
	t.Helper()
	res, err := a.fetch(nil, method, path, token, body, headers...)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// ready reports whether GET /readyz says every dependency answers, Redis included: "degraded"
// (Redis down, still 200) is not ready here.
func (a *testApp) ready(t *testing.T) bool {
	t.Helper()
	res := a.call(t, "GET", "/readyz", "", nil)
	return res.Status == http.StatusOK && strings.Contains(string(res.Body), `"status":"ready"`)
}

// account is a user signed up through the API.
type account struct {
	Username, Email, Password string
	Token, Refresh            string
}

// accountOpts describe an account to register; empty fields get unique values.
type accountOpts struct {
	Username string
	Password string
	Headers  []string // extra request headers (Idempotency-Key, X-Forwarded-For)
}

func signUp(t *testing.T, app *testApp, o accountOpts) account {
	t.Helper()
	if o.Username == "" {
		o.Username = "u" + testenv.RandomID(5)
	}
	if o.Password == "" {
		o.Password = "correct horse battery"
	}
	acc := account{Username: o.Username, Email: strings.ToLower(o.Username) + "@example.com", Password: o.Password}
	res := app.call(t, "POST", "/api/users", "", map[string]any{"user": map[string]any{
		"username": acc.Username, "email": acc.Email, "password": acc.Password,
	}}, o.Headers...).Expect(t, http.StatusCreated)
	u := userOf(t, res)
	acc.Token, _ = u["token"].(string)
	acc.Refresh, _ = u["refreshToken"].(string)
	if acc.Token == "" || acc.Refresh == "" {
		t.Fatalf("registration answered without token or refreshToken: %s", res.Body)
	}
	return acc
}

// userID reads a username's id straight from PostgreSQL.
func (a *testApp) userID(t *testing.T, username string) int64 {
	t.Helper()
	var id int64
	if err := a.DB.Pool.QueryRow(context.Background(), `SELECT id FROM users WHERE username = $1`, username).Scan(&id); err != nil {
		t.Fatalf("user %s: %v", username, err)
	}
	return id
}

// pgCount runs a count straight on the app's database.
func (a *testApp) pgCount(t *testing.T, sql string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := a.DB.Pool.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

func requireErrorField(t *testing.T, r response, status int, field string) {
	t.Helper()
	r.Expect(t, status)
	if _, ok := errorsOf(t, r)[field]; !ok {
		t.Fatalf("errors lack %q: %s", field, r.Body)
	}
}

func requireReplay(t *testing.T, got, first response) {
	t.Helper()
	if got.Status != first.Status || !bytes.Equal(got.Body, first.Body) {
		t.Fatalf("replay = %d %s, want the first answer byte for byte: %d %s", got.Status, got.Body, first.Status, first.Body)
	}
	if h := got.Header.Get("Idempotent-Replayed"); h != "true" {
		t.Fatalf("Idempotent-Replayed = %q on a replay", h)
	}
}

// requireReplayedSignup checks the replay of a keyed registration: the first answer's account,
// marked replayed, with a session of its own (no token is stored to replay).
func requireReplayedSignup(t *testing.T, got, first response) {
	t.Helper()
	got.Expect(t, first.Status)
	if h := got.Header.Get("Idempotent-Replayed"); h != "true" {
		t.Fatalf("Idempotent-Replayed = %q on a replay", h)
	}
	g, f := userOf(t, got), userOf(t, first)
	if g["username"] != f["username"] || g["email"] != f["email"] || g["token"] == "" || g["token"] == f["token"] ||
		g["refreshToken"] == "" || g["refreshToken"] == f["refreshToken"] {
		t.Fatalf("replay = %s, want the first answer's account with new tokens: %s", got.Body, first.Body)
	}
}

func requireFresh(t *testing.T, r response) {
	t.Helper()
	if h := r.Header.Get("Idempotent-Replayed"); h != "" {
		t.Fatalf("Idempotent-Replayed = %q on a request that ran", h)
	}
}

func TestIdempotencyKeys(t *testing.T) {
	parallel(t)
	inProcess(t, "sets tuning constants through ioc.Config.Tune, which no setting carries to a process")
	app := startApp(t, func(c *ioc.Config) {
		c.Server.RateWrites, c.Server.RateAuth = "0", "0" // thousands of writes by a handful of users
		c.Server.TrustedProxies = "127.0.0.1"             // X-Forwarded-For picks the client IP registration keys are scoped by
		// The burst claims that duplicates wait for the first and replay it, not how long the first
		// takes: on a loaded CI machine 5,000 requests took 33 s, and a few firsts outlasted the
		// default 3 s wait. (The 409 after the wait has its own test in repository.)
		c.Tune.IdempotencyWait = new(time.Minute)
	})

	t.Run("50 concurrent identical requests for each of 100 keys create one article per key", func(t *testing.T) {
		parallel(t)
		const keys, perKey, keysAtOnce, authors = 100, 50, 4, 4
		client := burstClient(t)
		tokens := make([]string, authors)
		names := make([]string, authors)
		for i := range authors {
			acc := signUp(t, app, accountOpts{})
			tokens[i], names[i] = acc.Token, acc.Username
		}
		run := testenv.RandomID(4)
		type outcome struct {
			res response
			err error
		}
		results := make([][]outcome, keys)
		var conflicts, replays atomic.Int64
		start := time.Now()
		sem := make(chan struct{}, keysAtOnce)
		var all sync.WaitGroup
		for k := range keys {
			all.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				key := fmt.Sprintf("bulk-%s-%03d", run, k)
				body, err := json.Marshal(newArticle(fmt.Sprintf("Bulk %s %03d", run, k), "bulk"))
				if err != nil {
					panic(err)
				}
				results[k] = make([]outcome, perKey)
				gate := make(chan struct{})
				var same sync.WaitGroup
				for i := range perKey {
					same.Go(func() {
						<-gate
						res, err := app.fetch(client, "POST", "/api/articles", tokens[k%authors], body, "Idempotency-Key", key)
						results[k][i] = outcome{res, err}
					})
				}
				close(gate) // all 50 leave together
				same.Wait()
			})
		}
		all.Wait()
		elapsed := time.Since(start)

		for k := range keys {
			title := fmt.Sprintf("Bulk %s %03d", run, k)
			var first *response
			originals := 0
			for i, o := range results[k] {
				if o.err != nil {
					t.Fatalf("key %d request %d: %v", k, i, o.err)
				}
				switch o.res.Status {
				case http.StatusConflict:
					conflicts.Add(1)
					requireErrorField(t, o.res, http.StatusConflict, "Idempotency-Key")
					continue
				case http.StatusCreated:
				default:
					t.Fatalf("key %d request %d: %d %s", k, i, o.res.Status, o.res.Body)
				}
				switch o.res.Header.Get("Idempotent-Replayed") {
				case "true":
					replays.Add(1)
				case "":
					originals++
				}
				if first == nil {
					first = &results[k][i].res
				} else if !bytes.Equal(o.res.Body, first.Body) {
					t.Fatalf("key %d: two successful answers differ:\n%s\n%s", k, first.Body, o.res.Body)
				}
			}
			if originals != 1 || first == nil {
				t.Fatalf("key %d: %d answers ran the request, want exactly 1", k, originals)
			}
			if got := articleOf(t, *first)["title"]; got != title {
				t.Fatalf("key %d answered article %v, want %q", k, got, title)
			}
			// Whatever the race, a later retry replays the same bytes.
			again := app.call(t, "POST", "/api/articles", tokens[k%authors], newArticle(title, "bulk"),
				"Idempotency-Key", fmt.Sprintf("bulk-%s-%03d", run, k))
			requireReplay(t, again, *first)
			if n := app.pgCount(t, `SELECT count(*) FROM articles WHERE title = $1`, title); n != 1 {
				t.Fatalf("key %d: %d articles titled %q, want 1", k, n, title)
			}
		}
		if n := app.pgCount(t, `SELECT count(*) FROM articles a JOIN users u ON u.id = a.author_id WHERE u.username = ANY($1)`, names); n != keys {
			t.Fatalf("%d articles by the authors, want %d", n, keys)
		}
		t.Logf("%d requests (%d keys × %d) in %v: %d answered 409 (in flight), %d replays, %d ran",
			keys*perKey, keys, perKey, elapsed.Round(time.Millisecond), conflicts.Load(), replays.Load(), keys)
		// Duplicates wait for the request holding their key (a few seconds at most), so all 50
		// answers of a key are the same answer: none is refused as in flight.
		if n := conflicts.Load(); n != 0 {
			t.Fatalf("%d duplicates answered 409; they should have waited and replayed", n)
		}
	})

	t.Run("the same key with another body is 422, and nothing is written", func(t *testing.T) {
		parallel(t)
		acc := signUp(t, app, accountOpts{})
		title := "Mismatch " + testenv.RandomID(4)
		app.call(t, "POST", "/api/articles", acc.Token, newArticle(title), "Idempotency-Key", "mismatch").Expect(t, http.StatusCreated)
		res := app.call(t, "POST", "/api/articles", acc.Token, newArticle(title+" edited"), "Idempotency-Key", "mismatch")
		requireErrorField(t, res, http.StatusUnprocessableEntity, "Idempotency-Key")
		if n := app.pgCount(t, `SELECT count(*) FROM articles WHERE title LIKE $1`, title+"%"); n != 1 {
			t.Fatalf("%d articles, want 1", n)
		}
	})

	t.Run("the same JSON re-encoded is the same request", func(t *testing.T) {
		parallel(t)
		acc := signUp(t, app, accountOpts{})
		title := "Encoded " + testenv.RandomID(4)
		first := app.call(t, "POST", "/api/articles", acc.Token,
			fmt.Sprintf(`{"article":{"title":%q,"description":"d","body":"b"}}`, title), "Idempotency-Key", "enc").Expect(t, http.StatusCreated)
		again := app.call(t, "POST", "/api/articles", acc.Token,
			fmt.Sprintf("{ \"article\" : {\n\"body\": \"b\", \"description\": \"d\",\t\"title\": %q } }", title), "Idempotency-Key", "enc")
		requireReplay(t, again, first)
	})

	t.Run("keys longer than 255 characters are refused", func(t *testing.T) {
		parallel(t)
		acc := signUp(t, app, accountOpts{})
		title := "Long key " + testenv.RandomID(4)
		res := app.call(t, "POST", "/api/articles", acc.Token, newArticle(title), "Idempotency-Key", strings.Repeat("k", 256))
		requireErrorField(t, res, http.StatusBadRequest, "Idempotency-Key")
		if n := app.pgCount(t, `SELECT count(*) FROM articles WHERE title = $1`, title); n != 0 {
			t.Fatal("a request with a refused key was run")
		}
		app.call(t, "POST", "/api/articles", acc.Token, newArticle(title), "Idempotency-Key", strings.Repeat("k", 255)).Expect(t, http.StatusCreated)
	})

	t.Run("keys are per user", func(t *testing.T) {
		parallel(t)
		a, b := signUp(t, app, accountOpts{}), signUp(t, app, accountOpts{})
		title := "Per user " + testenv.RandomID(4)
		ra := app.call(t, "POST", "/api/articles", a.Token, newArticle(title), "Idempotency-Key", "shared").Expect(t, http.StatusCreated)
		rb := app.call(t, "POST", "/api/articles", b.Token, newArticle(title), "Idempotency-Key", "shared").Expect(t, http.StatusCreated)
		requireFresh(t, rb)
		if articleOf(t, ra)["slug"] == articleOf(t, rb)["slug"] {
			t.Fatal("the second user got the first user's article")
		}
	})

	t.Run("registration with a key is scoped by client IP", func(t *testing.T) {
		parallel(t)
		name1, name2 := "reg"+testenv.RandomID(4), "reg"+testenv.RandomID(4)
		body := func(name string) map[string]any {
			return map[string]any{"user": map[string]any{"username": name, "email": name + "@example.com", "password": "correct horse battery"}}
		}
		const ipA, ipB = "198.51.100.1", "198.51.100.2"
		first := app.call(t, "POST", "/api/users", "", body(name1), "Idempotency-Key", "signup", "X-Forwarded-For", ipA).Expect(t, http.StatusCreated)
		requireFresh(t, first)
		requireReplayedSignup(t, app.call(t, "POST", "/api/users", "", body(name1), "Idempotency-Key", "signup", "X-Forwarded-For", ipA), first)
		// Another client may use the same key for its own registration.
		other := app.call(t, "POST", "/api/users", "", body(name2), "Idempotency-Key", "signup", "X-Forwarded-For", ipB).Expect(t, http.StatusCreated)
		requireFresh(t, other)
		// The first client may not reuse it for another one.
		requireErrorField(t, app.call(t, "POST", "/api/users", "", body(name2), "Idempotency-Key", "signup", "X-Forwarded-For", ipA),
			http.StatusUnprocessableEntity, "Idempotency-Key")
		if n := app.pgCount(t, `SELECT count(*) FROM users WHERE username IN ($1, $2)`, name1, name2); n != 2 {
			t.Fatalf("%d users, want 2", n)
		}
		// The replayed registration is the first one's account (with a session of its own), one user.
		if userOf(t, first)["username"] != name1 {
			t.Fatalf("first registration answered %s", first.Body)
		}
	})

	t.Run("a rejected registration under a key is stored and replayed", func(t *testing.T) {
		parallel(t)
		taken := signUp(t, app, accountOpts{})
		dup := map[string]any{"user": map[string]any{"username": "dup" + testenv.RandomID(4), "email": taken.Email, "password": "correct horse battery"}}
		first := app.call(t, "POST", "/api/users", "", dup, "Idempotency-Key", "dup-"+taken.Username, "X-Forwarded-For", "198.51.100.3")
		requireErrorField(t, first, http.StatusUnprocessableEntity, "email")
		requireFresh(t, first)
		requireReplay(t, app.call(t, "POST", "/api/users", "", dup, "Idempotency-Key", "dup-"+taken.Username, "X-Forwarded-For", "198.51.100.3"), first)
	})

	t.Run("comments with a key replay; the same key on another article is another request", func(t *testing.T) {
		parallel(t)
		author, reader := signUp(t, app, accountOpts{}), signUp(t, app, accountOpts{})
		one := articleOf(t, app.call(t, "POST", "/api/articles", author.Token, newArticle("Commented "+testenv.RandomID(4))).Expect(t, http.StatusCreated))["slug"].(string)
		two := articleOf(t, app.call(t, "POST", "/api/articles", author.Token, newArticle("Commented "+testenv.RandomID(4))).Expect(t, http.StatusCreated))["slug"].(string)
		comment := map[string]any{"comment": map[string]any{"body": "+1"}}
		first := app.call(t, "POST", "/api/articles/"+one+"/comments", reader.Token, comment, "Idempotency-Key", "c1").Expect(t, http.StatusOK)
		requireFresh(t, first)
		requireReplay(t, app.call(t, "POST", "/api/articles/"+one+"/comments", reader.Token, comment, "Idempotency-Key", "c1"), first)
		requireErrorField(t, app.call(t, "POST", "/api/articles/"+two+"/comments", reader.Token, comment, "Idempotency-Key", "c1"),
			http.StatusUnprocessableEntity, "Idempotency-Key")
		for slug, want := range map[string]int64{one: 1, two: 0} {
			if n := app.pgCount(t, `SELECT count(*) FROM comments c JOIN articles a ON a.id = c.article_id WHERE a.slug = $1`, slug); n != want {
				t.Fatalf("%d comments on %s, want %d", n, slug, want)
			}
		}
	})

	t.Run("a key older than 24 hours is forgotten: the request runs anew", func(t *testing.T) {
		parallel(t)
		acc := signUp(t, app, accountOpts{})
		scope := fmt.Sprintf("user:%d", app.userID(t, acc.Username))
		if _, err := app.DB.Pool.Exec(context.Background(), `INSERT INTO idempotency_keys (scope, key, request_hash, response_status, response_body, created_at)
			VALUES ($1, 'yesterday', 'some other request', 201, '{"stale":true}', now() - interval '25 hours')`, scope); err != nil {
			t.Fatal(err)
		}
		title := "Anew " + testenv.RandomID(4)
		res := app.call(t, "POST", "/api/articles", acc.Token, newArticle(title), "Idempotency-Key", "yesterday").Expect(t, http.StatusCreated)
		requireFresh(t, res)
		if articleOf(t, res)["title"] != title {
			t.Fatalf("answered %s, want the new article", res.Body)
		}
		requireReplay(t, app.call(t, "POST", "/api/articles", acc.Token, newArticle(title), "Idempotency-Key", "yesterday"), res)
	})
}

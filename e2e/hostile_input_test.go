package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/apptest"
	"github.com/inkwell-dev/inkwell/ioc"
)

// hostileText is text PostgreSQL cannot store or should not be asked to: each kind once. Values
// go into JSON bodies as they are (not through encoding/json, which would repair them), and into
// paths and queries percent-encoded.
var hostileText = map[string]string{
	"raw NUL":                 "a\x00b",
	"invalid UTF-8":           "a\xffb",
	"overlong encoding":       "a\xc0\xafb",
	"UTF-8-encoded surrogate": "a\xed\xa0\x80b",
	"1 MiB":                   strings.Repeat("x", 1<<20),
}

// hostileJSONOnly are hostile only inside a JSON string: the \u0000 escape.
var hostileJSONOnly = map[string]string{"NUL escape": `a\u0000b`}

// TestHostileInputNeverA5xx sends each kind of hostile text through the real stack (PostgreSQL,
// Redis) to every text field that reaches storage, every query parameter and path value that
// reaches a query, and asserts that nothing was written and the answer: a 4xx in the RealWorld
// error shape (422 naming the field for bodies, 404 for paths), or an empty list for a list's
// tag, author or favorited filter.
// A lone surrogate escape (\ud800) is valid JSON read as U+FFFD: it may succeed, never a 5xx.
func TestHostileInputNeverA5xx(t *testing.T) {
	parallel(t)
	app := startApp(t, noAuthLimit, func(c *ioc.Config) { c.Server.RateWrites = "0" })
	acc := signUp(t, app, accountOpts{})
	slug := app.publish(acc.Token, "Hostile input target")
	other := signUp(t, app, accountOpts{})

	bodies, queries, paths := textTargets(acc.Token, slug)

	expect4xx := func(t *testing.T, what string, res response) {
		t.Helper()
		if res.Status < 400 || res.Status >= 500 {
			t.Errorf("%s: status %d, want a 4xx; body %.300s", what, res.Status, res.Body)
			return
		}
		// A request line too long for the HTTP server (431) or for the fleet's balancer (which
		// answers it itself, without naming an instance) never reached inkwell's handlers.
		byBalancer := fleetSize(t) > 1 && res.Header.Get(apptest.ServedByHeader) == ""
		if res.Status == http.StatusRequestHeaderFieldsTooLarge || byBalancer {
			return
		}
		if len(errorsOf(t, res)) == 0 {
			t.Errorf("%s: status %d without {\"errors\":{...}}: %.300s", what, res.Status, res.Body)
		}
	}
	// First the lone surrogate escape, which may write (as U+FFFD); the no-write check covers
	// what follows, the inputs that must be refused outright.
	for _, b := range bodies {
		what := b.method + " " + b.path + " " + b.template + " with a lone surrogate escape"
		if res := app.call(t, b.method, b.path, b.auth, strings.Replace(b.template, "%s", `a\ud800b`, 1)); res.Status >= 500 {
			t.Errorf("%s: status %d; body %.300s", what, res.Status, res.Body)
		}
	}
	// send is call for the request line: one too long for the balancer in front of a fleet may be
	// refused by closing the connection while it is still being written, which is no 5xx either
	// (storedState below still proves nothing was written).
	send := func(t *testing.T, method, path string) (response, bool) {
		t.Helper()
		res, err := app.fetch(nil, method, path, other.Token, nil)
		if err != nil {
			if len(path) > 64<<10 {
				return res, false
			}
			t.Fatalf("%.300s", err)
		}
		return res, true
	}
	before := storedState(t, app)
	for kind, v := range hostileJSONOnly {
		for _, b := range bodies {
			expect4xx(t, b.method+" "+b.template+" with "+kind, app.call(t, b.method, b.path, b.auth, strings.Replace(b.template, "%s", v, 1)))
		}
	}
	for kind, v := range hostileText {
		for _, name := range queries {
			// A filter that names a tag or user that cannot exist: an empty list, as for any
			// unknown name.
			what := "GET /api/articles?" + name + "= with " + kind
			res, answered := send(t, "GET", "/api/articles?"+name+"="+url.QueryEscape(v))
			if !answered {
				continue
			}
			if res.Status == http.StatusRequestHeaderFieldsTooLarge || (fleetSize(t) > 1 && res.Header.Get(apptest.ServedByHeader) == "") {
				continue // a request line too long for the server or the fleet's balancer never reached inkwell
			}
			if res.Status != http.StatusOK {
				t.Errorf("%s: status %d, want 200 and an empty list; body %.300s", what, res.Status, res.Body)
				continue
			}
			if n := res.JSON(t)["articlesCount"]; n != 0.0 {
				t.Errorf("%s: articlesCount %v, want 0", what, n)
			}
		}
		for _, p := range paths {
			path := strings.Replace(p.template, "%s", url.PathEscape(v), 1)
			if res, answered := send(t, p.method, path); answered {
				what := p.method + " " + p.template + " with " + kind
				expect4xx(t, what, res)
				// A name that cannot be stored names nothing (the 1 MiB one is storable: it is
				// simply unknown, or too long for the request line).
				if kind != "1 MiB" && res.Status != http.StatusNotFound {
					t.Errorf("%s: status %d, want 404", what, res.Status)
				}
			}
		}
		for _, b := range bodies {
			expect4xx(t, b.method+" "+b.template+" with "+kind, app.call(t, b.method, b.path, b.auth, strings.Replace(b.template, "%s", v, 1)))
		}
	}
	if after := storedState(t, app); after != before {
		t.Errorf("hostile input changed what is stored:\nbefore %s\nafter  %s", before, after)
	}
}

// bodyTarget is a request whose JSON body template holds one %s, where text goes inside a JSON
// string (as it is: not through encoding/json, which would repair it).
type bodyTarget struct{ method, path, auth, template string }

// pathTarget is a request whose path template holds one %s, where text goes percent-encoded.
type pathTarget struct{ method, template string }

// textTargets are the places client text reaches storage or a query: every stored text field
// (bodies, sent by the account whose token is given, the article slug theirs), the list's name
// filters (queries, on GET /api/articles) and path values naming a slug or username.
func textTargets(token, slug string) (bodies []bodyTarget, queries []string, paths []pathTarget) {
	bodies = []bodyTarget{
		{"POST", "/api/users", "", `{"user":{"username":"%s","email":"h@example.com","password":"correct horse battery"}}`},
		{"POST", "/api/users", "", `{"user":{"username":"hostile","email":"%s","password":"correct horse battery"}}`},
		{"POST", "/api/users/login", "", `{"user":{"email":"%s","password":"correct horse battery"}}`},
		{"POST", "/api/users/login/code/send", "", `{"email":"%s"}`},
		{"PUT", "/api/user", token, `{"user":{"bio":"%s"}}`},
		{"PUT", "/api/user", token, `{"user":{"image":"https://example.com/%s"}}`},
		{"PUT", "/api/user", token, `{"user":{"username":"%s"}}`},
		{"PUT", "/api/user", token, `{"user":{"email":"%s","currentPassword":"correct horse battery"}}`},
		{"POST", "/api/articles", token, `{"article":{"title":"%s","description":"d","body":"b"}}`},
		{"POST", "/api/articles", token, `{"article":{"title":"t","description":"%s","body":"b"}}`},
		{"POST", "/api/articles", token, `{"article":{"title":"t","description":"d","body":"%s"}}`},
		{"POST", "/api/articles", token, `{"article":{"title":"t","description":"d","body":"b","tagList":["ok","%s"]}}`},
		{"PUT", "/api/articles/" + slug, token, `{"article":{"title":"%s"}}`},
		{"PUT", "/api/articles/" + slug, token, `{"article":{"body":"%s"}}`},
		{"POST", "/api/articles/" + slug + "/comments", token, `{"comment":{"body":"%s"}}`},
		{"POST", "/api/collections", token, `{"collection":{"name":"%s"}}`},
		{"POST", "/api/collections", token, `{"collection":{"name":"n","description":"%s"}}`},
		{"POST", "/api/user/api-keys", token, `{"apiKey":{"name":"%s"}}`},
	}
	queries = []string{"tag", "author", "favorited"}
	paths = []pathTarget{
		{"GET", "/api/articles/%s"},
		{"GET", "/api/articles/%s/comments"},
		{"POST", "/api/articles/%s/favorite"},
		{"GET", "/api/profiles/%s"},
		{"POST", "/api/profiles/%s/follow"},
	}
	return bodies, queries, paths
}

// storedState digests every row the fields above can write, so any partial write shows.
func storedState(t *testing.T, app *testApp) string {
	t.Helper()
	var s string
	err := app.DB.Pool.QueryRow(t.Context(), `SELECT concat_ws(' ',
		(SELECT md5(coalesce(string_agg(concat_ws('|', id, username, email, bio, image), ',' ORDER BY id), '')) FROM users),
		(SELECT md5(coalesce(string_agg(concat_ws('|', id, slug, title, description, body), ',' ORDER BY id), '')) FROM articles),
		(SELECT count(*) FROM article_tags), (SELECT count(*) FROM comments), (SELECT count(*) FROM collections),
		(SELECT count(*) FROM api_keys), (SELECT count(*) FROM login_codes), (SELECT count(*) FROM follows),
		(SELECT count(*) FROM favorite_articles))`).Scan(&s)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

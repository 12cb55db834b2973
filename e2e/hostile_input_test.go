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
// reaches a query, and asserts a 4xx in the RealWorld error shape and that nothing was written.
// A lone surrogate escape (\ud800) is valid JSON read as U+FFFD: it may succeed, never a 5xx.
func TestHostileInputNeverA5xx(t *testing.T) {
	t.Parallel()
	app := startApp(t, noAuthLimit, func(c *ioc.Config) { c.RateWrites = "0" })
	acc := signUp(t, app, accountOpts{})
	slug := app.publish(acc.Token, "Hostile input target")
	other := signUp(t, app, accountOpts{})

	// Every body template holds one %s, where the hostile text goes inside a JSON string.
	bodies := []struct{ method, path, auth, template string }{
		{"POST", "/api/users", "", `{"user":{"username":"%s","email":"h@example.com","password":"correct horse battery"}}`},
		{"POST", "/api/users", "", `{"user":{"username":"hostile","email":"%s","password":"correct horse battery"}}`},
		{"POST", "/api/users/login", "", `{"user":{"email":"%s","password":"correct horse battery"}}`},
		{"POST", "/api/users/login/code/send", "", `{"email":"%s"}`},
		{"PUT", "/api/user", acc.Token, `{"user":{"bio":"%s"}}`},
		{"PUT", "/api/user", acc.Token, `{"user":{"image":"https://example.com/%s"}}`},
		{"PUT", "/api/user", acc.Token, `{"user":{"username":"%s"}}`},
		{"PUT", "/api/user", acc.Token, `{"user":{"email":"%s","currentPassword":"correct horse battery"}}`},
		{"POST", "/api/articles", acc.Token, `{"article":{"title":"%s","description":"d","body":"b"}}`},
		{"POST", "/api/articles", acc.Token, `{"article":{"title":"t","description":"%s","body":"b"}}`},
		{"POST", "/api/articles", acc.Token, `{"article":{"title":"t","description":"d","body":"%s"}}`},
		{"POST", "/api/articles", acc.Token, `{"article":{"title":"t","description":"d","body":"b","tagList":["ok","%s"]}}`},
		{"PUT", "/api/articles/" + slug, acc.Token, `{"article":{"title":"%s"}}`},
		{"PUT", "/api/articles/" + slug, acc.Token, `{"article":{"body":"%s"}}`},
		{"POST", "/api/articles/" + slug + "/comments", acc.Token, `{"comment":{"body":"%s"}}`},
		{"POST", "/api/collections", acc.Token, `{"collection":{"name":"%s"}}`},
		{"POST", "/api/collections", acc.Token, `{"collection":{"name":"n","description":"%s"}}`},
		{"POST", "/api/user/api-keys", acc.Token, `{"apiKey":{"name":"%s"}}`},
	}
	queries := []string{"tag", "author", "favorited"}
	paths := []struct{ method, template string }{
		{"GET", "/api/articles/%s"},
		{"GET", "/api/articles/%s/comments"},
		{"POST", "/api/articles/%s/favorite"},
		{"GET", "/api/profiles/%s"},
		{"POST", "/api/profiles/%s/follow"},
	}

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
			what := "GET /api/articles?" + name + "= with " + kind
			res, answered := send(t, "GET", "/api/articles?"+name+"="+url.QueryEscape(v))
			if !answered {
				continue
			}
			if res.Status == http.StatusOK && kind == "1 MiB" { // storable text that names nothing: an empty list
				if n := res.JSON(t)["articlesCount"]; n != 0.0 {
					t.Errorf("%s: articlesCount %v, want 0", what, n)
				}
				continue
			}
			expect4xx(t, what, res)
		}
		for _, p := range paths {
			path := strings.Replace(p.template, "%s", url.PathEscape(v), 1)
			if res, answered := send(t, p.method, path); answered {
				expect4xx(t, p.method+" "+p.template+" with "+kind, res)
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

package e2e

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/apptest"
	"github.com/inkwell-dev/inkwell/ioc"
)

// FuzzStoredText sends arbitrary text through the wired app, to real PostgreSQL and Redis, in
// every place client text reaches storage or a query (textTargets: every stored text field, the
// list's name filters, slugs and usernames in paths). The property: never a 5xx, and every 4xx in
// the RealWorld error shape. web's fuzz targets cover the decoders over mocked services; this one
// reaches the stores, where PostgreSQL's own refusals (22021, 22P05, 54000, ...) would surface.
//
// The seeds (run by `go test` like any test) hold each kind of hostile text in several places: a
// raw NUL, the \u0000 escape, invalid UTF-8, an overlong encoding, a UTF-8-encoded surrogate, a lone
// surrogate escape, a 1 MiB string, plus ordinary text. To fuzz for a bounded time:
//
//	go test ./e2e -run '^$' -fuzz '^FuzzStoredText$' -fuzztime 20s
func FuzzStoredText(f *testing.F) {
	seeds := []string{
		"plain text", "ünïcödé ✓ 缓存击穿", `a "quoted" \ back\\slash`,
		"a\x00b", `a\u0000b`, "a\xffb", "a\xc0\xafb", "a\xed\xa0\x80b", `a\ud800b`, `a\udfff\ud800b`,
		strings.Repeat("x", 1<<20),
	}
	bodies, queries, paths := textTargets("", "")
	targets := len(bodies) + len(queries) + len(paths)
	// Two seeds per place, rotating, so every kind of text meets several places; the whole
	// matrix runs once in TestHostileInputNeverA5xx, and the fuzzer mixes them further.
	for i := range targets {
		f.Add(uint8(i), seeds[i%len(seeds)])
		f.Add(uint8(i), seeds[(i+5)%len(seeds)])
	}

	inProcess(f, "a fuzz target's instance is in process (apptest.Start)")
	app := apptest.Start(f, noAuthLimit, func(c *ioc.Config) { c.Server.RateWrites = "0" })
	token, slug := fuzzAuthor(f, app)
	bodies, _, _ = textTargets(token, slug)

	f.Fuzz(func(t *testing.T, target uint8, text string) {
		i := int(target) % targets
		var res response
		var err error
		var what string
		switch {
		case i < len(bodies):
			b := bodies[i]
			what = b.method + " " + b.path + " " + b.template
			res, err = app.Fetch(nil, b.method, b.path, b.auth, strings.Replace(b.template, "%s", text, 1))
		case i < len(bodies)+len(queries):
			name := queries[i-len(bodies)]
			what = "GET /api/articles?" + name + "="
			res, err = app.Fetch(nil, "GET", "/api/articles?"+name+"="+url.QueryEscape(text), token, nil)
		default:
			p := paths[i-len(bodies)-len(queries)]
			what = p.method + " " + p.template
			res, err = app.Fetch(nil, p.method, strings.Replace(p.template, "%s", url.PathEscape(text), 1), token, nil)
		}
		if err != nil {
			if len(text) > 64<<10 { // a request line the HTTP server refuses by closing the connection
				return
			}
			t.Fatalf("%s with %q: %v", what, trimmed(text), err)
		}
		if res.Status >= 500 {
			t.Fatalf("%s with %q: status %d; body %.300s", what, trimmed(text), res.Status, res.Body)
		}
		if res.Status >= 400 && res.Status != http.StatusRequestHeaderFieldsTooLarge {
			var e struct {
				Errors map[string][]string `json:"errors"`
			}
			if json.Unmarshal(res.Body, &e) != nil || len(e.Errors) == 0 {
				t.Fatalf("%s with %q: status %d without {\"errors\":{...}}: %.300s", what, trimmed(text), res.Status, res.Body)
			}
		}
	})
}

// fuzzAuthor registers an account and publishes an article through app for a fuzz target (whose
// *testing.F the e2e helpers do not take); it returns the token and the slug.
func fuzzAuthor(f *testing.F, app *apptest.App) (token, slug string) {
	f.Helper()
	reg := map[string]any{"user": map[string]any{"username": "fuzzauthor", "email": "fuzz@example.com", "password": "correct horse battery"}}
	res, err := app.Fetch(nil, "POST", "/api/users", "", reg)
	if err != nil || res.Status != http.StatusCreated {
		f.Fatalf("register: %v, status %d: %s", err, res.Status, res.Body)
	}
	var u struct{ User struct{ Token string } }
	if err := json.Unmarshal(res.Body, &u); err != nil {
		f.Fatal(err)
	}
	art := map[string]any{"article": map[string]any{"title": "Fuzz target", "description": "d", "body": "b"}}
	res, err = app.Fetch(nil, "POST", "/api/articles", u.User.Token, art)
	if err != nil || res.Status != http.StatusCreated {
		f.Fatalf("publish: %v, status %d: %s", err, res.Status, res.Body)
	}
	var a struct{ Article struct{ Slug string } }
	if err := json.Unmarshal(res.Body, &a); err != nil {
		f.Fatal(err)
	}
	return u.User.Token, a.Article.Slug
}

// trimmed is text short enough for a failure message.
func trimmed(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

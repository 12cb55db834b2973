package e2e

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/ioc"
)

// searchWord is a made-up word only this test's articles hold.
func searchWord() string {
	const letters = "bcdfghjklmnpqrstvwxz"
	b := []byte("zq")
	for range 8 {
		b = append(b, letters[rand.IntN(len(letters))])
	}
	return string(b)
}

func (a *testApp) searchSlugs(t *testing.T, token, query string) ([]string, map[string]any) {
	t.Helper()
	res := a.call(t, "GET", "/api/search/articles?"+query, token, nil)
	if res.Status != http.StatusOK {
		t.Fatalf("search %s: %d %s", query, res.Status, res.Body)
	}
	body := res.JSON(t)
	var slugs []string
	for _, x := range body["articles"].([]any) {
		slugs = append(slugs, x.(map[string]any)["slug"].(string))
	}
	return slugs, body
}

// TestSearchArticles drives search through the wired app: only published articles are found
// (a draft, a withdrawn and a deleted one never, by query or filter, for a reader or anonymously,
// on every instance of a fleet), with snippets and stable pages.
func TestSearchArticles(t *testing.T) {
	parallel(t)
	app := startApp(t, noAuthLimit, func(c *ioc.Config) { c.Server.RateWrites = "0" })
	author, reader := signUp(t, app, accountOpts{}), signUp(t, app, accountOpts{})
	w := searchWord()
	post := func(title, body string, draft bool, tags ...string) string {
		if tags == nil {
			tags = []string{}
		}
		res := app.call(t, "POST", "/api/articles", author.Token, map[string]any{"article": map[string]any{
			"title": title, "description": "about " + title, "body": body, "tagList": tags, "draft": draft}})
		if res.Status != http.StatusCreated {
			t.Fatalf("publish: %d %s", res.Status, res.Body)
		}
		return articleOf(t, res)["slug"].(string)
	}
	tag := searchWord()
	visible := post("Dragons of "+w, "Here be <dragons> & eggs. "+w, false, tag)
	draft := post("Draft "+w, w, true, tag)
	withdrawn := post("Withdrawn "+w, w, false, tag)
	deleted := post("Deleted "+w, w, false, tag)
	// The anonymous page is cached (up to 5 s): read it now, so the withdrawal below must be
	// taken out of a cached page.
	if got, _ := app.searchSlugs(t, "", "q="+w); len(got) != 3 {
		t.Fatalf("anonymous before: %v", got)
	}
	app.Do("POST", "/api/articles/"+withdrawn+"/withdraw", author.Token, nil).Expect(t, http.StatusOK)
	app.Do("DELETE", "/api/articles/"+deleted, author.Token, nil).Expect(t, http.StatusNoContent)

	queries := []string{"q=" + w, "q=" + url.QueryEscape(w+" or nothing"), "q=" + url.QueryEscape(`"of `+w+`"`) + "&tag=" + tag,
		"q=" + w + "&author=" + author.Username, "q=" + url.QueryEscape("-"+searchWord()+" "+w)}
	for _, q := range queries {
		for _, token := range []string{"", reader.Token, author.Token} {
			for range fleetSize(t) { // each request may land on another instance
				if got, _ := app.searchSlugs(t, token, q); !slices.Equal(got, []string{visible}) {
					t.Fatalf("%s (token %v): %v, want only %s (draft %s, withdrawn %s, deleted %s)", q, token != "", got, visible, draft, withdrawn, deleted)
				}
			}
		}
	}
	_, body := app.searchSlugs(t, reader.Token, "q=dragon+"+w)
	hit := body["articles"].([]any)[0].(map[string]any)
	snippet, _ := hit["snippet"].(string)
	if !strings.Contains(snippet, "<mark>") || strings.Contains(snippet, "<dragons>") || hit["body"] != nil || hit["author"] == nil {
		t.Fatalf("hit %v: want a summary with a marked, escaped snippet", hit)
	}

	// Pages: limit 2 over 5 hits, with a publish between pages.
	for i := range 4 {
		post(fmt.Sprintf("Page %d %s", i, w), w, false)
	}
	var seen []string
	next := ""
	for page := 0; page < 5; page++ {
		q := "q=" + w + "&limit=2"
		if next != "" {
			q += "&cursor=" + next
		}
		got, body := app.searchSlugs(t, reader.Token, q)
		seen = append(seen, got...)
		post("Newcomer "+w, w+" "+w, false)
		n, _ := body["nextCursor"].(string)
		if n == "" {
			break
		}
		next = n
	}
	sorted := slices.Clone(seen)
	slices.Sort(sorted)
	if len(seen) != 5 || len(slices.Compact(sorted)) != 5 {
		t.Fatalf("pages held %v, want 5 distinct hits", seen)
	}

	// Bad input is a 422 in the RealWorld shape.
	for _, q := range []string{"", "q=", "q=+++", "q=" + strings.Repeat("x", 257), "q=a%00b", "q=%c0%af", "q=x&limit=0", "q=x&cursor=abc", "q=x&suggest=no"} {
		res := app.call(t, "GET", "/api/search/articles?"+q, "", nil)
		if res.Status != http.StatusUnprocessableEntity || len(errorsOf(t, res)) == 0 {
			t.Errorf("%q: %d %s, want 422 with errors", q, res.Status, res.Body)
		}
	}
}

// TestSearchQueriesNeverA5xx: any text in q, through the whole stack, is an answer or a 4xx.
func TestSearchQueriesNeverA5xx(t *testing.T) {
	parallel(t)
	app := startApp(t)
	acc := signUp(t, app, accountOpts{})
	app.publish(acc.Token, "Search target 缓存击穿")
	qs := []string{`"`, `""`, `"a`, `-`, `--x`, `!x`, `x:*`, `'`, `''`, `\`, `(`, `)`, `&`, `|`, `<->`, `<1>`, `x & y | !z`,
		"or", "and", "not", "the of and", "-or", `"or"`, "缓", "缓存 -击穿", `"缓存"`, "ｘ", "\u200b", "x\u0301", "🐉", "a'b", "a\\b",
		strings.Repeat("缓存", 128), strings.Repeat("(", 256), strings.Repeat(`"a" `, 64), strings.Repeat("-", 256)}
	for range 50 {
		var b strings.Builder
		for range 1 + rand.IntN(30) {
			b.WriteRune(rune(0x20 + rand.IntN(0x3000)))
		}
		qs = append(qs, b.String())
	}
	for _, q := range qs {
		res := app.call(t, "GET", "/api/search/articles?q="+url.QueryEscape(q), acc.Token, nil)
		if res.Status >= 500 {
			t.Fatalf("q %q: %d %s", q, res.Status, res.Body)
		}
	}
}

package e2e

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/repository"
	"github.com/inkwell-dev/inkwell/repository/pg"
	"github.com/inkwell-dev/inkwell/repository/search"
)

// TestSearchSuggestionsPeopleAndTags: once the lexicon pass has folded an article, a query with
// one of its words misspelt finds nothing, is told the word and (by default) gets its hits; the
// people and tag search boxes find the author and the tag by a prefix.
func TestSearchSuggestionsPeopleAndTags(t *testing.T) {
	parallel(t)
	app := startApp(t, noAuthLimit, func(c *ioc.Config) { c.Server.RateWrites = "0" })
	author := signUp(t, app, accountOpts{Username: "lexi" + searchWord()[2:]})
	w, tag := searchWord(), searchWord()
	for w[4] == w[5] { // swapping two equal letters would misspell nothing (1 word in 20)
		w = searchWord()
	}
	res := app.call(t, "POST", "/api/articles", author.Token, map[string]any{"article": map[string]any{
		"title": "Notes on " + w, "description": "a word of its own", "body": "The " + w + " is rare.", "tagList": []string{tag}}})
	if res.Status != http.StatusCreated {
		t.Fatalf("publish: %d %s", res.Status, res.Body)
	}
	slug := articleOf(t, res)["slug"].(string)

	app.foldLexicon(t)

	misspelt := w[:4] + string(w[5]) + string(w[4]) + w[6:] // two neighbours swapped
	slugs, body := app.searchSlugs(t, "", "q="+misspelt)
	if body["suggestion"] != w || body["suggestionApplied"] != true || !slices.Equal(slugs, []string{slug}) {
		t.Errorf("q=%s: suggestion %v (applied %v), hits %v; want %s applied and [%s]", misspelt, body["suggestion"], body["suggestionApplied"], slugs, w, slug)
	}
	slugs, body = app.searchSlugs(t, author.Token, "suggest=false&q=Read+"+strings.ToUpper(misspelt))
	if body["suggestion"] != "Read "+w || body["suggestionApplied"] != false || len(slugs) != 0 {
		t.Errorf("suggest=false: suggestion %v (applied %v), hits %v; want %q, not applied, no hits", body["suggestion"], body["suggestionApplied"], slugs, "Read "+w)
	}

	people := app.call(t, "GET", "/api/search/users?q="+url.QueryEscape(strings.ToUpper(author.Username[:6])), "", nil).Expect(t, http.StatusOK).JSON(t)
	found := false
	for _, p := range people["profiles"].([]any) {
		found = found || p.(map[string]any)["username"] == author.Username
	}
	if !found {
		t.Errorf("people search by a prefix of %s: %v", author.Username, people)
	}
	tags := app.call(t, "GET", "/api/search/tags?q="+tag[:5], "", nil).Expect(t, http.StatusOK).JSON(t)
	if got := tags["tags"].([]any); len(got) != 1 || got[0] != tag {
		t.Errorf("tag search by a prefix of %s: %v", tag, got)
	}
	app.call(t, "GET", "/api/search/users?q=%20", "", nil).Expect(t, http.StatusUnprocessableEntity)
	app.call(t, "GET", "/api/search/tags?q="+strings.Repeat("x", 257), "", nil).Expect(t, http.StatusUnprocessableEntity)
}

// foldLexicon does what the every-minute lexicon job does on one instance.
func (a *testApp) foldLexicon(t *testing.T) {
	t.Helper()
	if _, err := search.NewLexicon(pg.SessionPool{Pool: a.DB.Pool}, repository.NewQuerier()).Pass(context.Background(),
		search.LexiconPassOptions{Wait: true}); err != nil {
		t.Fatalf("lexicon pass: %v", err)
	}
}

// TestSearchSuggestions_FollowRemovals: "did you mean" stops suggesting the words of a withdrawn,
// edited or deleted article once the lexicon pass has run, and learns a republished article's
// and an edit's words. (The lexicon used to only ever add: a removed text's words were suggested
// for ever.) Searches are signed in, so no cached anonymous answer hides a change.
func TestSearchSuggestions_FollowRemovals(t *testing.T) {
	parallel(t)
	app := startApp(t, noAuthLimit, func(c *ioc.Config) { c.Server.RateWrites = "0" })
	author := signUp(t, app, accountOpts{})
	reader := signUp(t, app, accountOpts{})
	// misspell swaps two neighbours that differ (a word with equal letters there is drawn again).
	word := func() (string, string) {
		for {
			if w := searchWord(); w[4] != w[5] {
				return w, w[:4] + string(w[5]) + string(w[4]) + w[6:]
			}
		}
	}
	suggestion := func(q string) any {
		t.Helper()
		_, body := app.searchSlugs(t, reader.Token, "suggest=false&q="+q)
		return body["suggestion"]
	}
	w, misspelt := word()
	slug := articleOf(t, app.call(t, "POST", "/api/articles", author.Token, map[string]any{"article": map[string]any{
		"title": "Notes", "description": "a word of its own", "body": "The " + w + " is rare."}}).Expect(t, http.StatusCreated))["slug"].(string)
	app.foldLexicon(t)
	if got := suggestion(misspelt); got != w {
		t.Fatalf("published: q=%s suggests %v, want %s", misspelt, got, w)
	}

	app.call(t, "POST", "/api/articles/"+slug+"/withdraw", author.Token, nil).Expect(t, http.StatusOK)
	app.foldLexicon(t)
	if got := suggestion(misspelt); got != nil {
		t.Errorf("withdrawn: q=%s still suggests %v", misspelt, got)
	}

	app.call(t, "POST", "/api/articles/"+slug+"/publish", author.Token, nil).Expect(t, http.StatusOK)
	app.foldLexicon(t)
	if got := suggestion(misspelt); got != w {
		t.Errorf("republished: q=%s suggests %v, want %s", misspelt, got, w)
	}

	edited, misspeltEdited := word()
	app.call(t, "PUT", "/api/articles/"+slug, author.Token, map[string]any{"article": map[string]any{"body": "Now " + edited + " instead."}}).
		Expect(t, http.StatusOK)
	app.foldLexicon(t)
	if got := suggestion(misspelt); got != nil {
		t.Errorf("edited away: q=%s still suggests %v", misspelt, got)
	}
	if got := suggestion(misspeltEdited); got != edited {
		t.Errorf("edited in: q=%s suggests %v, want %s", misspeltEdited, got, edited)
	}

	app.call(t, "DELETE", "/api/articles/"+slug, author.Token, nil).Expect(t, http.StatusNoContent)
	app.foldLexicon(t)
	if got := suggestion(misspeltEdited); got != nil {
		t.Errorf("deleted: q=%s still suggests %v", misspeltEdited, got)
	}
}

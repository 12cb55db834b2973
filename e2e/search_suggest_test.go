package e2e

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/repository"
)

// TestSearchSuggestionsPeopleAndTags: once the lexicon pass has folded an article, a query with
// one of its words misspelt finds nothing, is told the word and (by default) gets its hits; the
// people and tag search boxes find the author and the tag by a prefix.
func TestSearchSuggestionsPeopleAndTags(t *testing.T) {
	parallel(t)
	app := startApp(t, noAuthLimit, func(c *ioc.Config) { c.RateWrites = "0" })
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

	// What the every-minute job does on one instance (the job waits 5 minutes for an article to
	// settle; the test's article has committed).
	p, err := repository.NewSearchLexicon(app.DB.Pool, repository.NewQuerier()).Pass(context.Background(),
		repository.LexiconPassOptions{SettledBefore: time.Now().Add(time.Minute)})
	if err != nil || !p.Ran || p.Articles == 0 {
		t.Fatalf("lexicon pass: %+v, %v", p, err)
	}

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

package repository_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/inkwell-dev/inkwell/domain"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/service"
)

// word returns a made-up word no other test uses (letters only, so every parser keeps it whole
// and no stemmer changes it).
func word() string {
	const letters = "bcdfghjklmnpqrstvwxz"
	b := []byte("zq")
	for range 8 {
		b = append(b, letters[rand.IntN(len(letters))])
	}
	return string(b)
}

// searchFor runs one search of q (a first page of limit hits unless after is given) and returns
// the page.
func (e *env) searchFor(t *testing.T, q string, o ...func(*service.SearchQuery)) service.SearchPage {
	t.Helper()
	terms, err := domain.ParseSearchQuery(q)
	if err != nil {
		t.Fatalf("parse %q: %v", q, err)
	}
	sq := service.SearchQuery{Terms: terms, Limit: 20}
	for _, f := range o {
		f(&sq)
	}
	page, err := e.search.Search(t.Context(), sq)
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	return page
}

func slugsOf(p service.SearchPage) []string {
	out := make([]string, len(p.Hits))
	for i, h := range p.Hits {
		out[i] = h.Article.Slug
	}
	return out
}

// Relevance: weights, phrases, exclusion, stop words, stemming and or.
func TestSearch_Relevance(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)

	t.Run("a title match ranks above a body that repeats the word", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		w := word()
		inBody := createArticle(t, e, articleOpts{Title: "Plain heading", Body: strings.Repeat(w+" and more words ", 30)})
		inTitle := createArticle(t, e, articleOpts{Title: "All about " + w, Body: "Nothing here repeats it."})
		inDesc := createArticle(t, e, articleOpts{Title: "Another heading", Description: "Notes on " + w, Body: "Plain."})
		got := slugsOf(e.searchFor(t, w))
		if want := []string{inTitle.Slug, inDesc.Slug, inBody.Slug}; !slices.Equal(got, want) {
			t.Fatalf("order %v, want title, description, body %v", got, want)
		}
	})

	t.Run("a quoted phrase needs the words in order", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		w1, w2 := word(), word()
		inOrder := createArticle(t, e, articleOpts{Body: "first " + w1 + " " + w2 + " last"})
		reversed := createArticle(t, e, articleOpts{Body: "first " + w2 + " " + w1 + " last"})
		if got := slugsOf(e.searchFor(t, `"`+w1+" "+w2+`"`)); !slices.Equal(got, []string{inOrder.Slug}) {
			t.Fatalf("phrase found %v, want only %s", got, inOrder.Slug)
		}
		if got := slugsOf(e.searchFor(t, w1+" "+w2)); len(got) != 2 || !slices.Contains(got, reversed.Slug) {
			t.Fatalf("both words found %v, want both articles", got)
		}
	})

	t.Run("a minus excludes a word", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		w, x := word(), word()
		keep := createArticle(t, e, articleOpts{Body: w + " alone"})
		createArticle(t, e, articleOpts{Body: w + " with " + x})
		if got := slugsOf(e.searchFor(t, w+" -"+x)); !slices.Equal(got, []string{keep.Slug}) {
			t.Fatalf("found %v, want only %s", got, keep.Slug)
		}
	})

	t.Run("or finds either word", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		w1, w2 := word(), word()
		a := createArticle(t, e, articleOpts{Body: w1})
		b := createArticle(t, e, articleOpts{Body: w2})
		got := slugsOf(e.searchFor(t, w1+" or "+w2))
		if len(got) != 2 || !slices.Contains(got, a.Slug) || !slices.Contains(got, b.Slug) {
			t.Fatalf("found %v, want %s and %s", got, a.Slug, b.Slug)
		}
	})

	t.Run("stemming: dragons is found by dragon and the other way round", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		w := word()
		a := createArticle(t, e, articleOpts{Body: "Here be dragons, said " + w})
		for _, q := range []string{w + " dragon", w + " dragons", w + " Dragon's"} {
			if got := slugsOf(e.searchFor(t, q)); !slices.Equal(got, []string{a.Slug}) {
				t.Fatalf("%q found %v, want %s", q, got, a.Slug)
			}
		}
	})

	t.Run("stop words only, and any punctuation, answer an empty page without an error", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		createArticle(t, e, articleOpts{Body: "the and of a"})
		for _, q := range []string{"the and of", `" - or | & ! ( ) :* <-> \ '`, "-", `""`, "or", "!!!", "a:*"} {
			if p := e.searchFor(t, q); len(p.Hits) != 0 || p.Total != 0 || p.Next != nil {
				t.Fatalf("%q: %+v, want an empty page", q, p)
			}
		}
	})
}

// Visibility: only published articles are ever found, by any query or filter.
func TestSearch_Visibility(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{})
	w, tag := word(), word()
	author := createUser(t, e.users, userOpts{})
	o := articleOpts{Author: author, Title: "Title " + w, Body: w, Tags: []string{tag}}
	visible := createArticle(t, e, o)
	o.Status = domain.StatusDraft
	draft := createArticle(t, e, o)
	o.Status = ""
	withdrawn := createArticle(t, e, o)
	deleted := createArticle(t, e, o)
	edited := createArticle(t, e, o)
	if _, err := e.articles.Transition(t.Context(), withdrawn.ID, []domain.ArticleStatus{domain.StatusPublished}, domain.StatusWithdrawn); err != nil {
		t.Fatal(err)
	}
	if err := e.articles.Delete(t.Context(), deleted); err != nil {
		t.Fatal(err)
	}
	if _, err := e.articles.Update(t.Context(), edited.ID, func(a *domain.Article) error {
		a.Title, a.Description, a.Body = "Retitled", "Changed", "no longer about it"
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// An edit of a draft keeps it out too.
	if _, err := e.articles.Update(t.Context(), draft.ID, func(a *domain.Article) error { a.Body += " edited"; return nil }); err != nil {
		t.Fatal(err)
	}
	filters := map[string]func(*service.SearchQuery){
		"none":          func(*service.SearchQuery) {},
		"tag":           func(q *service.SearchQuery) { q.Tag = tag },
		"author":        func(q *service.SearchQuery) { q.AuthorID = author.ID },
		"tag and author": func(q *service.SearchQuery) { q.Tag, q.AuthorID = tag, author.ID },
		"shared":        func(q *service.SearchQuery) { q.Shared = true },
	}
	for name, f := range filters {
		for _, q := range []string{w, "title " + w, `"title ` + w + `"`, w + " or nothing", "-" + word() + " " + w} {
			if got := slugsOf(e.searchFor(t, q, f)); !slices.Equal(got, []string{visible.Slug}) {
				t.Fatalf("filter %s, q %q: found %v, want only %s (draft %s withdrawn %s deleted %s edited %s)", name, q, got, visible.Slug, draft.Slug, withdrawn.Slug, deleted.Slug, edited.Slug)
			}
		}
	}
	// Republishing brings it back, with its current text.
	if _, err := e.articles.Transition(t.Context(), withdrawn.ID, []domain.ArticleStatus{domain.StatusWithdrawn}, domain.StatusPublished); err != nil {
		t.Fatal(err)
	}
	if got := slugsOf(e.searchFor(t, w)); len(got) != 2 || !slices.Contains(got, withdrawn.Slug) {
		t.Fatalf("after republishing: %v", got)
	}
	if got := slugsOf(e.searchFor(t, "retitled")); !slices.Contains(got, edited.Slug) {
		t.Fatalf("the edit's new title is not found: %v", got)
	}
	// A filter on another tag or author finds nothing.
	if got := slugsOf(e.searchFor(t, w, func(q *service.SearchQuery) { q.Tag = word() })); len(got) != 0 {
		t.Fatalf("other tag found %v", got)
	}
}

package search_test

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
		"none":           func(*service.SearchQuery) {},
		"tag":            func(q *service.SearchQuery) { q.Tag = tag },
		"author":         func(q *service.SearchQuery) { q.AuthorID = author.ID },
		"tag and author": func(q *service.SearchQuery) { q.Tag, q.AuthorID = tag, author.ID },
		"shared":         func(q *service.SearchQuery) { q.Shared = true },
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

// CJK: runs without spaces are found by any part of two characters or more, and by one
// character; titles outrank bodies there too; snippets mark the matched run.
func TestSearch_CJK(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{})
	w := word() // keeps this test's articles apart from other tests' CJK text
	body := createArticle(t, e, articleOpts{Title: "Caching " + w, Body: "我们今天讨论缓存击穿的问题，以及如何避免。"})
	title := createArticle(t, e, articleOpts{Title: "缓存击穿 " + w, Body: "nothing in the body"})
	japanese := createArticle(t, e, articleOpts{Title: "Japanese " + w, Body: "東京タワーは日本の電波塔です。キャッシュの話をします。"})

	for _, tc := range []struct {
		q    string
		want []string
	}{
		{"缓存", []string{title.Slug, body.Slug}},
		{"击穿", []string{title.Slug, body.Slug}},
		{"缓存击穿", []string{title.Slug, body.Slug}},
		{"穿", []string{title.Slug, body.Slug}}, // one character, the last of a run
		{"缓", []string{title.Slug, body.Slug}}, // one character, the first of a run
		{"击缓", nil},                            // the characters, not in this order
		{"日本", []string{japanese.Slug}},
		{"電波塔", []string{japanese.Slug}},
		{"キャッシュ", []string{japanese.Slug}},
		{"タワー 電波", []string{japanese.Slug}},
		{"缓存 caching", []string{body.Slug}}, // CJK and words together: both required
	} {
		got := slugsOf(e.searchFor(t, tc.q+" "+w))
		if !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
			t.Errorf("%q: found %v, want %v", tc.q, got, tc.want)
		}
	}
	p := e.searchFor(t, "击穿 "+w)
	for _, h := range p.Hits {
		if h.Article.ID == body.ID && !strings.Contains(h.Snippet, "\x01击穿\x02") {
			t.Errorf("snippet %q does not mark 击穿", h.Snippet)
		}
	}
}

// Snippets: matched words are marked, from the page's own articles only.
func TestSearch_Snippets(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{})
	w := word()
	a := createArticle(t, e, articleOpts{Description: "A short summary.",
		Body: strings.Repeat("Filler text comes first. ", 50) + "Then the " + w + " appears with <b>markup</b> \x01 nearby. " + strings.Repeat("More filler. ", 50)})
	p := e.searchFor(t, w)
	if len(p.Hits) != 1 || p.Hits[0].Article.ID != a.ID {
		t.Fatalf("hits %+v", p.Hits)
	}
	s := p.Hits[0].Snippet
	// The article's own \x01 is gone (only marks remain); the text around the word is kept as
	// written (the web layer escapes it).
	if !strings.Contains(s, "\x01"+w+"\x02") || strings.Count(s, "\x01") != 1 || !strings.Contains(s, "<b>markup</b>") {
		t.Fatalf("snippet %q: want the word marked once, and the text around it", s)
	}
	if n := len([]rune(s)); n > 400 {
		t.Fatalf("snippet of %d characters, want a short one", n)
	}

	// Marked are the words whose lexeme the query has: other forms of a word (stemming), in
	// the description too; not a longer word that begins like it, nor a stop word.
	w2 := word()
	b := createArticle(t, e, articleOpts{Description: "Dragons of " + w2 + ".",
		Body: "A dragonfly met the dragon's eggs, a dragoon and " + w2 + "."})
	got := e.searchFor(t, `dragon of `+w2+` -wyvern`)
	if len(got.Hits) != 1 || got.Hits[0].Article.ID != b.ID {
		t.Fatalf("hits %+v", got.Hits)
	}
	want := "\x01Dragons\x02 of \x01" + w2 + "\x02.\nA dragonfly met the \x01dragon\x02's eggs, a dragoon and \x01" + w2 + "\x02"
	if s := got.Hits[0].Snippet; s != want {
		t.Fatalf("snippet\n %q, want\n %q", s, want)
	}
}

// Paging: publishes between pages neither repeat nor skip a hit, and the pages stop at the end.
func TestSearch_CursorStableUnderConcurrentPublishes(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{})
	w := word()
	var want []string
	for i := range 25 {
		// Different weights and lengths, so scores differ and interleave with ids.
		o := articleOpts{Body: strings.Repeat("padding ", i) + w}
		if i%3 == 0 {
			o.Title = "On " + w + " " + word()
		}
		want = append(want, createArticle(t, e, o).Slug)
	}
	page := func(after *domain.SearchCursor) service.SearchPage {
		return e.searchFor(t, w, func(q *service.SearchQuery) { q.Limit, q.After = 10, after })
	}
	var seen []string
	p := page(nil)
	if p.Total != 25 {
		t.Fatalf("total %d, want 25", p.Total)
	}
	for round := 0; ; round++ {
		seen = append(seen, slugsOf(p)...)
		// New articles that would rank first (title matches, newest) arrive between pages.
		for range 3 {
			createArticle(t, e, articleOpts{Title: w + " " + word(), Body: w})
		}
		if p.Next == nil {
			break
		}
		if round > 5 {
			t.Fatal("too many pages")
		}
		p = page(p.Next)
		if p.Total != 25 {
			t.Fatalf("total %d on a later page, want the first page's 25", p.Total)
		}
	}
	sorted := slices.Clone(seen)
	slices.Sort(sorted)
	slices.Sort(want)
	if !slices.Equal(sorted, want) {
		t.Fatalf("pages held %d hits %v, want each of the 25 once %v", len(seen), seen, want)
	}
	// A new first page sees the new articles.
	if p := page(nil); p.Total != 25+3*3 {
		t.Fatalf("new search total %d, want %d", p.Total, 25+9)
	}
	// A forged cursor naming a place far past the last publication still pages on (what the
	// window walk reads for one: TestSearch_ForgedCursorPlaceIsHeldToThePresent).
	forged := *page(nil).Next
	forged.SnapshotSeq = 1 << 50
	if p := page(&forged); len(p.Hits) == 0 {
		t.Fatal("a cursor from the future found nothing after it")
	}
}

// The largest bodies publish and are searchable (a tsvector has size limits), and the backfill
// indexes articles written without a document.
func TestSearch_BigBodiesAndBackfill(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)
	e := setup(t, db, envOpts{})

	t.Run("a 1 MiB body of distinct words and CJK publishes and is found", func(t *testing.T) {
		w, late := word(), word()
		var b strings.Builder
		b.WriteString(w + " ")
		for b.Len() < 1<<20 {
			b.WriteString(word())
			b.WriteByte(' ')
			for range 20 {
				b.WriteRune(rune(0x4e00 + rand.IntN(20000)))
			}
			b.WriteByte(' ')
		}
		b.WriteString(late) // past the indexed part: not searchable, and no error either
		a := createArticle(t, e, articleOpts{Body: b.String()})
		if got := slugsOf(e.searchFor(t, w)); !slices.Equal(got, []string{a.Slug}) {
			t.Fatalf("found %v, want %s", got, a.Slug)
		}
		if _, err := e.articles.Update(t.Context(), a.ID, func(x *domain.Article) error { x.Body += " " + word(); return nil }); err != nil {
			t.Fatalf("edit of the big body: %v", err)
		}
	})

	t.Run("backfill indexes published articles without a document, once", func(t *testing.T) {
		w := word()
		a := createArticle(t, e, articleOpts{Body: w})
		d := createArticle(t, e, articleOpts{Body: w, Status: domain.StatusDraft})
		if _, err := e.pool.Exec(t.Context(), "UPDATE articles SET search_vector = NULL WHERE id = ANY($1)", []int64{a.ID, d.ID}); err != nil {
			t.Fatal(err)
		}
		if got := e.searchFor(t, w); len(got.Hits) != 0 {
			t.Fatalf("found %v before the backfill", slugsOf(got))
		}
		n, err := e.search.BackfillSearch(t.Context())
		if err != nil || n < 1 {
			t.Fatalf("backfill: %d, %v", n, err)
		}
		if got := slugsOf(e.searchFor(t, w)); !slices.Equal(got, []string{a.Slug}) {
			t.Fatalf("after the backfill: %v, want %s", got, a.Slug)
		}
		if n, err := e.search.BackfillSearch(t.Context()); err != nil || n != 0 {
			t.Fatalf("second backfill: %d, %v; want nothing left", n, err)
		}
		if n := e.count(t, "SELECT count(*) FROM articles WHERE id = $1 AND search_vector IS NULL", d.ID); n != 1 {
			t.Fatal("the draft got a document")
		}
	})

	t.Run("backfill places articles without a place in publication order, after the others", func(t *testing.T) {
		w := word()
		older := createArticle(t, e, articleOpts{Body: w + " older"})
		newer := createArticle(t, e, articleOpts{Body: w + " newer"})
		placed := createArticle(t, e, articleOpts{Body: w + " placed"})
		// As a database migrated to 00024 holds them: published before places existed. The older one
		// was published first, though its id came later.
		if _, err := e.pool.Exec(t.Context(), `UPDATE articles SET search_seq = NULL,
			published_at = CASE WHEN id = $1 THEN now() - interval '2 days' ELSE now() - interval '1 day' END
			WHERE id = ANY($2)`, older.ID, []int64{older.ID, newer.ID}); err != nil {
			t.Fatal(err)
		}
		if got := slugsOf(e.searchFor(t, w)); !slices.Equal(got, []string{placed.Slug}) {
			t.Fatalf("before the backfill found %v, want only the placed %s", got, placed.Slug)
		}
		if _, err := e.search.BackfillSearch(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got := e.searchFor(t, w); len(got.Hits) != 3 {
			t.Fatalf("after the backfill found %v, want all three", slugsOf(got))
		}
		if n := e.count(t, `SELECT count(*) FROM articles o, articles n, articles p WHERE o.id = $1 AND n.id = $2 AND p.id = $3
			AND p.search_seq < o.search_seq AND o.search_seq < n.search_seq`, older.ID, newer.ID, placed.ID); n != 1 {
			t.Fatal("places not given in publication order after the placed article")
		}
	})

	t.Run("reindex rebuilds every published document", func(t *testing.T) {
		w := word()
		a := createArticle(t, e, articleOpts{Body: w})
		if _, err := e.pool.Exec(t.Context(), "UPDATE articles SET search_vector = to_tsvector('simple', 'stale') WHERE id = $1", a.ID); err != nil {
			t.Fatal(err)
		}
		var scanned, reindexed int64
		if err := e.search.Reindex(t.Context(), func(s, r int64) { scanned, reindexed = s, r }); err != nil {
			t.Fatal(err)
		}
		if scanned < 1 || reindexed < 1 {
			t.Fatalf("scanned %d, reindexed %d", scanned, reindexed)
		}
		if got := slugsOf(e.searchFor(t, w)); !slices.Equal(got, []string{a.Slug}) {
			t.Fatalf("after reindex: %v", got)
		}
	})
}

// The hit-list cache: shared pages are cached, and a withdrawn article leaves a cached page at
// once; Redis down, PostgreSQL answers.
func TestSearch_Cache(t *testing.T) {
	t.Parallel()
	db := testenv.NewDB(t)

	t.Run("a withdrawn article leaves a cached page", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{})
		w := word()
		a := createArticle(t, e, articleOpts{Body: w})
		b := createArticle(t, e, articleOpts{Body: w})
		shared := func(q *service.SearchQuery) { q.Shared = true }
		if got := e.searchFor(t, w, shared); len(got.Hits) != 2 {
			t.Fatalf("first search: %v", slugsOf(got))
		}
		// Published now: a cached page may not show it yet (up to cache.SearchTTL).
		c := createArticle(t, e, articleOpts{Body: w})
		if got := slugsOf(e.searchFor(t, w, shared)); slices.Contains(got, c.Slug) {
			t.Fatalf("a shared page came from PostgreSQL, not the cache: %v", got)
		}
		if _, err := e.articles.Transition(t.Context(), a.ID, []domain.ArticleStatus{domain.StatusPublished}, domain.StatusWithdrawn); err != nil {
			t.Fatal(err)
		}
		if got := slugsOf(e.searchFor(t, w, shared)); !slices.Equal(got, []string{b.Slug}) {
			t.Fatalf("cached page after the withdrawal: %v, want only %s", got, b.Slug)
		}
		// A signed-in reader's search never reads the cache.
		if got := slugsOf(e.searchFor(t, w)); len(got) != 2 || !slices.Contains(got, c.Slug) {
			t.Fatalf("unshared: %v", got)
		}
	})

	t.Run("Redis down: PostgreSQL answers", func(t *testing.T) {
		t.Parallel()
		e := setup(t, db, envOpts{DeadRedis: true})
		w := word()
		a := createArticle(t, e, articleOpts{Body: w})
		if got := slugsOf(e.searchFor(t, w, func(q *service.SearchQuery) { q.Shared = true })); !slices.Equal(got, []string{a.Slug}) {
			t.Fatalf("found %v", got)
		}
	})
}

// A page's counters are read with its candidates: the sums over the counter shards, as the
// counters' own reads give them, so the views need no second lookup.
func TestSearch_PageCountersAreTheStores(t *testing.T) {
	t.Parallel()
	e := setup(t, testenv.NewDB(t), envOpts{})
	w := word()
	liked := createArticle(t, e, articleOpts{Body: w})
	plain := createArticle(t, e, articleOpts{Body: w})
	for range 2 {
		if err := e.inter.Like(t.Context(), domain.BizArticle, liked.ID, createUser(t, e.users, userOpts{}).ID); err != nil {
			t.Fatal(err)
		}
	}
	// Reads and collects on a shard of their own: the page sums the shards.
	if _, err := e.pool.Exec(t.Context(), `INSERT INTO interactives (biz, biz_id, shard, read_cnt, collect_cnt, version)
		VALUES ('article', $1, 7, 5, 3, 1)`, liked.ID); err != nil {
		t.Fatal(err)
	}
	page := e.searchFor(t, w)
	want, err := e.inter.Counters(t.Context(), domain.BizArticle, []int64{liked.ID, plain.ID})
	if err != nil {
		t.Fatal(err)
	}
	if want[liked.ID] != (domain.Counters{Reads: 5, Likes: 2, Collects: 3}) {
		t.Fatalf("the counters' own read: %+v", want[liked.ID])
	}
	if len(page.Hits) != 2 || len(page.Counters) != 2 || page.Counters[liked.ID] != want[liked.ID] || page.Counters[plain.ID] != want[plain.ID] {
		t.Fatalf("page counters %+v for %v, want %+v", page.Counters, slugsOf(page), want)
	}
}

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/apptest"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

func articleOf(t *testing.T, r response) map[string]any {
	t.Helper()
	return r.Article(t)
}

func articlesOf(t *testing.T, r response) ([]map[string]any, float64) {
	t.Helper()
	m := r.JSON(t)
	raw, ok := m["articles"].([]any)
	if !ok {
		t.Fatalf("no articles in %s", r.Body)
	}
	out := make([]map[string]any, len(raw))
	for i, a := range raw {
		out[i] = a.(map[string]any)
	}
	return out, m["articlesCount"].(float64)
}

func newArticle(title string, tags ...string) map[string]any {
	return apptest.NewArticle(title, tags...)
}

var isoMillis = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

func TestArticlesJourney(t *testing.T) {
	parallel(t)
	app := startApp(t)
	author := app.Register("author1")
	reader := app.Register("reader1")

	// Create: 201, slug from the title, every RW and EXT field present.
	created := articleOf(t, app.Do("POST", "/api/articles", author, newArticle("How to train your dragon", "dragons", "training", "dragons")).Expect(t, http.StatusCreated))
	if created["slug"] != "how-to-train-your-dragon" || created["status"] != "published" || created["version"] != 1.0 {
		t.Fatalf("created %v", created)
	}
	if tags := created["tagList"].([]any); len(tags) != 2 || tags[0] != "dragons" || tags[1] != "training" {
		t.Fatalf("tags not normalized: %v", tags)
	}
	for _, f := range []string{"createdAt", "updatedAt"} {
		if !isoMillis.MatchString(created[f].(string)) {
			t.Fatalf("%s %q is not ISO 8601 with milliseconds", f, created[f])
		}
	}
	for _, f := range []string{"favorited", "favoritesCount", "readsCount", "collected", "collectsCount", "body", "description", "author"} {
		if _, ok := created[f]; !ok {
			t.Fatalf("article lacks %q: %v", f, created)
		}
	}
	// Same title again: a distinct, still URL-safe slug.
	second := articleOf(t, app.Do("POST", "/api/articles", author, newArticle("How to train your dragon")).Expect(t, http.StatusCreated))
	if s := second["slug"].(string); s == "how-to-train-your-dragon" || !strings.HasPrefix(s, "how-to-train-your-dragon-") {
		t.Fatalf("second slug %q", s)
	}

	// Read anonymously and as a reader.
	got := articleOf(t, app.Do("GET", "/api/articles/how-to-train-your-dragon", "", nil).Expect(t, http.StatusOK))
	if got["body"] != "body of How to train your dragon" || got["author"].(map[string]any)["username"] != "author1" {
		t.Fatalf("get %v", got)
	}

	// Favorite twice counts once; unfavorite twice is harmless.
	for range 2 {
		f := articleOf(t, app.Do("POST", "/api/articles/how-to-train-your-dragon/favorite", reader, nil).Expect(t, http.StatusOK))
		if f["favorited"] != true || f["favoritesCount"] != 1.0 {
			t.Fatalf("favorite %v", f)
		}
	}
	if f := articleOf(t, app.Do("GET", "/api/articles/how-to-train-your-dragon", reader, nil).Expect(t, 200)); f["favorited"] != true || f["favoritesCount"] != 1.0 {
		t.Fatalf("after favorite %v", f)
	}
	list, n := articlesOf(t, app.Do("GET", "/api/articles?favorited=reader1", "", nil).Expect(t, 200))
	if n != 1 || len(list) != 1 || list[0]["slug"] != "how-to-train-your-dragon" {
		t.Fatalf("favorited filter: %d %v", int(n), list)
	}
	for range 2 {
		f := articleOf(t, app.Do("DELETE", "/api/articles/how-to-train-your-dragon/favorite", reader, nil).Expect(t, http.StatusOK))
		if f["favorited"] != false || f["favoritesCount"] != 0.0 {
			t.Fatalf("unfavorite %v", f)
		}
	}

	// Update: the slug stays, the version moves; a stale version is 409.
	upd := articleOf(t, app.Do("PUT", "/api/articles/how-to-train-your-dragon", author, map[string]any{"article": map[string]any{
		"title": "Did you train your dragon?", "version": 1,
	}}).Expect(t, http.StatusOK))
	if upd["slug"] != "how-to-train-your-dragon" || upd["title"] != "Did you train your dragon?" || upd["version"] != 2.0 {
		t.Fatalf("update %v", upd)
	}
	stale := app.Do("PUT", "/api/articles/how-to-train-your-dragon", author, map[string]any{"article": map[string]any{"body": "x", "version": 1}}).Expect(t, http.StatusConflict)
	if _, ok := errorsOf(t, stale)["version"]; !ok {
		t.Fatalf("stale version error %s", stale.Body)
	}
	app.Do("PUT", "/api/articles/how-to-train-your-dragon", reader, map[string]any{"article": map[string]any{"body": "mine now"}}).Expect(t, http.StatusForbidden)
	app.Do("DELETE", "/api/articles/how-to-train-your-dragon", reader, nil).Expect(t, http.StatusForbidden)

	// Comments: numbered, listed, paged with after=, deleted only by their author.
	var ids []string
	for i := 1; i <= 3; i++ {
		c := app.Do("POST", "/api/articles/how-to-train-your-dragon/comments", reader, map[string]any{"comment": map[string]any{"body": fmt.Sprintf("comment %d", i)}}).Expect(t, http.StatusOK)
		cm := c.JSON(t)["comment"].(map[string]any)
		if cm["seq"] != float64(i) || cm["author"].(map[string]any)["username"] != "reader1" {
			t.Fatalf("comment %d: %v", i, cm)
		}
		ids = append(ids, fmt.Sprint(int64(cm["id"].(float64))))
	}
	all := app.Do("GET", "/api/articles/how-to-train-your-dragon/comments", "", nil).Expect(t, 200).JSON(t)["comments"].([]any)
	if len(all) != 3 {
		t.Fatalf("comments %v", all)
	}
	more := app.Do("GET", "/api/articles/how-to-train-your-dragon/comments?after=1&limit=1", "", nil).Expect(t, 200).JSON(t)["comments"].([]any)
	if len(more) != 1 || more[0].(map[string]any)["seq"] != 2.0 {
		t.Fatalf("load-more %v", more)
	}
	app.Do("DELETE", "/api/articles/how-to-train-your-dragon/comments/"+ids[0], author, nil).Expect(t, http.StatusForbidden)
	if r := app.Do("DELETE", "/api/articles/how-to-train-your-dragon/comments/"+ids[0], reader, nil).Expect(t, http.StatusNoContent); len(r.Body) != 0 {
		t.Fatalf("204 with a body: %s", r.Body)
	}
	app.Do("DELETE", "/api/articles/how-to-train-your-dragon/comments/"+ids[0], reader, nil).Expect(t, http.StatusNotFound)
	app.Do("DELETE", "/api/articles/"+second["slug"].(string)+"/comments/"+ids[1], reader, nil).Expect(t, http.StatusNotFound)

	// Tags, lists and filters.
	if tags := app.Do("GET", "/api/tags", "", nil).Expect(t, 200).JSON(t)["tags"].([]any); len(tags) != 2 {
		t.Fatalf("tags %v", tags)
	}
	list, n = articlesOf(t, app.Do("GET", "/api/articles?tag=dragons", "", nil).Expect(t, 200))
	if _, hasBody := list[0]["body"]; n != 1 || hasBody {
		t.Fatalf("tag filter %v (lists are summaries, without bodies)", list)
	}
	if _, n = articlesOf(t, app.Do("GET", "/api/articles?author=author1", "", nil).Expect(t, 200)); n != 2 {
		t.Fatalf("author filter count %v", n)
	}
	if l, n := articlesOf(t, app.Do("GET", "/api/articles?author=nobody", "", nil).Expect(t, 200)); n != 0 || len(l) != 0 {
		t.Fatalf("unknown author %v", l)
	}

	// Feed: empty until the reader follows the author.
	if _, n = articlesOf(t, app.Do("GET", "/api/articles/feed", reader, nil).Expect(t, 200)); n != 0 {
		t.Fatalf("feed before follow %v", n)
	}
	app.Do("POST", "/api/profiles/author1/follow", reader, nil).Expect(t, 200)
	feed, n := articlesOf(t, app.Do("GET", "/api/articles/feed", reader, nil).Expect(t, 200))
	if n != 2 || feed[0]["author"].(map[string]any)["following"] != true {
		t.Fatalf("feed after follow %v", feed)
	}
	app.Do("GET", "/api/articles/feed", "", nil).Expect(t, http.StatusUnauthorized)

	// Delete: 204, then 404 for everyone.
	app.Do("DELETE", "/api/articles/how-to-train-your-dragon", author, nil).Expect(t, http.StatusNoContent)
	app.Do("GET", "/api/articles/how-to-train-your-dragon", author, nil).Expect(t, http.StatusNotFound)
	app.Do("GET", "/api/articles/how-to-train-your-dragon/comments", "", nil).Expect(t, http.StatusNotFound)
}

// TestArticlesTagListSorted: tagList reads alphabetically wherever an article appears, whatever
// order it was written in (the RealWorld collection expects ["dragons","training"]), and so does
// an article stored before tags were sorted on write.
func TestArticlesTagListSorted(t *testing.T) {
	parallel(t)
	app := startApp(t)
	author := app.Register("tagger")
	reader := app.Register("tagreader")
	app.Do("POST", "/api/profiles/tagger/follow", reader, nil).Expect(t, http.StatusOK)
	want := []any{"dragons", "training"}
	requireTags := func(what string, got any) {
		t.Helper()
		if tags, ok := got.([]any); !ok || fmt.Sprint(tags) != fmt.Sprint(want) {
			t.Fatalf("%s: tagList %v, want %v", what, got, want)
		}
	}
	requireListTags := func(what, path, token string) {
		t.Helper()
		list, _ := articlesOf(t, app.Do("GET", path, token, nil).Expect(t, http.StatusOK))
		if len(list) != 1 {
			t.Fatalf("%s: %d articles, want 1", what, len(list))
		}
		requireTags(what, list[0]["tagList"])
	}

	created := articleOf(t, app.Do("POST", "/api/articles", author, newArticle("Sorted tags", "training", "dragons")).Expect(t, http.StatusCreated))
	requireTags("create", created["tagList"])
	slug := created["slug"].(string)
	for i := range 2 { // the second read is served from the caches
		requireTags(fmt.Sprintf("get #%d", i+1), articleOf(t, app.Do("GET", "/api/articles/"+slug, "", nil).Expect(t, http.StatusOK))["tagList"])
	}
	requireListTags("list", "/api/articles", "")
	requireListTags("list by tag", "/api/articles?tag=training", "")
	requireListTags("list by author", "/api/articles?author=tagger", "")
	requireListTags("feed", "/api/articles/feed", reader)
	requireListTags("own list", "/api/user/articles", author)

	want = []any{"apple", "zebra"}
	updated := articleOf(t, app.Do("PUT", "/api/articles/"+slug, author, map[string]any{"article": map[string]any{
		"tagList": []string{"zebra", "apple", "zebra"},
	}}).Expect(t, http.StatusOK))
	requireTags("update", updated["tagList"])
	requireTags("get after update", articleOf(t, app.Do("GET", "/api/articles/"+slug, "", nil).Expect(t, http.StatusOK))["tagList"])

	// A row written before the change keeps its order in PostgreSQL; an instance with empty caches
	// (a Redis prefix of its own) reads it from there and still answers in order.
	if _, err := app.DB.Pool.Exec(t.Context(), "UPDATE articles SET tag_list = ARRAY['zebra', 'apple'] WHERE slug = $1", slug); err != nil {
		t.Fatal(err)
	}
	fresh := startReplica(t, app.DB, testenv.NewRedis(t).Prefix)
	requireTags("legacy row, get", articleOf(t, fresh.Do("GET", "/api/articles/"+slug, "", nil).Expect(t, http.StatusOK))["tagList"])
	list, _ := articlesOf(t, fresh.Do("GET", "/api/articles?author=tagger", "", nil).Expect(t, http.StatusOK))
	if len(list) != 1 {
		t.Fatalf("legacy row, list: %v", list)
	}
	requireTags("legacy row, list", list[0]["tagList"])
}

func TestArticleDraftsAndPublishing(t *testing.T) {
	parallel(t)
	app := startApp(t)
	author := app.Register("writer")
	reader := app.Register("onlooker")

	draft := articleOf(t, app.Do("POST", "/api/articles", author, map[string]any{"article": map[string]any{
		"title": "Secret plans", "description": "d", "body": "b", "draft": true,
	}}).Expect(t, http.StatusCreated))
	if draft["status"] != "draft" {
		t.Fatalf("draft %v", draft)
	}
	path := "/api/articles/" + draft["slug"].(string)

	// Readers cannot see, favorite or comment on a draft; the author can see it.
	app.Do("GET", path, "", nil).Expect(t, 404)
	app.Do("GET", path, reader, nil).Expect(t, 404)
	app.Do("POST", path+"/favorite", reader, nil).Expect(t, 404)
	app.Do("POST", path+"/comments", reader, map[string]any{"comment": map[string]any{"body": "hi"}}).Expect(t, 404)
	app.Do("POST", path+"/publish", reader, nil).Expect(t, 404)
	app.Do("GET", path, author, nil).Expect(t, 200)
	if _, n := articlesOf(t, app.Do("GET", "/api/articles", "", nil).Expect(t, 200)); n != 0 {
		t.Fatalf("draft listed publicly")
	}
	mine, n := articlesOf(t, app.Do("GET", "/api/user/articles?status=draft", author, nil).Expect(t, 200))
	if n != 1 || mine[0]["status"] != "draft" {
		t.Fatalf("own drafts %v", mine)
	}
	if _, hasBody := mine[0]["body"]; hasBody {
		t.Fatalf("the author's list is summaries without bodies: %v", mine[0])
	}

	// Withdrawing a draft is illegal; publishing it works once.
	app.Do("POST", path+"/withdraw", author, nil).Expect(t, http.StatusConflict)
	pub := articleOf(t, app.Do("POST", path+"/publish", author, nil).Expect(t, 200))
	if pub["status"] != "published" {
		t.Fatalf("publish %v", pub)
	}
	conflict := app.Do("POST", path+"/publish", author, nil).Expect(t, http.StatusConflict)
	if _, ok := errorsOf(t, conflict)["status"]; !ok {
		t.Fatalf("illegal transition error %s", conflict.Body)
	}
	app.Do("GET", path, reader, nil).Expect(t, 200)
	// The author's cached first page was invalidated by the publish.
	if mine, _ := articlesOf(t, app.Do("GET", "/api/user/articles", author, nil).Expect(t, 200)); mine[0]["status"] != "published" {
		t.Fatalf("stale author page %v", mine)
	}

	// Withdraw: readers get 404 again, the author still sees it.
	app.Do("POST", path+"/withdraw", reader, nil).Expect(t, http.StatusForbidden)
	app.Do("POST", path+"/withdraw", author, nil).Expect(t, 200)
	app.Do("GET", path, reader, nil).Expect(t, 404)
	app.Do("GET", path, author, nil).Expect(t, 200)
	app.Do("POST", path+"/publish", author, nil).Expect(t, 200)

	// Unauthenticated writes.
	app.Do("POST", path+"/publish", "", nil).Expect(t, 401)
	app.Do("POST", "/api/articles", "", newArticle("x")).Expect(t, 401)
	app.Do("GET", "/api/user/articles", "", nil).Expect(t, 401)
}

func TestArticlesBadInput(t *testing.T) {
	parallel(t)
	app := startApp(t)
	author := app.Register("badinput")
	other := app.Register("otherone")
	app.Do("POST", "/api/articles", author, newArticle("Existing article")).Expect(t, 201)

	art := func(fields map[string]any) map[string]any { return map[string]any{"article": fields} }
	cases := []struct {
		name, method, path, token string
		body                      any
		status                    int
		field                     string
	}{
		{"create missing fields", "POST", "/api/articles", author, art(map[string]any{}), 422, "title"},
		{"create blank body", "POST", "/api/articles", author, art(map[string]any{"title": "t", "description": "d", "body": "   "}), 422, "body"},
		{"create punctuation title", "POST", "/api/articles", author, art(map[string]any{"title": "!!!", "description": "d", "body": "b"}), 422, "title"},
		{"create oversize title", "POST", "/api/articles", author, art(map[string]any{"title": strings.Repeat("t", 201), "description": "d", "body": "b"}), 422, "title"},
		{"create too many tags", "POST", "/api/articles", author, art(map[string]any{"title": "t", "description": "d", "body": "b", "tagList": strings.Split("a b c d e f g h i j k", " ")}), 422, "tagList"},
		{"create tagList wrong type", "POST", "/api/articles", author, `{"article":{"title":"t","description":"d","body":"b","tagList":"x"}}`, 422, "tagList"},
		{"create malformed JSON", "POST", "/api/articles", author, `{"article":`, 422, "body"},
		{"create oversize body", "POST", "/api/articles", author, `{"article":{"body":"` + strings.Repeat("b", 1<<20) + `"}}`, 413, "body"},
		{"update unknown slug", "PUT", "/api/articles/no-such-article", author, art(map[string]any{"body": "x"}), 404, "body"},
		{"update someone else's", "PUT", "/api/articles/existing-article", other, art(map[string]any{"body": "x"}), 403, "body"},
		{"update empty title", "PUT", "/api/articles/existing-article", author, art(map[string]any{"title": ""}), 422, "title"},
		{"update stale version", "PUT", "/api/articles/existing-article", author, art(map[string]any{"body": "x", "version": 7}), 409, "version"},
		{"get unknown slug", "GET", "/api/articles/no-such-article", "", nil, 404, "body"},
		{"delete unknown slug", "DELETE", "/api/articles/no-such-article", author, nil, 404, "body"},
		{"favorite unknown slug", "POST", "/api/articles/no-such-article/favorite", author, nil, 404, "body"},
		{"comment empty", "POST", "/api/articles/existing-article/comments", other, map[string]any{"comment": map[string]any{"body": ""}}, 422, "body"},
		{"comment oversize", "POST", "/api/articles/existing-article/comments", other, map[string]any{"comment": map[string]any{"body": strings.Repeat("c", 10_001)}}, 422, "body"},
		{"comment without token", "POST", "/api/articles/existing-article/comments", "", map[string]any{"comment": map[string]any{"body": "hi"}}, 401, "token"},
		{"comment on unknown slug", "POST", "/api/articles/no-such-article/comments", other, map[string]any{"comment": map[string]any{"body": "hi"}}, 404, "body"},
		{"comments bad after", "GET", "/api/articles/existing-article/comments?after=-1", "", nil, 422, "after"},
		{"delete comment bad id", "DELETE", "/api/articles/existing-article/comments/abc", author, nil, 404, "body"},
		{"list limit zero", "GET", "/api/articles?limit=0", "", nil, 422, "limit"},
		{"list limit too big", "GET", "/api/articles?limit=101", "", nil, 422, "limit"},
		{"list limit not a number", "GET", "/api/articles?limit=ten", "", nil, 422, "limit"},
		{"list negative offset", "GET", "/api/articles?offset=-1", "", nil, 422, "offset"},
		{"list garbage cursor", "GET", "/api/articles?cursor=bm90LWEtY3Vyc29y", "", nil, 422, "cursor"},
		{"feed bad limit", "GET", "/api/articles/feed?limit=-5", author, nil, 422, "limit"},
		{"own list bad status", "GET", "/api/user/articles?status=archived", author, nil, 422, "status"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			parallel(t)
			res := app.Do(tc.method, tc.path, tc.token, tc.body)
			if res.Status != tc.status {
				t.Fatalf("status %d, want %d; body %s", res.Status, tc.status, res.Body)
			}
			if _, ok := errorsOf(t, res)[tc.field]; !ok {
				t.Fatalf("errors lack %q: %s", tc.field, res.Body)
			}
		})
	}
	t.Run("rejected writes leave nothing behind", func(t *testing.T) {
		if _, n := articlesOf(t, app.Do("GET", "/api/articles?author=badinput", "", nil).Expect(t, 200)); n != 1 {
			t.Fatalf("%v articles, want only the one created", n)
		}
	})
}

func TestArticleKeysetPaging(t *testing.T) {
	parallel(t)
	app := startApp(t)
	author := app.Register("pager")
	for i := range 7 {
		app.Do("POST", "/api/articles", author, newArticle(fmt.Sprintf("Paged article %d", i))).Expect(t, 201)
	}
	seen := map[string]bool{}
	path := "/api/articles?limit=3"
	for page := 0; ; page++ {
		res := app.Do("GET", path, "", nil).Expect(t, 200)
		list, total := articlesOf(t, res)
		if total != 7 {
			t.Fatalf("articlesCount %v", total)
		}
		for _, a := range list {
			if seen[a["slug"].(string)] {
				t.Fatalf("duplicate %s across pages", a["slug"])
			}
			seen[a["slug"].(string)] = true
		}
		next, _ := res.JSON(t)["nextCursor"].(string)
		if next == "" {
			break
		}
		if page > 5 {
			t.Fatal("cursor paging does not end")
		}
		path = "/api/articles?limit=3&cursor=" + next
	}
	if len(seen) != 7 {
		t.Fatalf("saw %d of 7 articles", len(seen))
	}
}

func TestConcurrentFavoritesAndComments(t *testing.T) {
	parallel(t)
	app := startApp(t)
	author := app.Register("popular")
	app.Do("POST", "/api/articles", author, newArticle("Hot take")).Expect(t, 201)
	const n = 20
	tokens := make([]string, n)
	for i := range tokens {
		tokens[i] = app.Register(fmt.Sprintf("fan%d", i))
	}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			<-start
			app.Do("POST", "/api/articles/hot-take/favorite", tokens[i], nil).Expect(t, 200)
		}()
		go func() {
			defer wg.Done()
			<-start
			app.Do("POST", "/api/articles/hot-take/comments", tokens[i], map[string]any{"comment": map[string]any{"body": "first!"}}).Expect(t, 200)
		}()
	}
	close(start)
	wg.Wait()
	if a := articleOf(t, app.Do("GET", "/api/articles/hot-take", "", nil).Expect(t, 200)); a["favoritesCount"] != float64(n) {
		t.Fatalf("favoritesCount %v, want %d", a["favoritesCount"], n)
	}
	comments := app.Do("GET", "/api/articles/hot-take/comments", "", nil).Expect(t, 200).JSON(t)["comments"].([]any)
	for i, c := range comments {
		if c.(map[string]any)["seq"] != float64(i+1) {
			t.Fatalf("comment %d has seq %v", i, c.(map[string]any)["seq"])
		}
	}
	if len(comments) != n {
		t.Fatalf("%d comments, want %d", len(comments), n)
	}
}

func TestCORS(t *testing.T) {
	parallel(t)
	app := startApp(t, func(c *ioc.Config) {
		c.Server.Env, c.Server.CORSOrigins = "prod", "https://conduit.example"
		c.Mail.CodeSender = "http://127.0.0.1:1/codes"
	})
	pre := app.Do("OPTIONS", "/api/articles", "", nil, "Origin", "https://conduit.example", "Access-Control-Request-Method", "POST",
		"Access-Control-Request-Headers", "authorization,content-type")
	if pre.Status != http.StatusNoContent || pre.Header.Get("Access-Control-Allow-Origin") != "https://conduit.example" ||
		!strings.Contains(pre.Header.Get("Access-Control-Allow-Headers"), "Authorization") {
		t.Fatalf("preflight: %d %v", pre.Status, pre.Header)
	}
	if got := app.Do("GET", "/api/tags", "", nil, "Origin", "https://evil.example").Header.Get("Access-Control-Allow-Origin"); got != "" {
		t.Fatalf("disallowed origin got %q", got)
	}
	if got := app.Do("GET", "/api/tags", "", nil, "Origin", "https://conduit.example").Header.Get("Access-Control-Allow-Origin"); got != "https://conduit.example" {
		t.Fatalf("allowed origin got %q", got)
	}
}

// TestTagsAcrossInstances: a RealWorld front end's "Popular Tags" shows a new tag on the next read,
// whichever instance serves it, and drops it once its only article is withdrawn.
func TestTagsAcrossInstances(t *testing.T) {
	parallel(t)
	db := testenv.NewDB(t) // alone: the tag cloud is global to the database
	rds := testenv.NewRedis(t)
	a, b := startReplica(t, db, rds.Prefix), startReplica(t, db, rds.Prefix)
	author := a.Register("tagsauthor")
	tagsOn := func(app *testApp) []string {
		t.Helper()
		var body struct{ Tags []string }
		if err := json.Unmarshal(app.Do("GET", "/api/tags", "", nil).Expect(t, http.StatusOK).Body, &body); err != nil {
			t.Fatal(err)
		}
		return body.Tags
	}
	tagsOn(b) // cached, empty
	slug := articleOf(t, a.Do("POST", "/api/articles", author, newArticle("Tagged", "brandnew")).Expect(t, http.StatusCreated))["slug"].(string)
	for _, app := range []*testApp{b, a} {
		if got := tagsOn(app); !slices.Contains(got, "brandnew") {
			t.Fatalf("tags right after the create = %v, want brandnew among them", got)
		}
	}
	a.Do("POST", "/api/articles/"+slug+"/withdraw", author, nil).Expect(t, http.StatusOK)
	if got := tagsOn(b); slices.Contains(got, "brandnew") {
		t.Fatalf("tags right after withdrawing the only article = %v", got)
	}
}

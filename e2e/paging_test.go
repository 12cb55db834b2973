package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestPaging_NextCursorOnlyWhenANextPageExists walks every paged list whose items fill exactly two
// pages: the first page offers a nextCursor, the second (full, and the last) offers none, and the
// two pages hold every item once. Lists used to offer a cursor after any full page, so a client
// that follows them fetched one empty page at the end of every list. GET /api/user/articles pages
// by cursor like the others (it refused a cursor with 422).
func TestPaging_NextCursorOnlyWhenANextPageExists(t *testing.T) {
	parallel(t)
	app := startApp(t)
	const n, limit = 4, 2
	author := app.Register("pager_author")
	reader := app.Register("pager_reader")
	app.Do("POST", "/api/profiles/pager_author/follow", reader, nil).Expect(t, http.StatusOK)
	folder := app.createFolder(reader, "Two pages")
	var slugs []string // oldest first
	for i := range n {
		slug := articleOf(t, app.Do("POST", "/api/articles", author, newArticle(fmt.Sprintf("Pageable zyxwords %d", i), "paging")).
			Expect(t, http.StatusCreated))["slug"].(string)
		slugs = append(slugs, slug)
		app.Do("POST", "/api/articles/"+slug+"/collect", reader, map[string]any{"collectionId": folderID(folder)}).Expect(t, http.StatusOK)
		app.Do("GET", "/api/articles/"+slug, reader, nil).Expect(t, http.StatusOK) // history
		app.Do("POST", "/api/articles/"+slugs[0]+"/comments", reader, map[string]any{"comment": map[string]any{"body": fmt.Sprint("comment ", i)}}).
			Expect(t, http.StatusOK)
	}
	app.waitFor("the reader's history holds every read", func() bool {
		got, _ := app.history(reader, "?limit=10")
		return len(got) == n
	})
	app.awaitNotifications(reader, n)

	// walk follows nextCursor from the first page and returns what each page held and offered.
	walk := func(t *testing.T, path, filter, token, itemsKey string, id func(map[string]any) string) {
		t.Helper()
		var seen []string
		query, err := url.ParseQuery(filter)
		if err != nil {
			t.Fatal(err)
		}
		query.Set("limit", fmt.Sprint(limit))
		for page := 1; ; page++ {
			body := app.Do("GET", path+"?"+query.Encode(), token, nil).Expect(t, http.StatusOK).JSON(t)
			items, _ := body[itemsKey].([]any)
			for _, it := range items {
				seen = append(seen, id(it.(map[string]any)))
			}
			next, hasNext := body["nextCursor"].(string)
			switch {
			case page == 1 && (!hasNext || len(items) != limit):
				t.Fatalf("page 1 of %s: %d items, nextCursor %q; want %d and a cursor", path, len(items), next, limit)
			case page == 2 && (hasNext || len(items) != limit):
				t.Fatalf("page 2 of %s (the last, full): %d items, nextCursor %q; want %d and no cursor", path, len(items), next, limit)
			case page == 2:
				sorted := slices.Clone(seen)
				slices.Sort(sorted)
				if len(slices.Compact(sorted)) != n {
					t.Fatalf("%s: the two pages held %v, want %d different items", path, seen, n)
				}
				return
			}
			query.Set("cursor", next)
		}
	}
	slugOf := func(a map[string]any) string { return a["slug"].(string) }
	for _, l := range []struct{ path, filter, token string }{
		{"/api/articles", "", ""},
		{"/api/articles", "tag=paging", ""},
		{"/api/articles", "author=pager_author", reader},
		{"/api/articles/feed", "", reader},
		{"/api/user/articles", "", author},
		{"/api/user/history", "", reader},
		{folder + "/articles", "", reader},
	} {
		t.Run(strings.TrimSuffix(l.path+"?"+l.filter, "?"), func(t *testing.T) { walk(t, l.path, l.filter, l.token, "articles", slugOf) })
	}
	t.Run("notifications", func(t *testing.T) {
		walk(t, "/api/user/notifications", "", reader, "notifications", func(m map[string]any) string { return fmt.Sprint(m["id"]) })
	})
	t.Run("comments", func(t *testing.T) {
		walk(t, "/api/articles/"+slugs[0]+"/comments", "", "", "comments", func(m map[string]any) string { return fmt.Sprint(m["seq"]) })
	})
	t.Run("search", func(t *testing.T) {
		// Search pages by its own cursor, and knew its candidates already; it keeps the rule.
		q := url.Values{"q": {"zyxwords"}, "limit": {fmt.Sprint(limit)}}
		first := app.Do("GET", "/api/search/articles?"+q.Encode(), "", nil).Expect(t, http.StatusOK).JSON(t)
		next, ok := first["nextCursor"].(string)
		if !ok {
			t.Fatalf("search page 1 has no cursor: %v", first)
		}
		q.Set("cursor", next)
		if second := app.Do("GET", "/api/search/articles?"+q.Encode(), "", nil).Expect(t, http.StatusOK).JSON(t); second["nextCursor"] != nil {
			t.Fatalf("the last search page offers a cursor: %v", second)
		}
	})
	t.Run("user/articles pages by cursor in every status filter, offset still works", func(t *testing.T) {
		app.Do("POST", "/api/articles/"+slugs[3]+"/withdraw", author, nil).Expect(t, http.StatusOK)
		body := app.Do("GET", "/api/user/articles?status=published&limit=2", author, nil).Expect(t, http.StatusOK).JSON(t)
		next, _ := body["nextCursor"].(string)
		got, _, last := slugsOf(t, app.Do("GET", "/api/user/articles?status=published&limit=2&cursor="+next, author, nil).Expect(t, http.StatusOK))
		if !slices.Equal(got, []string{slugs[0]}) || last != "" {
			t.Fatalf("second page of published: %v, cursor %q; want [%s] and none", got, last, slugs[0])
		}
		got, _, _ = slugsOf(t, app.Do("GET", "/api/user/articles?limit=2&offset=2", author, nil).Expect(t, http.StatusOK))
		if !slices.Equal(got, []string{slugs[1], slugs[0]}) {
			t.Fatalf("offset 2: %v, want [%s %s]", got, slugs[1], slugs[0])
		}
	})
}

package e2e

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/inkwell-dev/inkwell/ioc"
	"github.com/inkwell-dev/inkwell/service"
)

// folderOf is the "collection" object of a response.
func folderOf(t *testing.T, r response) map[string]any {
	t.Helper()
	c, ok := r.JSON(t)["collection"].(map[string]any)
	if !ok {
		t.Fatalf("no collection in %s", r.Body)
	}
	return c
}

// foldersOf is the "collections" list of a response.
func foldersOf(t *testing.T, r response) []map[string]any {
	t.Helper()
	raw, ok := r.JSON(t)["collections"].([]any)
	if !ok {
		t.Fatalf("no collections in %s", r.Body)
	}
	out := make([]map[string]any, len(raw))
	for i, c := range raw {
		out[i] = c.(map[string]any)
	}
	return out
}

// folderBody is the request body of a create or update; nil fields are left out.
func folderBody(name, description *string) map[string]any {
	c := map[string]any{}
	if name != nil {
		c["name"] = *name
	}
	if description != nil {
		c["description"] = *description
	}
	return map[string]any{"collection": c}
}

func str(s string) *string { return &s }

// createFolder makes a folder through the API and returns its path, /api/collections/<id>.
func (a *testApp) createFolder(token, name string) string {
	a.T.Helper()
	c := folderOf(a.T, a.Do("POST", "/api/collections", token, folderBody(&name, nil)).Expect(a.T, http.StatusCreated))
	return fmt.Sprintf("/api/collections/%d", int64(c["id"].(float64)))
}

// folderID is the numeric id at the end of a folder path.
func folderID(path string) int64 {
	var id int64
	_, _ = fmt.Sscanf(path[strings.LastIndex(path, "/")+1:], "%d", &id)
	return id
}

// publish creates a published article through the API and returns its slug.
func (a *testApp) publish(token, title string) string {
	a.T.Helper()
	return articleOf(a.T, a.Do("POST", "/api/articles", token, newArticle(title)).Expect(a.T, http.StatusCreated))["slug"].(string)
}

// collectState is what a viewer sees of an article's collect fields.
func collectState(t *testing.T, a map[string]any) (bool, float64) {
	t.Helper()
	collected, ok1 := a["collected"].(bool)
	n, ok2 := a["collectsCount"].(float64)
	if !ok1 || !ok2 {
		t.Fatalf("article lacks collected/collectsCount: %v", a)
	}
	return collected, n
}

// wantCollect fails unless the article shows collected and collectsCount as given.
func wantCollect(t *testing.T, what string, a map[string]any, collected bool, n float64) {
	t.Helper()
	if c, got := collectState(t, a); c != collected || got != n {
		t.Fatalf("%s: collected %v, collectsCount %v; want %v, %v", what, c, got, collected, n)
	}
}

func TestCollectionsJourney(t *testing.T) {
	parallel(t)
	app := startApp(t)
	owner := app.Register("collector")
	other := app.Register("stranger")

	// Create: 201 with every field.
	created := folderOf(t, app.Do("POST", "/api/collections", owner, folderBody(str("  Reading list "), str("later"))).Expect(t, http.StatusCreated))
	if created["id"].(float64) <= 0 || created["name"] != "Reading list" || created["description"] != "later" || created["articlesCount"] != 0.0 {
		t.Fatalf("created %v", created)
	}
	for _, f := range []string{"createdAt", "updatedAt"} {
		if s, _ := created[f].(string); !isoMillis.MatchString(s) {
			t.Fatalf("%s %q is not ISO 8601 with milliseconds", f, created[f])
		}
	}
	reading := fmt.Sprintf("/api/collections/%d", int64(created["id"].(float64)))
	second := app.createFolder(owner, "Second")
	theirs := app.createFolder(other, "Reading list") // the same name is fine for another owner

	// List, rename, delete (before the parallel subtests below, which leave these folders alone).
	scratch := app.createFolder(owner, "Scratch")
	list := foldersOf(t, app.Do("GET", "/api/collections", owner, nil).Expect(t, http.StatusOK))
	if len(list) != 3 || list[0]["name"] != "Reading list" || list[1]["name"] != "Second" || list[2]["name"] != "Scratch" {
		t.Fatalf("owner's folders %v, want [Reading list, Second, Scratch] oldest first", list)
	}
	if l := foldersOf(t, app.Do("GET", "/api/collections", other, nil).Expect(t, http.StatusOK)); len(l) != 1 || l[0]["id"] == list[0]["id"] {
		t.Fatalf("other's folders %v", l)
	}
	renamed := folderOf(t, app.Do("PATCH", scratch, owner, folderBody(str("Renamed"), nil)).Expect(t, http.StatusOK))
	if renamed["name"] != "Renamed" || renamed["description"] != "" || renamed["id"] != list[2]["id"] {
		t.Fatalf("renamed %v", renamed)
	}
	described := folderOf(t, app.Do("PATCH", scratch, owner, folderBody(nil, str("now described"))).Expect(t, http.StatusOK))
	if described["name"] != "Renamed" || described["description"] != "now described" {
		t.Fatalf("re-described %v (the name must stay)", described)
	}
	if r := app.Do("DELETE", scratch, owner, nil).Expect(t, http.StatusNoContent); len(r.Body) != 0 {
		t.Fatalf("204 with a body: %s", r.Body)
	}
	app.Do("DELETE", scratch, owner, nil).Expect(t, http.StatusNotFound)
	app.Do("GET", scratch+"/articles", owner, nil).Expect(t, http.StatusNotFound)
	if l := foldersOf(t, app.Do("GET", "/api/collections", owner, nil).Expect(t, http.StatusOK)); len(l) != 2 {
		t.Fatalf("after delete %v", l)
	}
	app.Do("DELETE", app.createFolder(owner, "Renamed"), owner, nil).Expect(t, http.StatusNoContent)                // the name is free again
	app.Do("DELETE", app.createFolder(owner, strings.Repeat("é", 100)), owner, nil).Expect(t, http.StatusNoContent) // 100 characters is fine

	t.Run("validation", func(t *testing.T) {
		parallel(t)
		cases := []struct {
			name, method, path string
			body               any
		}{
			{"duplicate name, other case", "POST", "/api/collections", folderBody(str("reading LIST"), nil)},
			{"blank name", "POST", "/api/collections", folderBody(str("   "), nil)},
			{"missing name", "POST", "/api/collections", folderBody(nil, str("d"))},
			{"name over 100 characters", "POST", "/api/collections", folderBody(str(strings.Repeat("n", 101)), nil)},
			{"rename onto a taken name", "PATCH", second, folderBody(str("Reading List"), nil)},
			{"rename to blank", "PATCH", second, folderBody(str(""), nil)},
			{"rename over 100 characters", "PATCH", second, folderBody(str(strings.Repeat("é", 101)), nil)},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				parallel(t)
				res := app.Do(tc.method, tc.path, owner, tc.body).Expect(t, http.StatusUnprocessableEntity)
				if _, ok := errorsOf(t, res)["name"]; !ok {
					t.Fatalf("errors lack name: %s", res.Body)
				}
			})
		}
	})

	t.Run("someone else's, unknown and malformed ids", func(t *testing.T) {
		parallel(t)
		slug := app.publish(other, "Something to collect")
		cases := []struct {
			name, method, path string
			body               any
			status             int
		}{
			{"rename theirs", "PATCH", theirs, folderBody(str("Mine now"), nil), http.StatusForbidden},
			{"delete theirs", "DELETE", theirs, nil, http.StatusForbidden},
			{"list theirs", "GET", theirs + "/articles", nil, http.StatusForbidden},
			{"collect into theirs", "POST", "/api/articles/" + slug + "/collect", map[string]any{"collectionId": folderID(theirs)}, http.StatusForbidden},
			{"uncollect from theirs", "DELETE", fmt.Sprintf("/api/articles/%s/collect?collectionId=%d", slug, folderID(theirs)), nil, http.StatusForbidden},
			{"rename unknown", "PATCH", "/api/collections/999999", folderBody(str("x"), nil), http.StatusNotFound},
			{"delete unknown", "DELETE", "/api/collections/999999", nil, http.StatusNotFound},
			{"list unknown", "GET", "/api/collections/999999/articles", nil, http.StatusNotFound},
			{"collect into unknown", "POST", "/api/articles/" + slug + "/collect", map[string]any{"collectionId": 999999}, http.StatusNotFound},
			{"collect an unknown article", "POST", "/api/articles/no-such-article/collect", map[string]any{"collectionId": folderID(reading)}, http.StatusNotFound},
			{"rename non-numeric", "PATCH", "/api/collections/abc", folderBody(str("x"), nil), http.StatusNotFound},
			{"delete non-numeric", "DELETE", "/api/collections/abc", nil, http.StatusNotFound},
			{"list non-numeric", "GET", "/api/collections/abc/articles", nil, http.StatusNotFound},
			{"delete id 0", "DELETE", "/api/collections/0", nil, http.StatusNotFound},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				parallel(t)
				app.Do(tc.method, tc.path, owner, tc.body).Expect(t, tc.status)
			})
		}
	})

	t.Run("a token is required", func(t *testing.T) {
		parallel(t)
		for _, r := range []struct{ method, path string }{
			{"POST", "/api/collections"}, {"GET", "/api/collections"}, {"PATCH", reading}, {"DELETE", reading},
			{"GET", reading + "/articles"}, {"POST", "/api/articles/x/collect"}, {"DELETE", "/api/articles/x/collect?collectionId=1"},
		} {
			res := app.Do(r.method, r.path, "", folderBody(str("x"), nil)).Expect(t, http.StatusUnauthorized)
			if _, ok := errorsOf(t, res)["token"]; !ok {
				t.Fatalf("%s %s: errors lack token: %s", r.method, r.path, res.Body)
			}
		}
	})

}

func TestCollectCounts(t *testing.T) {
	parallel(t)
	app := startApp(t)
	author := app.Register("scribe")
	owner := app.Register("hoarder")
	other := app.Register("passerby")
	slug := app.publish(author, "Worth keeping")
	path := "/api/articles/" + slug
	f1, f2 := app.createFolder(owner, "One"), app.createFolder(owner, "Two")
	collect := func(folder string) map[string]any {
		t.Helper()
		return articleOf(t, app.Do("POST", path+"/collect", owner, map[string]any{"collectionId": folderID(folder)}).Expect(t, http.StatusOK))
	}
	get := func(token string) map[string]any {
		t.Helper()
		return articleOf(t, app.Do("GET", path, token, nil).Expect(t, http.StatusOK))
	}
	folderCounts := func() map[string]float64 {
		t.Helper()
		out := map[string]float64{}
		for _, c := range foldersOf(t, app.Do("GET", "/api/collections", owner, nil).Expect(t, http.StatusOK)) {
			out[c["name"].(string)] = c["articlesCount"].(float64)
		}
		return out
	}

	wantCollect(t, "collect", collect(f1), true, 1)
	wantCollect(t, "the collector's GET", get(owner), true, 1)
	wantCollect(t, "another reader's GET", get(other), false, 1)
	wantCollect(t, "an anonymous GET", get(""), false, 1)
	wantCollect(t, "collect again", collect(f1), true, 1)
	wantCollect(t, "collect into a second folder", collect(f2), true, 2)
	if c := folderCounts(); c["One"] != 1 || c["Two"] != 1 {
		t.Fatalf("folder counts %v", c)
	}
	// A rename answers with the folder as it is, items included.
	if r := folderOf(t, app.Do("PATCH", f1, owner, folderBody(str("One"), str("renamed"))).Expect(t, http.StatusOK)); r["articlesCount"] != 1.0 {
		t.Errorf("PATCH answered articlesCount %v for a folder holding 1", r["articlesCount"])
	}

	// Uncollect, by body and by query; doing it twice is harmless.
	wantCollect(t, "uncollect by body",
		articleOf(t, app.Do("DELETE", path+"/collect", owner, map[string]any{"collectionId": folderID(f1)}).Expect(t, http.StatusOK)), true, 1)
	for range 2 {
		wantCollect(t, "uncollect by query",
			articleOf(t, app.Do("DELETE", fmt.Sprintf("%s/collect?collectionId=%d", path, folderID(f2)), owner, nil).Expect(t, http.StatusOK)), false, 0)
	}
	wantCollect(t, "another reader after uncollecting", get(other), false, 0)

	// Deleting folders lowers the counts of what they held.
	collect(f1)
	wantCollect(t, "collected into both again", collect(f2), true, 2)
	app.Do("DELETE", f2, owner, nil).Expect(t, http.StatusNoContent)
	wantCollect(t, "after deleting one folder", get(owner), true, 1)
	app.Do("DELETE", f1, owner, nil).Expect(t, http.StatusNoContent)
	wantCollect(t, "after deleting both", get(owner), false, 0)
	wantCollect(t, "another reader after the deletes", get(other), false, 0)

	t.Run("bad input", func(t *testing.T) {
		folder := app.createFolder(owner, "Three")
		draft := articleOf(t, app.Do("POST", "/api/articles", author, map[string]any{"article": map[string]any{
			"title": "Unfinished", "description": "d", "body": "b", "draft": true,
		}}).Expect(t, http.StatusCreated))["slug"].(string)
		cases := []struct {
			name, method, path string
			body               any
			status             int
			field              string
		}{
			{"someone else's draft", "POST", "/api/articles/" + draft + "/collect", map[string]any{"collectionId": folderID(folder)}, 404, "body"},
			{"missing collectionId", "POST", path + "/collect", map[string]any{}, 422, "collectionId"},
			{"collectionId 0", "POST", path + "/collect", map[string]any{"collectionId": 0}, 422, "collectionId"},
			{"collectionId as a string", "POST", path + "/collect", `{"collectionId":"` + fmt.Sprint(folderID(folder)) + `"}`, 422, "collectionId"},
			{"malformed JSON", "POST", path + "/collect", `{"collectionId":`, 422, "body"},
			{"uncollect, query collectionId abc", "DELETE", path + "/collect?collectionId=abc", nil, 422, "collectionId"},
			{"uncollect, neither body nor query", "DELETE", path + "/collect", nil, 422, "body"},
		}
		for _, tc := range cases {
			res := app.Do(tc.method, tc.path, owner, tc.body).Expect(t, tc.status)
			if _, ok := errorsOf(t, res)[tc.field]; !ok {
				t.Fatalf("%s: errors lack %q: %s", tc.name, tc.field, res.Body)
			}
		}
		if c := folderCounts(); c["Three"] != 0 {
			t.Fatalf("rejected collects changed a folder: %v", c)
		}
		wantCollect(t, "after the rejected collects", get(owner), false, 0)
	})

	t.Run("ten concurrent collects into one folder count once", func(t *testing.T) {
		folder := app.createFolder(owner, "Concurrent")
		var wg sync.WaitGroup
		start := make(chan struct{})
		statuses := make([]int, 10)
		for i := range statuses {
			wg.Go(func() {
				<-start
				statuses[i] = app.Do("POST", path+"/collect", owner, map[string]any{"collectionId": folderID(folder)}).Status
			})
		}
		close(start)
		wg.Wait()
		for i, st := range statuses {
			if st != http.StatusOK {
				t.Fatalf("collect %d: status %d", i, st)
			}
		}
		wantCollect(t, "after concurrent collects", get(other), false, 1)
		if c := folderCounts(); c["Concurrent"] != 1 {
			t.Fatalf("folder counts %v", c)
		}
	})
}

// slugsOf lists the slugs of a list response's articles and its nextCursor.
func slugsOf(t *testing.T, r response) ([]string, float64, string) {
	t.Helper()
	list, n := articlesOf(t, r)
	out := make([]string, len(list))
	for i, a := range list {
		out[i] = a["slug"].(string)
		if _, ok := a["body"]; ok {
			t.Errorf("list item %s carries a body; lists are summaries", out[i])
		}
	}
	next, _ := r.JSON(t)["nextCursor"].(string)
	return out, n, next
}

func TestCollectionArticlesPaging(t *testing.T) {
	parallel(t)
	app := startApp(t)
	author := app.Register("prolific")
	owner := app.Register("curator")
	folder := app.createFolder(owner, "Best of")
	slugs := make([]string, 5)
	for i := range slugs {
		slugs[i] = app.publish(author, fmt.Sprintf("Essay number %d", i))
		app.Do("POST", "/api/articles/"+slugs[i]+"/collect", owner, map[string]any{"collectionId": folderID(folder)}).Expect(t, http.StatusOK)
	}
	newestFirst := []string{slugs[4], slugs[3], slugs[2], slugs[1], slugs[0]}

	// limit 2 over 5: pages of 2, 2, 1; each seen once, newest-added first; the last page has no cursor.
	var seen []string
	target := folder + "/articles?limit=2"
	for page := 0; ; page++ {
		if page > 5 {
			t.Fatal("cursor paging does not end")
		}
		got, n, next := slugsOf(t, app.Do("GET", target, owner, nil).Expect(t, http.StatusOK))
		if int(n) != len(got) {
			t.Errorf("page %d: articlesCount %v for %d articles", page, n, len(got))
		}
		seen = append(seen, got...)
		if next == "" {
			if len(got) == 2 && len(seen) < 5 {
				t.Fatalf("a full page %d without a cursor", page)
			}
			break
		}
		target = folder + "/articles?limit=2&cursor=" + next
	}
	if strings.Join(seen, ",") != strings.Join(newestFirst, ",") {
		t.Fatalf("paged %v, want %v", seen, newestFirst)
	}
	all, _, _ := slugsOf(t, app.Do("GET", folder+"/articles", owner, nil).Expect(t, http.StatusOK))
	if strings.Join(all, ",") != strings.Join(newestFirst, ",") {
		t.Fatalf("one page %v, want %v", all, newestFirst)
	}
	if list, _ := articlesOf(t, app.Do("GET", folder+"/articles", owner, nil).Expect(t, http.StatusOK)); list[0]["collected"] != true {
		t.Fatalf("folder items must show collected: %v", list[0])
	}

	// Withdrawn: gone from the folder's list, though still in the folder; republished: back in place.
	app.Do("POST", "/api/articles/"+slugs[2]+"/withdraw", author, nil).Expect(t, http.StatusOK)
	without, _, _ := slugsOf(t, app.Do("GET", folder+"/articles", owner, nil).Expect(t, http.StatusOK))
	if want := []string{slugs[4], slugs[3], slugs[1], slugs[0]}; strings.Join(without, ",") != strings.Join(want, ",") {
		t.Fatalf("with one withdrawn: %v, want %v", without, want)
	}
	app.Do("POST", "/api/articles/"+slugs[2]+"/publish", author, nil).Expect(t, http.StatusOK)
	back, _, _ := slugsOf(t, app.Do("GET", folder+"/articles", owner, nil).Expect(t, http.StatusOK))
	if strings.Join(back, ",") != strings.Join(newestFirst, ",") {
		t.Fatalf("republished: %v, want %v", back, newestFirst)
	}

	// A deleted article leaves the folder for good.
	app.Do("DELETE", "/api/articles/"+slugs[0], author, nil).Expect(t, http.StatusNoContent)
	if left, _, _ := slugsOf(t, app.Do("GET", folder+"/articles", owner, nil).Expect(t, http.StatusOK)); len(left) != 4 {
		t.Fatalf("after deleting an article: %v", left)
	}
	if c := foldersOf(t, app.Do("GET", "/api/collections", owner, nil).Expect(t, http.StatusOK)); c[0]["articlesCount"] != 4.0 {
		t.Fatalf("folder count after deleting an article: %v", c[0]["articlesCount"])
	}
}

// An account has at most service.MaxCollections folders, so their list, which is not paged, stays
// one bounded page; the next create says how many are allowed and leaves nothing behind.
func TestCollectionsCap(t *testing.T) {
	parallel(t)
	app := startApp(t, func(c *ioc.Config) { c.Server.RateWrites = "0" })
	owner := app.Register("hoarder")
	var last string
	for i := range service.MaxCollections {
		last = app.createFolder(owner, fmt.Sprintf("Folder %03d", i))
	}
	over := app.Do("POST", "/api/collections", owner, folderBody(str("One too many"), nil))
	requireErrorField(t, over, http.StatusUnprocessableEntity, "collection")
	if !strings.Contains(string(over.Body), strconv.Itoa(service.MaxCollections)) {
		t.Fatalf("the refusal does not say the cap: %s", over.Body)
	}
	if l := foldersOf(t, app.Do("GET", "/api/collections", owner, nil).Expect(t, http.StatusOK)); len(l) != service.MaxCollections {
		t.Fatalf("%d folders listed, want %d", len(l), service.MaxCollections)
	}
	// Deleting one makes room again; another account is not affected.
	app.Do("DELETE", last, owner, nil).Expect(t, http.StatusNoContent)
	app.createFolder(owner, "One too many")
	app.createFolder(app.Register("newcomer"), "First")
}

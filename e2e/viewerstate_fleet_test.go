package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/apptest"
)

// TestFleet_ViewerReadsTheirOwnWrites: instances behind the round-robin balancer (the suite's
// own fleet with INKWELL_E2E_FLEET, else three of its own). Every instance has the viewer's
// flags in its caches (in process too) before each write; the write lands on one instance and
// the very next reads, which land on every instance in turn, show it: favorited, following and
// collected, on the article and in the list. No propagation bound: read-your-writes.
func TestFleet_ViewerReadsTheirOwnWrites(t *testing.T) {
	parallel(t)
	var fleet *testApp
	if fleetSize(t) > 1 {
		fleet = startApp(t)
	} else {
		fleet = &testApp{apptest.StartFleet(t, 3)}
	}
	n := len(fleet.Fleet)
	author, fan := fleet.Register("vsauthor"), fleet.Register("vsfan")
	slug := fleet.publish(author, "Viewer state across a fleet")
	path := "/api/articles/" + slug

	type state struct{ favorited, following, collected bool }
	// requireFeed reads the fan's first feed page (cached per instance, under a stamp made from
	// the fan's follow list and the authors' change tokens) and requires want articles.
	requireFeed := func(t *testing.T, when string, want int) {
		t.Helper()
		res := fleet.Do("GET", "/api/articles/feed", fan, nil).Expect(t, http.StatusOK)
		body := res.JSON(t)
		if got := len(body["articles"].([]any)); got != want || body["articlesCount"] != float64(want) {
			t.Fatalf("%s (on %s): feed of %d articles (articlesCount %v), want %d", when, res.Header.Get(apptest.ServedByHeader), got, body["articlesCount"], want)
		}
	}
	seen := func(art map[string]any) state {
		return state{art["favorited"] == true, art["author"].(map[string]any)["following"] == true, art["collected"] == true}
	}
	// readAll reads the article and the author's list as the fan, twice on every instance,
	// requiring want each time.
	readAll := func(t *testing.T, when string, want state) {
		t.Helper()
		for i := range 2 * n {
			res := fleet.Do("GET", path, fan, nil).Expect(t, http.StatusOK)
			if got := seen(articleOf(t, res)); got != want {
				t.Fatalf("%s, read %d (on %s): %+v, want %+v", when, i+1, res.Header.Get(apptest.ServedByHeader), got, want)
			}
			res = fleet.Do("GET", "/api/articles?author=vsauthor", fan, nil).Expect(t, http.StatusOK)
			list := res.JSON(t)["articles"].([]any)
			if len(list) != 1 {
				t.Fatalf("%s: the author's list has %d articles, want 1", when, len(list))
			}
			if got := seen(list[0].(map[string]any)); got.favorited != want.favorited || got.following != want.following {
				t.Fatalf("%s, list read %d (on %s): %+v, want %+v", when, i+1, res.Header.Get(apptest.ServedByHeader), got, want)
			}
			requireFeed(t, fmt.Sprintf("%s, feed read %d", when, i+1), map[bool]int{true: 1}[want.following])
		}
	}
	var folder string
	steps := []struct {
		name   string
		method string
		path   func() string
		body   func() any
		want   state
	}{
		{"favorite", "POST", func() string { return path + "/favorite" }, nil, state{favorited: true}},
		{"follow", "POST", func() string { return "/api/profiles/vsauthor/follow" }, nil, state{favorited: true, following: true}},
		{"unfavorite", "DELETE", func() string { return path + "/favorite" }, nil, state{following: true}},
		{"collect", "POST", func() string { return path + "/collect" },
			func() any { return map[string]any{"collectionId": folderID(folder)} }, state{following: true, collected: true}},
		{"unfollow", "DELETE", func() string { return "/api/profiles/vsauthor/follow" }, nil, state{collected: true}},
		{"delete the folder", "DELETE", func() string { return folder }, nil, state{}},
		{"favorite again", "POST", func() string { return path + "/favorite" }, nil, state{favorited: true}},
	}
	readAll(t, "before any write", state{})
	folder = fleet.createFolder(fan, "Fleet folder")
	for _, st := range steps {
		var body any
		if st.body != nil {
			body = st.body()
		}
		res := fleet.Do(st.method, st.path(), fan, body)
		if res.Status >= 300 {
			t.Fatalf("%s: %d %s", st.name, res.Status, res.Body)
		}
		readAll(t, "right after "+st.name+" (on "+res.Header.Get(apptest.ServedByHeader)+")", st.want)
	}

	// The followed author publishes and withdraws: the next feed read on every instance shows it.
	fleet.Do("POST", "/api/profiles/vsauthor/follow", fan, nil).Expect(t, http.StatusOK)
	for i := range n {
		requireFeed(t, fmt.Sprintf("followed again, read %d", i+1), 1)
	}
	second := fleet.publish(author, "A second article for the feed")
	for i := range 2 * n {
		requireFeed(t, fmt.Sprintf("right after the author published, read %d", i+1), 2)
	}
	fleet.Do("POST", "/api/articles/"+second+"/withdraw", author, nil).Expect(t, http.StatusOK)
	for i := range 2 * n {
		requireFeed(t, fmt.Sprintf("right after the author withdrew, read %d", i+1), 1)
	}
}

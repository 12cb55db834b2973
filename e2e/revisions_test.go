package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/internal/testenv"
)

func init() {
	newSinceThePreviousRelease["TestRevisions_EveryRule"] = "revisions (#32): GET /api/articles/:slug/revisions[/:version], POST .../restore"
	newSinceThePreviousRelease["TestFleet_RevisionRestoreShowsOnEveryInstance"] = "restoring a revision (#32) across a fleet"
}

// revisionVersions lists the versions of one revisions page and its nextCursor ("" for none).
func revisionVersions(t *testing.T, r response) ([]int, string) {
	t.Helper()
	m := r.JSON(t)
	var out []int
	for _, x := range m["revisions"].([]any) {
		rev := x.(map[string]any)
		if _, ok := rev["body"]; ok {
			t.Fatalf("a list entry carries its body: %v", rev)
		}
		out = append(out, int(rev["version"].(float64)))
	}
	next, _ := m["nextCursor"].(string)
	return out, next
}

func revisionEdit(fields map[string]any) map[string]any { return map[string]any{"article": fields} }

func TestRevisions_EveryRule(t *testing.T) {
	parallel(t)
	app := startApp(t)
	_, mod := app.staff(t, "rv")
	author, reader := app.Register("rvauthor"), app.Register("rvreader")

	first := newArticle("Revised thoughts", "alpha")
	first["article"].(map[string]any)["body"] = "The first body mentions zanzibar."
	slug := articleOf(t, app.Do("POST", "/api/articles", author, first).Expect(t, http.StatusCreated))["slug"].(string)
	base := "/api/articles/" + slug + "/revisions"
	app.Do("PUT", "/api/articles/"+slug, author, revisionEdit(map[string]any{"title": "Revised thoughts, again", "body": "The second body.", "tagList": []string{"beta"}})).Expect(t, http.StatusOK)
	v3 := articleOf(t, app.Do("PUT", "/api/articles/"+slug, author, revisionEdit(map[string]any{"body": "The third body."})).Expect(t, http.StatusOK))
	if v3["version"] != 3.0 {
		t.Fatalf("after two edits: version %v, want 3", v3["version"])
	}

	t.Run("the author lists the replaced versions newest first, paged", func(t *testing.T) {
		got, next := revisionVersions(t, app.Do("GET", base, author, nil).Expect(t, http.StatusOK))
		if !slices.Equal(got, []int{2, 1}) || next != "" {
			t.Fatalf("versions %v next %q, want [2 1] and no next page", got, next)
		}
		got, next = revisionVersions(t, app.Do("GET", base+"?limit=1", author, nil).Expect(t, http.StatusOK))
		if !slices.Equal(got, []int{2}) || next == "" {
			t.Fatalf("first page %v next %q", got, next)
		}
		got, next = revisionVersions(t, app.Do("GET", base+"?limit=1&cursor="+url.QueryEscape(next), author, nil).Expect(t, http.StatusOK))
		if !slices.Equal(got, []int{1}) || next != "" {
			t.Fatalf("second page %v next %q", got, next)
		}
	})

	t.Run("one version with its body", func(t *testing.T) {
		rev := app.Do("GET", base+"/1", author, nil).Expect(t, http.StatusOK).JSON(t)["revision"].(map[string]any)
		if rev["title"] != "Revised thoughts" || rev["body"] != "The first body mentions zanzibar." || fmt.Sprint(rev["tagList"]) != "[alpha]" || rev["version"] != 1.0 {
			t.Fatalf("version 1 = %v", rev)
		}
		if !isoMillis.MatchString(rev["createdAt"].(string)) {
			t.Fatalf("createdAt %q", rev["createdAt"])
		}
	})

	t.Run("who may read", func(t *testing.T) {
		app.Do("GET", base, reader, nil).Expect(t, http.StatusForbidden)
		app.Do("GET", base+"/1", reader, nil).Expect(t, http.StatusForbidden)
		app.Do("GET", base, "", nil).Expect(t, http.StatusUnauthorized)
		if got, _ := revisionVersions(t, app.Do("GET", base, mod, nil).Expect(t, http.StatusOK)); !slices.Equal(got, []int{2, 1}) {
			t.Fatalf("the moderator sees %v", got)
		}
		app.Do("GET", base+"/1", mod, nil).Expect(t, http.StatusOK)
		// Moderators read revisions; only the author restores.
		app.Do("POST", base+"/1/restore", mod, nil).Expect(t, http.StatusForbidden)
		app.Do("POST", base+"/1/restore", reader, nil).Expect(t, http.StatusForbidden)
		app.Do("GET", "/api/articles/no-such-article/revisions", author, nil).Expect(t, http.StatusNotFound)
	})

	t.Run("a draft keeps none; others cannot see it", func(t *testing.T) {
		draft := newArticle("Revised draft")
		draft["article"].(map[string]any)["draft"] = true
		ds := articleOf(t, app.Do("POST", "/api/articles", author, draft).Expect(t, http.StatusCreated))["slug"].(string)
		app.Do("PUT", "/api/articles/"+ds, author, revisionEdit(map[string]any{"body": "draft edit"})).Expect(t, http.StatusOK)
		if got, _ := revisionVersions(t, app.Do("GET", "/api/articles/"+ds+"/revisions", author, nil).Expect(t, http.StatusOK)); len(got) != 0 {
			t.Fatalf("a draft's edit kept %v", got)
		}
		app.Do("GET", "/api/articles/"+ds+"/revisions", mod, nil).Expect(t, http.StatusNotFound)
		app.Do("GET", "/api/articles/"+ds+"/revisions", reader, nil).Expect(t, http.StatusNotFound)
	})

	t.Run("bad input", func(t *testing.T) {
		for _, path := range []string{base + "/0", base + "/x", base + "/-1", base + "/2147483648", base + "/99", base + "/1%00", base + "/%ff"} {
			if got := app.Do("GET", path, author, nil).Status; got != http.StatusNotFound {
				t.Errorf("GET %s: %d, want 404", path, got)
			}
			if got := app.Do("POST", path+"/restore", author, nil).Status; got != http.StatusNotFound {
				t.Errorf("POST %s/restore: %d, want 404", path, got)
			}
		}
		for _, q := range []string{"limit=0", "limit=101", "limit=x", "cursor=nope", "cursor=%00", "cursor=%ff"} {
			if got := app.Do("GET", base+"?"+q, author, nil).Status; got != http.StatusUnprocessableEntity {
				t.Errorf("GET ?%s: %d, want 422", q, got)
			}
		}
		for _, body := range []any{map[string]any{"version": "3"}, map[string]any{"version": "\u0000"}} {
			app.Do("POST", base+"/1/restore", author, body).Expect(t, http.StatusUnprocessableEntity)
		}
		if got, _ := revisionVersions(t, app.Do("GET", base, author, nil).Expect(t, http.StatusOK)); !slices.Equal(got, []int{2, 1}) {
			t.Fatalf("bad requests changed the revisions: %v", got)
		}
	})

	t.Run("restore makes the version current as an edit would, itself revisioned", func(t *testing.T) {
		app.Do("POST", base+"/1/restore", author, map[string]any{"version": 2}).Expect(t, http.StatusConflict)
		restored := articleOf(t, app.Do("POST", base+"/1/restore", author, map[string]any{"version": 3}).Expect(t, http.StatusOK))
		if restored["version"] != 4.0 || restored["title"] != "Revised thoughts" || restored["body"] != "The first body mentions zanzibar." ||
			fmt.Sprint(restored["tagList"]) != "[alpha]" || restored["slug"] != slug {
			t.Fatalf("restored %v", restored)
		}
		if got, _ := revisionVersions(t, app.Do("GET", base, author, nil).Expect(t, http.StatusOK)); !slices.Equal(got, []int{3, 2, 1}) {
			t.Fatalf("after the restore: versions %v, want [3 2 1]", got)
		}
		rev := app.Do("GET", base+"/3", author, nil).Expect(t, http.StatusOK).JSON(t)["revision"].(map[string]any)
		if rev["body"] != "The third body." {
			t.Fatalf("the restore kept %v as version 3", rev)
		}
		// Search follows the restored text (a signed-in search reads no cached answer).
		found := app.Do("GET", "/api/search/articles?q=zanzibar", reader, nil).Expect(t, http.StatusOK)
		if !slices.Contains(slugsOfList(t, found), slug) {
			t.Fatalf("search for the restored text misses the article: %s", found.Body)
		}
		// Without a version, a restore applies to whatever is current, like an edit without one.
		again := articleOf(t, app.Do("POST", base+"/2/restore", author, nil).Expect(t, http.StatusOK))
		if again["version"] != 5.0 || again["body"] != "The second body." {
			t.Fatalf("restored %v", again)
		}
	})
}

// TestFleet_RevisionRestoreShowsOnEveryInstance: a restore through A is an edit, so B and C,
// whose caches hold the article as it was, show the restored content within the edits' bound
// (propagationBound; in practice on the first read), and its revisions at once (read from
// PostgreSQL).
func TestFleet_RevisionRestoreShowsOnEveryInstance(t *testing.T) {
	parallel(t)
	db, rds := testenv.NewDB(t), testenv.NewRedis(t)
	f := fleetOf3{startReplica(t, db, rds.Prefix, noCron), startReplica(t, db, rds.Prefix, noCron), startReplica(t, db, rds.Prefix, noCron)}
	author := f.a.Register("fleetreviser")
	path := f.article(t, author, "Fleet revision")
	f.b.Do("PUT", path, author, revisionEdit(map[string]any{"title": "Fleet revision, edited", "body": "edited body"})).Expect(t, http.StatusOK)
	f.warm(t, path, "", func(art map[string]any) error {
		if art["title"] != "Fleet revision, edited" {
			return fmt.Errorf("title %v", art["title"])
		}
		return nil
	})

	restored := articleOf(t, f.a.Do("POST", path+"/revisions/1/restore", author, map[string]any{"version": 2}).Expect(t, http.StatusOK))
	if restored["title"] != "Fleet revision" || restored["version"] != 3.0 {
		t.Fatalf("restored %v", restored)
	}
	f.untilFresh(t, "the restore", time.Now(), func(app *testApp) (string, bool) {
		art := articleOf(t, app.Do("GET", path, "", nil).Expect(t, http.StatusOK))
		return fmt.Sprintf("title %q version %v", art["title"], art["version"]), art["title"] == "Fleet revision" && art["version"] == 3.0 && art["body"] == restored["body"]
	})
	for _, r := range f.readers() {
		if got, _ := revisionVersions(t, r.app.Do("GET", path+"/revisions", author, nil).Expect(t, http.StatusOK)); !slices.Equal(got, []int{2, 1}) {
			t.Errorf("%s lists versions %v, want [2 1]", r.name, got)
		}
		// The version A's restore moved past is stale on every instance.
		r.app.Do("POST", path+"/revisions/1/restore", author, map[string]any{"version": 2}).Expect(t, http.StatusConflict)
	}
}

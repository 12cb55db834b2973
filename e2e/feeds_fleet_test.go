package e2e

import (
	"net/http"
	"slices"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// TestFleet_FeedsDropAtOnce: with the feeds read (and so cached) on every instance, an article
// withdrawn through one instance, or hidden through another, is gone from the feeds the other
// instances answer with the very next request.
func TestFleet_FeedsDropAtOnce(t *testing.T) {
	parallel(t)
	db, rds := testenv.NewDB(t), testenv.NewRedis(t)
	apps := []*testApp{startReplica(t, db, rds.Prefix, noCron), startReplica(t, db, rds.Prefix, noCron), startReplica(t, db, rds.Prefix, noCron)}
	author := apps[0].Register("fleetfeeder")
	admin, _ := apps[0].staff(t, "fleetfeedstaff")
	var slugs []string
	for _, title := range []string{"Fleet feed one", "Fleet feed two", "Fleet feed three"} {
		slugs = append(slugs, apps[0].publish(author, title))
	}
	paths := []string{"/feeds/articles.atom", "/feeds/authors/fleetfeeder.atom"}
	titlesOn := func(app *testApp, path string) []string {
		t.Helper()
		doc, _ := app.atomFeed(t, path)
		return atomTitles(doc)
	}
	for _, app := range apps { // every instance holds the feeds and their pages in its own tier
		for _, path := range paths {
			for range 2 {
				if got := titlesOn(app, path); len(got) != 3 {
					t.Fatalf("warming %s: %v", path, got)
				}
			}
		}
	}

	apps[0].Do("POST", "/api/articles/"+slugs[0]+"/withdraw", author, nil).Expect(t, http.StatusOK)
	for _, app := range apps[1:] {
		for _, path := range paths {
			if got := titlesOn(app, path); slices.Contains(got, "Fleet feed one") || len(got) != 2 {
				t.Errorf("after the withdrawal on instance 1, %s on another instance: %v", path, got)
			}
		}
	}

	apps[1].Do("POST", "/api/moderation/articles/"+slugs[1]+"/hide", admin, map[string]any{"reason": "fleet"}).Expect(t, http.StatusOK)
	for _, app := range []*testApp{apps[0], apps[2]} {
		for _, path := range paths {
			if got := titlesOn(app, path); !slices.Equal(got, []string{"Fleet feed three"}) {
				t.Errorf("after the hide on instance 2, %s on another instance: %v", path, got)
			}
		}
	}
}

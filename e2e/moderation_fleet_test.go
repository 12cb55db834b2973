package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/internal/apptest"
	"github.com/inkwell-dev/inkwell/ioc"
)

// TestFleet_ModerationHoldsOnEveryInstance: three instances on one database and Redis, whose
// in-process tiers keep entries for a minute, so only the invalidation broadcast can drop them.
// Every instance has the article, the first pages, the tag cloud and the suspended user's entry
// in its tiers before each action; the action lands on one instance and the very next request to
// each instance, with no wait and no retry, already obeys it: a hidden article is 404 and gone
// from the lists and tags, a suspended account's token is 403, an unsuspended one works again.
func TestFleet_ModerationHoldsOnEveryInstance(t *testing.T) {
	parallel(t)
	upgradeRun(t) // skips: listed in newSinceThePreviousRelease
	longLocal := func(c *ioc.Config) { c.Tune.CacheLocalTTL = &aMinute }
	fleet := &testApp{apptest.StartFleet(t, 3, longLocal)}
	for _, inst := range fleet.Fleet {
		app := &testApp{inst}
		app.waitFor("the invalidation channel is subscribed", func() bool {
			return strings.Contains(app.metrics(), "\ninkwell_cache_invalidation_subscribed 1\n")
		})
	}
	_, mod := fleet.staff(t, "fm")
	author, reader := fleet.Register("fmauthor"), fleet.Register("fmreader")
	slug := articleOf(t, fleet.Do("POST", "/api/articles", author, newArticle("Fleet moderation", "fmtag")).Expect(t, http.StatusCreated))["slug"].(string)

	// warm reads everything the actions change on every instance, twice (the second from its tier).
	warm := func() {
		for _, inst := range fleet.Fleet {
			for range 2 {
				inst.Do("GET", "/api/articles/"+slug, reader, nil).Expect(t, http.StatusOK)
				inst.Do("GET", "/api/articles", "", nil).Expect(t, http.StatusOK)
				inst.Do("GET", "/api/articles?tag=fmtag", "", nil).Expect(t, http.StatusOK)
				inst.Do("GET", "/api/tags", "", nil).Expect(t, http.StatusOK)
				inst.Do("GET", "/api/user", author, nil).Expect(t, http.StatusOK)
			}
		}
	}
	shown := func(when string, want bool) {
		t.Helper()
		for i, inst := range fleet.Fleet {
			at := fmt.Sprintf("%s, instance %d", when, i+1)
			status := map[bool]int{true: http.StatusOK, false: http.StatusNotFound}[want]
			if got := inst.Do("GET", "/api/articles/"+slug, reader, nil).Status; got != status {
				t.Fatalf("%s: the article answers %d, want %d", at, got, status)
			}
			for _, path := range []string{"/api/articles", "/api/articles?tag=fmtag"} {
				if got := contains(slugsOfList(t, inst.Do("GET", path, "", nil).Expect(t, http.StatusOK)), slug); got != want {
					t.Fatalf("%s: %s lists it: %v, want %v", at, path, got, want)
				}
			}
			tags := fmt.Sprint(inst.Do("GET", "/api/tags", "", nil).Expect(t, http.StatusOK).JSON(t)["tags"])
			if got := strings.Contains(tags, "fmtag"); got != want {
				t.Fatalf("%s: the tag cloud %s has fmtag: %v, want %v", at, tags, got, want)
			}
		}
	}

	warm()
	fleet.Fleet[0].Do("POST", "/api/moderation/articles/"+slug+"/hide", mod, map[string]any{"reason": "fleet"}).Expect(t, http.StatusOK)
	shown("right after the hide on instance 1", false)

	fleet.Fleet[1].Do("POST", "/api/moderation/articles/"+slug+"/unhide", mod, nil).Expect(t, http.StatusOK)
	shown("right after the unhide on instance 2", true)

	warm()
	until := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	fleet.Fleet[2].Do("POST", "/api/moderation/users/fmauthor/suspend", mod, map[string]any{"reason": "fleet", "until": until}).Expect(t, http.StatusOK)
	for i, inst := range fleet.Fleet {
		if got := inst.Do("GET", "/api/user", author, nil).Status; got != http.StatusForbidden {
			t.Fatalf("right after the suspension, instance %d: the author's token answers %d, want 403", i+1, got)
		}
	}
	shown("right after the suspension on instance 3", false)

	fleet.Fleet[0].Do("POST", "/api/moderation/users/fmauthor/unsuspend", mod, nil).Expect(t, http.StatusOK)
	for i, inst := range fleet.Fleet {
		if got := inst.Do("GET", "/api/user", author, nil).Status; got != http.StatusOK {
			t.Fatalf("right after the unsuspension, instance %d: the author's token answers %d, want 200", i+1, got)
		}
	}
	shown("right after the unsuspension on instance 1", true)
}

package e2e

import (
	"net/http"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// TestInvalidationRepair_AnInstanceCutFromRedisRepairsItsWrites: instance A reaches Redis through
// a proxy, B directly. With A cut from Redis, an author edits an article and their profile through
// A: PostgreSQL takes the writes, Redis does not take A's invalidations, and B (which cannot know)
// serves the entries it cached before: the article, the global first page, the author's own
// first page and the profile. Once A reaches Redis again it writes those invalidations by itself,
// without another request, and B serves the edits. Before the repair, B kept the old entries
// until they expired (cache.TTL, 10 minutes by default).
func TestInvalidationRepair_AnInstanceCutFromRedisRepairsItsWrites(t *testing.T) {
	parallel(t)
	db, rds := testenv.NewDB(t), testenv.NewRedis(t)
	faults := testenv.NewFaults(t) // before the instances: it stops after they have
	proxy := faults.RedisProxy()
	a := startReplica(t, db, rds.Prefix, func(c *ioc.Config) { c.Redis.URL = proxy.Rewrite(c.Redis.URL) })
	b := startReplica(t, db, rds.Prefix)
	author := b.Register("repairauthor")
	slug := articleOf(t, b.Do("POST", "/api/articles", author, newArticle("Before the cut")).Expect(t, http.StatusCreated))["slug"].(string)

	type seen struct{ body, globalTitle, ownTitle, bio string }
	onB := func() seen {
		t.Helper()
		var s seen
		s.body = articleOf(t, b.Do("GET", "/api/articles/"+slug, "", nil).Expect(t, http.StatusOK))["body"].(string)
		if list, _ := articlesOf(t, b.Do("GET", "/api/articles", "", nil).Expect(t, http.StatusOK)); len(list) > 0 {
			s.globalTitle = list[0]["title"].(string)
		}
		if list, _ := articlesOf(t, b.Do("GET", "/api/user/articles", author, nil).Expect(t, http.StatusOK)); len(list) > 0 {
			s.ownTitle = list[0]["title"].(string)
		}
		profile := b.Do("GET", "/api/profiles/repairauthor", "", nil).Expect(t, http.StatusOK).JSON(t)["profile"].(map[string]any)
		s.bio, _ = profile["bio"].(string)
		return s
	}
	before := onB() // B reads everything once: each entry is in Redis now
	edited := seen{body: "edited while cut", globalTitle: "After the cut", ownTitle: "After the cut", bio: "edited while cut"}
	if before == edited {
		t.Fatal("the entries already held the edits")
	}

	proxy.Disable()
	a.Do("PUT", "/api/articles/"+slug, author, map[string]any{"article": map[string]any{"title": "After the cut", "body": "edited while cut"}}).
		Expect(t, http.StatusOK)
	a.Do("PUT", "/api/user", author, map[string]any{"user": map[string]any{"bio": "edited while cut"}}).Expect(t, http.StatusOK)
	if got := onB(); got != before {
		// Not a failure of the repair, but then this test proves nothing about it.
		t.Fatalf("B showed the edits while A's invalidations could not reach Redis: %+v", got)
	}

	proxy.Enable()
	// No request goes to A any more: its repairer writes the invalidations on its own.
	b.waitFor("B serves the edits once A reaches Redis", func() bool { return onB() == edited })
}

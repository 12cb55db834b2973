package e2e

import (
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/apptest"
)

// blockScene is three users: ann blocks bob; cat is a bystander. bob's articles are the newest of
// the tag, so a page of ann's that starts with them is refilled with cat's.
type blockScene struct {
	app                   *testApp
	ann, bob, cat         string // tokens
	tag                   string
	catSlugs, bobSlugs    []string
	annSlug, catDiscussed string
}

func newBlockScene(t *testing.T, app *testApp, prefix string) *blockScene {
	t.Helper()
	s := &blockScene{app: app, tag: prefix + "tag"}
	s.ann, s.bob, s.cat = app.Register(prefix+"ann"), app.Register(prefix+"bob"), app.Register(prefix+"cat")
	for i := range 2 {
		s.catSlugs = append(s.catSlugs, s.publishTagged(t, s.cat, fmt.Sprintf("%s cat article %d", prefix, i)))
	}
	for i := range 3 {
		s.bobSlugs = append(s.bobSlugs, s.publishTagged(t, s.bob, fmt.Sprintf("%s bob article %d", prefix, i)))
	}
	s.annSlug = app.publish(s.ann, prefix+" ann's article")
	s.catDiscussed = s.catSlugs[0]
	for _, c := range []struct{ token, body string }{{s.bob, "bob was here"}, {s.cat, "cat replies"}, {s.bob, "bob again"}} {
		s.comment(c.token, s.catDiscussed, c.body, "").Expect(t, http.StatusOK)
	}
	return s
}

func (s *blockScene) publishTagged(t *testing.T, token, title string) string {
	t.Helper()
	return s.app.Do("POST", "/api/articles", token, apptest.NewArticle(title, s.tag)).Expect(t, http.StatusCreated).Article(t)["slug"].(string)
}

func (s *blockScene) comment(token, slug, body, key string) response {
	var headers []string
	if key != "" {
		headers = []string{"Idempotency-Key", key}
	}
	return s.app.Do("POST", "/api/articles/"+slug+"/comments", token, map[string]any{"comment": map[string]any{"body": body}}, headers...)
}

// slugs reads a list of articles and returns its slugs in order and its next cursor.
func (s *blockScene) slugs(t *testing.T, token, path string) ([]string, string) {
	t.Helper()
	res := s.app.Do("GET", path, token, nil).Expect(t, http.StatusOK)
	arts, _ := articlesOf(t, res)
	out := make([]string, len(arts))
	for i, a := range arts {
		out[i] = a["slug"].(string)
	}
	next, _ := res.JSON(t)["nextCursor"].(string)
	return out, next
}

// commenters returns the authors of the comments ann (or anyone) sees on slug, in order.
func (s *blockScene) commenters(t *testing.T, token, slug string) []string {
	t.Helper()
	res := s.app.Do("GET", "/api/articles/"+slug+"/comments", token, nil).Expect(t, http.StatusOK)
	var out []string
	for _, c := range res.JSON(t)["comments"].([]any) {
		out = append(out, c.(map[string]any)["author"].(map[string]any)["username"].(string))
	}
	return out
}

func profileOf(t *testing.T, r response) map[string]any {
	t.Helper()
	p, ok := r.JSON(t)["profile"].(map[string]any)
	if !ok {
		t.Fatalf("no profile in %s", r.Body)
	}
	return p
}

func requireBlockedError(t *testing.T, r response, message string) {
	t.Helper()
	r.Expect(t, http.StatusForbidden)
	errs, _ := r.JSON(t)["errors"].(map[string]any)
	if got, _ := errs["profile"].([]any); len(got) != 1 || got[0] != message {
		t.Fatalf("errors = %v, want profile: %q%s", errs, message, r.ServedBy())
	}
}

const (
	blockedByMessage = "has blocked you: you cannot follow them or comment on their articles"
	blockingMessage  = "is blocked by you: unblock them first"
)

func reversed(in []string) []string {
	out := slices.Clone(in)
	slices.Reverse(out)
	return out
}

func TestBlocks_EveryRule(t *testing.T) {
	parallel(t)
	app := startApp(t)
	s := newBlockScene(t, app, "br")
	// Follows both ways before the block.
	app.Do("POST", "/api/profiles/brann/follow", s.bob, nil).Expect(t, http.StatusOK)
	app.Do("POST", "/api/profiles/brbob/follow", s.ann, nil).Expect(t, http.StatusOK)
	if feed, _ := s.slugs(t, s.ann, "/api/articles/feed"); len(feed) != 3 {
		t.Fatalf("ann's feed before the block = %v, want bob's three articles", feed)
	}
	all := append(reversed(s.bobSlugs), reversed(s.catSlugs)...)
	if got, _ := s.slugs(t, s.ann, "/api/articles?tag="+s.tag); !reflect.DeepEqual(got, all) {
		t.Fatalf("ann's tag list before the block = %v, want %v", got, all)
	}

	t.Run("block answers the profile with blocking true, and again the same", func(t *testing.T) {
		for range 2 {
			p := profileOf(t, app.Do("POST", "/api/profiles/brbob/block", s.ann, nil).Expect(t, http.StatusOK))
			if p["username"] != "brbob" || p["blocking"] != true || p["following"] != false {
				t.Fatalf("block answered %v", p)
			}
		}
		if p := profileOf(t, app.Do("GET", "/api/profiles/brbob", s.ann, nil).Expect(t, http.StatusOK)); p["blocking"] != true || p["following"] != false {
			t.Errorf("ann's view of bob = %v, want blocking and not following", p)
		}
		if p := profileOf(t, app.Do("GET", "/api/profiles/brbob", "", nil).Expect(t, http.StatusOK)); p["blocking"] != nil {
			t.Errorf("an anonymous view shows blocking: %v", p)
		}
	})
	t.Run("the follows between them ended, both ways", func(t *testing.T) {
		if p := profileOf(t, app.Do("GET", "/api/profiles/brann", s.bob, nil).Expect(t, http.StatusOK)); p["following"] != false || p["blocking"] != false {
			t.Errorf("bob's view of ann = %v, want not following (and not blocking)", p)
		}
		if feed, _ := s.slugs(t, s.ann, "/api/articles/feed"); len(feed) != 0 {
			t.Errorf("ann's feed after the block = %v, want none", feed)
		}
	})
	t.Run("the blocked user cannot follow the blocker, nor the blocker them", func(t *testing.T) {
		requireBlockedError(t, app.Do("POST", "/api/profiles/brann/follow", s.bob, nil), blockedByMessage)
		requireBlockedError(t, app.Do("POST", "/api/profiles/brbob/follow", s.ann, nil), blockingMessage)
		if n := app.pgCount(t, `SELECT count(*) FROM follows f JOIN users a ON a.id = f.follower_id JOIN users b ON b.id = f.followee_id
			WHERE a.username IN ('brann', 'brbob') AND b.username IN ('brann', 'brbob')`); n != 0 {
			t.Errorf("%d follows between them, want 0", n)
		}
	})
	t.Run("the blocked user cannot comment on the blocker's articles, with or without an Idempotency-Key", func(t *testing.T) {
		requireBlockedError(t, s.comment(s.bob, s.annSlug, "let me in", ""), blockedByMessage)
		requireBlockedError(t, s.comment(s.bob, s.annSlug, "let me in", "br-blocked-comment"), blockedByMessage)
		s.comment(s.cat, s.annSlug, "cat may", "").Expect(t, http.StatusOK)
		s.comment(s.ann, s.catDiscussed, "ann may comment where bob does", "").Expect(t, http.StatusOK)
		if got := s.commenters(t, "", s.annSlug); !reflect.DeepEqual(got, []string{"brcat"}) {
			t.Errorf("comments on ann's article = %v, want only cat's", got)
		}
	})
	t.Run("the blocked user's articles leave the blocker's lists, which are refilled", func(t *testing.T) {
		if got, _ := s.slugs(t, s.ann, "/api/articles?tag="+s.tag); !reflect.DeepEqual(got, reversed(s.catSlugs)) {
			t.Errorf("ann's tag list = %v, want cat's %v", got, reversed(s.catSlugs))
		}
		// Two a page: the first read holds only bob's; the page is refilled with cat's.
		if got, _ := s.slugs(t, s.ann, "/api/articles?limit=2&tag="+s.tag); !reflect.DeepEqual(got, reversed(s.catSlugs)) {
			t.Errorf("ann's tag list of two = %v, want cat's %v", got, reversed(s.catSlugs))
		}
		if got, _ := s.slugs(t, s.ann, "/api/articles?limit=1&offset=1&tag="+s.tag); !reflect.DeepEqual(got, []string{s.catSlugs[0]}) {
			t.Errorf("ann's tag list at offset 1 = %v, want cat's older article", got)
		}
		first, next := s.slugs(t, s.ann, "/api/articles?limit=1&tag="+s.tag)
		rest, _ := s.slugs(t, s.ann, "/api/articles?limit=1&tag="+s.tag+"&cursor="+next)
		if got := append(first, rest...); !reflect.DeepEqual(got, reversed(s.catSlugs)) {
			t.Errorf("ann's tag list by cursor = %v, want cat's %v", got, reversed(s.catSlugs))
		}
		res := app.Do("GET", "/api/articles?author=brbob", s.ann, nil).Expect(t, http.StatusOK)
		if arts, count := articlesOf(t, res); len(arts) != 0 || count != 0 {
			t.Errorf("ann's list of bob's articles = %d articles, count %v; want none", len(arts), count)
		}
		for _, path := range []string{"/api/articles", "/api/articles?limit=3"} {
			got, _ := s.slugs(t, s.ann, path)
			for _, slug := range got {
				if slices.Contains(s.bobSlugs, slug) {
					t.Errorf("%s shows ann bob's %s", path, slug)
				}
			}
		}
		if got, _ := s.slugs(t, s.cat, "/api/articles?tag="+s.tag); !reflect.DeepEqual(got, all) {
			t.Errorf("cat's tag list = %v, want everything %v", got, all)
		}
	})
	t.Run("the blocked user's comments leave the blocker's comment pages", func(t *testing.T) {
		if got := s.commenters(t, s.ann, s.catDiscussed); !reflect.DeepEqual(got, []string{"brcat", "brann"}) {
			t.Errorf("ann sees commenters %v, want [brcat brann]", got)
		}
		if got := s.commenters(t, s.cat, s.catDiscussed); !reflect.DeepEqual(got, []string{"brbob", "brcat", "brbob", "brann"}) {
			t.Errorf("cat sees commenters %v, want everyone's", got)
		}
	})
	t.Run("the block list", func(t *testing.T) {
		app.Do("POST", "/api/profiles/brcat/block", s.ann, nil).Expect(t, http.StatusOK)
		res := app.Do("GET", "/api/user/blocks?limit=1", s.ann, nil).Expect(t, http.StatusOK).JSON(t)
		first := res["profiles"].([]any)
		next, _ := res["nextCursor"].(string)
		if len(first) != 1 || first[0].(map[string]any)["username"] != "brcat" || first[0].(map[string]any)["blocking"] != true || next == "" {
			t.Fatalf("first page of blocks = %v (next %q), want cat, newest first, and a cursor", first, next)
		}
		res = app.Do("GET", "/api/user/blocks?limit=1&cursor="+next, s.ann, nil).Expect(t, http.StatusOK).JSON(t)
		if second := res["profiles"].([]any); len(second) != 1 || second[0].(map[string]any)["username"] != "brbob" || res["nextCursor"] != nil {
			t.Fatalf("second page of blocks = %v, want bob and no cursor", res)
		}
		app.Do("DELETE", "/api/profiles/brcat/block", s.ann, nil).Expect(t, http.StatusOK)
	})
	t.Run("bad input", func(t *testing.T) {
		requireErrorField(t, app.Do("POST", "/api/profiles/brann/block", s.ann, nil), http.StatusUnprocessableEntity, "username")
		requireErrorField(t, app.Do("DELETE", "/api/profiles/brann/block", s.ann, nil), http.StatusUnprocessableEntity, "username")
		app.Do("POST", "/api/profiles/nobody-here/block", s.ann, nil).Expect(t, http.StatusNotFound)
		app.Do("POST", "/api/profiles/brbob/block", "", nil).Expect(t, http.StatusUnauthorized)
		app.Do("GET", "/api/user/blocks", "", nil).Expect(t, http.StatusUnauthorized)
		requireErrorField(t, app.Do("GET", "/api/user/blocks?cursor=garbage", s.ann, nil), http.StatusUnprocessableEntity, "cursor")
		if n := app.pgCount(t, `SELECT count(*) FROM user_blocks b JOIN users u ON u.id = b.blocker_id WHERE u.username = 'brann'`); n != 1 {
			t.Errorf("ann holds %d blocks after the refused requests, want 1", n)
		}
	})
	t.Run("unblock: everything shows again, and the follow may be made again", func(t *testing.T) {
		p := profileOf(t, app.Do("DELETE", "/api/profiles/brbob/block", s.ann, nil).Expect(t, http.StatusOK))
		if p["blocking"] != false || p["following"] != false {
			t.Fatalf("unblock answered %v", p)
		}
		app.Do("DELETE", "/api/profiles/brbob/block", s.ann, nil).Expect(t, http.StatusOK)
		if got, _ := s.slugs(t, s.ann, "/api/articles?tag="+s.tag); !reflect.DeepEqual(got, all) {
			t.Errorf("ann's tag list after the unblock = %v, want %v", got, all)
		}
		if got := s.commenters(t, s.ann, s.catDiscussed); len(got) != 4 {
			t.Errorf("ann sees commenters %v after the unblock, want all four", got)
		}
		app.Do("POST", "/api/profiles/brann/follow", s.bob, nil).Expect(t, http.StatusOK)
		s.comment(s.bob, s.annSlug, "hello again", "").Expect(t, http.StatusOK)
		if res := app.Do("GET", "/api/user/blocks", s.ann, nil).Expect(t, http.StatusOK).JSON(t); len(res["profiles"].([]any)) != 0 {
			t.Errorf("blocks after the unblock = %v, want none", res)
		}
	})
}

// TestFleet_BlockHoldsOnEveryInstance: instances behind the round-robin balancer (the suite's own
// fleet with INKWELL_E2E_FLEET, else three of its own). Every instance has the blocker's blocked
// set, lists, feed and comment pages in its caches (in process too) before the block; the block
// lands on one instance, and the very next requests, which land on every instance in turn,
// respect it: the lists, the feed and the comments leave the blocked user out, and the blocked
// user's follow and comment are refused. The unblock is seen the same way.
func TestFleet_BlockHoldsOnEveryInstance(t *testing.T) {
	parallel(t)
	var fleet *testApp
	if fleetSize(t) > 1 {
		fleet = startApp(t)
	} else {
		fleet = &testApp{apptest.StartFleet(t, 3)}
	}
	n := len(fleet.Fleet)
	s := newBlockScene(t, fleet, "fb")
	fleet.Do("POST", "/api/profiles/fbbob/follow", s.ann, nil).Expect(t, http.StatusOK)
	all := append(reversed(s.bobSlugs), reversed(s.catSlugs)...)

	// readAll reads, as ann, twice on every instance: the tag list (its first page is a cached
	// one), the feed, the comments on cat's article and bob's profile.
	readAll := func(t *testing.T, when string, blocked bool) {
		t.Helper()
		wantList, wantFeed, wantCommenters := all, reversed(s.bobSlugs), []string{"fbbob", "fbcat", "fbbob"}
		if blocked {
			wantList, wantFeed, wantCommenters = reversed(s.catSlugs), []string{}, []string{"fbcat"}
		}
		for i := range 2 * n {
			if got, _ := s.slugs(t, s.ann, "/api/articles?tag="+s.tag); !reflect.DeepEqual(got, wantList) {
				t.Fatalf("%s, read %d: ann's tag list %v, want %v", when, i+1, got, wantList)
			}
			if got, _ := s.slugs(t, s.ann, "/api/articles/feed"); !reflect.DeepEqual(got, wantFeed) {
				t.Fatalf("%s, read %d: ann's feed %v, want %v", when, i+1, got, wantFeed)
			}
			if got := s.commenters(t, s.ann, s.catDiscussed); !reflect.DeepEqual(got, wantCommenters) {
				t.Fatalf("%s, read %d: ann sees commenters %v, want %v", when, i+1, got, wantCommenters)
			}
			res := fleet.Do("GET", "/api/profiles/fbbob", s.ann, nil).Expect(t, http.StatusOK)
			if p := profileOf(t, res); p["blocking"] != blocked {
				t.Fatalf("%s, read %d%s: ann's view of bob %v, want blocking %v", when, i+1, res.ServedBy(), p, blocked)
			}
		}
	}
	readAll(t, "before the block", false)

	res := fleet.Do("POST", "/api/profiles/fbbob/block", s.ann, nil).Expect(t, http.StatusOK)
	readAll(t, "right after the block"+res.ServedBy(), true)
	for i := range n {
		requireBlockedError(t, fleet.Do("POST", "/api/profiles/fbann/follow", s.bob, nil), blockedByMessage)
		requireBlockedError(t, s.comment(s.bob, s.annSlug, fmt.Sprintf("try %d", i), ""), blockedByMessage)
	}

	res = fleet.Do("DELETE", "/api/profiles/fbbob/block", s.ann, nil).Expect(t, http.StatusOK)
	when := "right after the unblock" + res.ServedBy()
	for i := range 2 * n {
		if got, _ := s.slugs(t, s.ann, "/api/articles?tag="+s.tag); !reflect.DeepEqual(got, all) {
			t.Fatalf("%s, read %d: ann's tag list %v, want %v", when, i+1, got, all)
		}
		if got := s.commenters(t, s.ann, s.catDiscussed); len(got) != 3 {
			t.Fatalf("%s, read %d: ann sees commenters %v, want all three", when, i+1, got)
		}
		s.comment(s.bob, s.annSlug, fmt.Sprintf("welcome back %d", i), "").Expect(t, http.StatusOK)
	}
}

package main

import (
	"bytes"
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/inkwell-dev/inkwell/internal/apptest"
	"github.com/inkwell-dev/inkwell/internal/testenv"
	"github.com/inkwell-dev/inkwell/ioc"
)

// TestUsersDelete: two servers share one database and Redis; the deleted user has a session on
// each, an API key, an article, a comment, a like, a folder and a follower, and server B holds the
// user, the profile, the article and the first page in its in-process tier (kept a minute here,
// so only the broadcast can drop them). Right when `inkwell users delete` returns, with no wait:
// every token of the user is 401 on both servers (GET /api/user used to answer from the cache),
// B serves none of the user's entries, and the counts the user held up are down.
func TestUsersDelete(t *testing.T) {
	db, rds := testenv.NewDB(t), testenv.NewRedis(t)
	longLocal := func(c *ioc.Config) { c.Tune.CacheLocalTTL = &aMinute; c.Server.RateAuth = "0" }
	a := apptest.StartReplica(t, db, rds.Prefix, longLocal)
	b := apptest.StartReplica(t, db, rds.Prefix, longLocal)
	for _, app := range []*apptest.App{a, b} {
		waitSubscribed(t, app) // only then do reads fill the in-process tiers
	}
	t.Setenv("DATABASE_URL", db.URL+"&pool_max_conns=4")
	t.Setenv("REDIS_URL", testenv.RedisURL())
	t.Setenv("INKWELL_REDIS_MODE", testenv.RedisMode())
	t.Setenv("INKWELL_REDIS_PREFIX", rds.Prefix)

	victim := b.Register("victim")
	other := a.Do("POST", "/api/users/login", "", map[string]any{"user": map[string]any{
		"email": "victim@example.com", "password": "correct horse battery"}}).Expect(t, http.StatusOK).JSON(t)["user"].(map[string]any)["token"].(string)
	key := b.Do("POST", "/api/user/api-keys", victim, map[string]any{"apiKey": map[string]any{"name": "ci"}}).
		Expect(t, http.StatusCreated).JSON(t)["apiKey"].(map[string]any)["key"].(string)
	reader := b.Register("reader")
	theirs := b.Do("POST", "/api/articles", victim, apptest.NewArticle("By the victim", "gone")).Expect(t, http.StatusCreated).Article(t)["slug"].(string)
	mine := b.Do("POST", "/api/articles", reader, apptest.NewArticle("By the reader")).Expect(t, http.StatusCreated).Article(t)["slug"].(string)
	b.Do("POST", "/api/profiles/victim/follow", reader, nil).Expect(t, http.StatusOK)
	b.Do("POST", "/api/articles/"+mine+"/favorite", victim, nil).Expect(t, http.StatusOK)
	b.Do("POST", "/api/articles/"+mine+"/comments", victim, map[string]any{"comment": map[string]any{"body": "first"}}).Expect(t, http.StatusOK)
	folder := b.Do("POST", "/api/collections", victim, map[string]any{"collection": map[string]any{"name": "keep"}}).
		Expect(t, http.StatusCreated).JSON(t)["collection"].(map[string]any)["id"]
	b.Do("POST", "/api/articles/"+mine+"/collect", victim, map[string]any{"collectionId": folder}).Expect(t, http.StatusOK)

	counts := func(app *apptest.App) (favorites, collects float64) {
		t.Helper()
		art := app.Do("GET", "/api/articles/"+mine, "", nil).Expect(t, http.StatusOK).Article(t)
		return art["favoritesCount"].(float64), art["collectsCount"].(float64)
	}
	slugsOf := func(r apptest.Response) []string {
		t.Helper()
		var out []string
		for _, a := range r.JSON(t)["articles"].([]any) {
			out = append(out, a.(map[string]any)["slug"].(string))
		}
		return out
	}
	// B reads everything once, and the user's own reads warm its session checks.
	for _, token := range []string{victim, other, key} {
		for _, app := range []*apptest.App{a, b} {
			app.Do("GET", "/api/user", token, nil).Expect(t, http.StatusOK)
			app.Do("GET", "/api/articles/feed", token, nil).Expect(t, http.StatusOK)
		}
	}
	b.Do("GET", "/api/profiles/victim", "", nil).Expect(t, http.StatusOK)
	b.Do("GET", "/api/articles/"+theirs, "", nil).Expect(t, http.StatusOK)
	if got := slugsOf(b.Do("GET", "/api/articles", "", nil).Expect(t, http.StatusOK)); !slices.Contains(got, theirs) {
		t.Fatalf("the first page on B lacks the victim's article: %v", got)
	}
	if got := slugsOf(b.Do("GET", "/api/articles/feed", reader, nil).Expect(t, http.StatusOK)); !slices.Contains(got, theirs) {
		t.Fatalf("the reader's feed on B lacks the victim's article: %v", got)
	}
	if f, c := counts(b); f != 1 || c != 1 {
		t.Fatalf("before: %v favorites, %v collects; want 1 and 1", f, c)
	}

	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"users", "delete", "Victim"}, &out, &errOut); err != nil {
		t.Fatalf("users delete: %v\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "deleted user victim") || !strings.Contains(out.String(), "1 articles, 1 comments, 1 likes, 1 folders, 1 followers") {
		t.Errorf("users delete printed %q", out.String())
	}

	// No waiting: the command returned after every instance confirmed.
	for name, app := range map[string]*apptest.App{"A": a, "B": b} {
		for _, token := range []string{victim, other, key} {
			// /api/user reads the user; the feed does not, so only the revocation refuses it.
			for _, path := range []string{"/api/user", "/api/articles/feed"} {
				if res := app.Do("GET", path, token, nil); res.Status != http.StatusUnauthorized {
					t.Errorf("%s: GET %s with a deleted user's credential: %d %s", name, path, res.Status, res.Body)
				}
			}
		}
	}
	b.Do("GET", "/api/profiles/victim", "", nil).Expect(t, http.StatusNotFound)
	b.Do("GET", "/api/articles/"+theirs, "", nil).Expect(t, http.StatusNotFound)
	if got := slugsOf(b.Do("GET", "/api/articles", "", nil).Expect(t, http.StatusOK)); slices.Contains(got, theirs) {
		t.Errorf("the first page on B still shows the deleted article: %v", got)
	}
	if got := slugsOf(b.Do("GET", "/api/articles?tag=gone", "", nil).Expect(t, http.StatusOK)); len(got) != 0 {
		t.Errorf("the tag's page on B still shows the deleted article: %v", got)
	}
	if got := slugsOf(b.Do("GET", "/api/articles/feed", reader, nil).Expect(t, http.StatusOK)); slices.Contains(got, theirs) {
		t.Errorf("the reader's feed on B still shows the deleted article: %v", got)
	}
	comments := b.Do("GET", "/api/articles/"+mine+"/comments", "", nil).Expect(t, http.StatusOK).JSON(t)["comments"].([]any)
	if len(comments) != 0 {
		t.Errorf("the deleted user's comment is still listed: %v", comments)
	}
	// Counts follow within the counters' in-process bound (a second).
	deadline := time.Now().Add(10 * time.Second)
	for f, c := counts(b); f != 0 || c != 0; f, c = counts(b) {
		if time.Now().After(deadline) {
			t.Fatalf("after the delete: %v favorites, %v collects on B; want 0 and 0", f, c)
		}
	}

	if err := run(context.Background(), []string{"users", "delete", "victim"}, &out, &errOut); err == nil || !strings.Contains(err.Error(), `no user named "victim"`) {
		t.Errorf("deleting again: %v", err)
	}
	if err := run(context.Background(), []string{"users", "delete"}, &out, &errOut); err == nil {
		t.Error("users delete without a username succeeded")
	}
}

// waitSubscribed returns once the server's invalidation channel is subscribed (its in-process
// tiers are in use).
// aMinute is the in-process cache tiers' TTL (ioc.Tuning.CacheLocalTTL) in the tests whose
// server must answer a change at once although it holds a copy for a minute.
var aMinute = time.Minute

func waitSubscribed(t *testing.T, app *apptest.App) {
	t.Helper()
	// Polling a gauge: there is nothing to wait on in another process.
	testenv.WaitUntil(t, "the invalidation channel subscribes", func() bool {
		return strings.Contains(app.Metrics(), "\ninkwell_cache_invalidation_subscribed 1\n")
	})
}

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// promote gives a freshly registered account a role straight in PostgreSQL: how an operator's
// `inkwell users role` makes the first admin, without a process to run. Call it before the
// account's first authenticated request, while no instance holds its cache entry.
func (a *testApp) promote(t *testing.T, username, role string) {
	t.Helper()
	if _, err := a.DB.Pool.Exec(context.Background(), `UPDATE users SET role = $2 WHERE username = $1`, username, role); err != nil {
		t.Fatalf("promote %s: %v", username, err)
	}
}

// staff registers an admin and a moderator (made by the admin through the API).
func (a *testApp) staff(t *testing.T, prefix string) (admin, mod string) {
	t.Helper()
	admin = a.Register(prefix + "admin")
	a.promote(t, prefix+"admin", "admin")
	mod = a.Register(prefix + "mod")
	a.Do("PUT", "/api/admin/users/"+prefix+"mod/role", admin, map[string]any{"role": "moderator"}).Expect(t, http.StatusOK)
	return admin, mod
}

func slugsOfList(t *testing.T, r response) []string {
	t.Helper()
	var out []string
	for _, a := range r.JSON(t)["articles"].([]any) {
		out = append(out, a.(map[string]any)["slug"].(string))
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestModeration_Roles(t *testing.T) {
	parallel(t)
	app := startApp(t)
	admin, mod := app.staff(t, "ro")
	plain := app.Register("roplain")

	if got := app.Do("GET", "/api/user", plain, nil).Expect(t, http.StatusOK).JSON(t)["user"].(map[string]any)["role"]; got != "user" {
		t.Fatalf("a new account's role: %v, want user", got)
	}
	if got := app.Do("GET", "/api/user", mod, nil).Expect(t, http.StatusOK).JSON(t)["user"].(map[string]any)["role"]; got != "moderator" {
		t.Fatalf("the promoted account's role: %v, want moderator", got)
	}
	res := app.Do("PUT", "/api/admin/users/roplain/role", admin, map[string]any{"role": "moderator"}).Expect(t, http.StatusOK)
	if u := res.JSON(t)["user"].(map[string]any); u["username"] != "roplain" || u["role"] != "moderator" {
		t.Fatalf("role answer: %s", res.Body)
	}
	app.Do("PUT", "/api/admin/users/roplain/role", admin, map[string]any{"role": "user"}).Expect(t, http.StatusOK)

	t.Run("only admins change roles", func(t *testing.T) {
		app.Do("PUT", "/api/admin/users/roplain/role", mod, map[string]any{"role": "admin"}).Expect(t, http.StatusForbidden)
		app.Do("PUT", "/api/admin/users/romod/role", plain, map[string]any{"role": "admin"}).Expect(t, http.StatusForbidden)
		app.Do("PUT", "/api/admin/users/roplain/role", "", map[string]any{"role": "admin"}).Expect(t, http.StatusUnauthorized)
	})
	t.Run("bad input", func(t *testing.T) {
		requireErrorField(t, app.Do("PUT", "/api/admin/users/roplain/role", admin, map[string]any{"role": "superuser"}), http.StatusUnprocessableEntity, "role")
		app.Do("PUT", "/api/admin/users/nobody-here/role", admin, map[string]any{"role": "user"}).Expect(t, http.StatusNotFound)
		app.Do("PUT", "/api/admin/users/roplain/role", admin, `{"role": 7}`).Expect(t, http.StatusUnprocessableEntity)
	})
	t.Run("API keys carry no moderation powers", func(t *testing.T) {
		key := app.Do("POST", "/api/user/api-keys", admin, map[string]any{"apiKey": map[string]any{"name": "ops"}}).
			Expect(t, http.StatusCreated).JSON(t)["apiKey"].(map[string]any)["key"].(string)
		app.Do("PUT", "/api/admin/users/roplain/role", key, map[string]any{"role": "admin"}).Expect(t, http.StatusForbidden)
		app.Do("POST", "/api/moderation/users/roplain/suspend", key, map[string]any{"reason": "x"}).Expect(t, http.StatusForbidden)
	})
	if n := app.pgCount(t, `SELECT count(*) FROM moderation_log WHERE action = 'role' AND target_label = 'roplain'`); n != 2 {
		t.Fatalf("moderation log: %d role entries for roplain, want 2", n)
	}
}

func TestModeration_HideArticle(t *testing.T) {
	parallel(t)
	app := startApp(t)
	_, mod := app.staff(t, "ha")
	author, reader := app.Register("haauthor"), app.Register("hareader")
	app.Do("POST", "/api/profiles/haauthor/follow", reader, nil).Expect(t, http.StatusOK)
	slug := articleOf(t, app.Do("POST", "/api/articles", author, newArticle("Buy cheap watches now", "hatag")).Expect(t, http.StatusCreated))["slug"].(string)
	other := app.publish(author, "An honest article")

	// Every place a reader meets the article, read before the hide so caches hold it.
	visible := func(t *testing.T, want bool) {
		t.Helper()
		status := app.Do("GET", "/api/articles/"+slug, reader, nil).Status
		if (status == http.StatusOK) != want {
			t.Fatalf("GET the article: %d, want visible=%v", status, want)
		}
		for _, path := range []string{"/api/articles", "/api/articles?tag=hatag", "/api/articles?author=haauthor", "/api/articles/feed"} {
			res := app.Do("GET", path, reader, nil).Expect(t, http.StatusOK)
			if got := contains(slugsOfList(t, res), slug); got != want {
				t.Fatalf("%s lists it: %v, want %v (%s)", path, got, want, res.Body)
			}
			if !contains(slugsOfList(t, res), other) && path != "/api/articles?tag=hatag" {
				t.Fatalf("%s lost the other article: %s", path, res.Body)
			}
		}
		count := app.Do("GET", "/api/articles?author=haauthor", "", nil).Expect(t, http.StatusOK).JSON(t)["articlesCount"]
		if wantCount := map[bool]float64{true: 2, false: 1}[want]; count != wantCount {
			t.Fatalf("the author's articlesCount: %v, want %v", count, wantCount)
		}
		tags := app.Do("GET", "/api/tags", "", nil).Expect(t, http.StatusOK).JSON(t)["tags"].([]any)
		found := false
		for _, tg := range tags {
			found = found || tg == "hatag"
		}
		if found != want {
			t.Fatalf("tag cloud has hatag: %v, want %v (%v)", found, want, tags)
		}
		// Signed in, a search is never answered from the anonymous answer cache (5 s), so it shows
		// an unhide at once; anonymous pages may show it up to 5 s late, but never show a hidden
		// article (their hits are checked against the article cache).
		searchers := []string{reader}
		if !want {
			searchers = append(searchers, "")
		}
		for _, who := range searchers {
			res := app.Do("GET", "/api/search/articles?q=watches", who, nil).Expect(t, http.StatusOK)
			hits := res.JSON(t)["articles"].([]any)
			if (len(hits) == 1) != want {
				t.Fatalf("search (signed in: %v) finds %d articles, want visible=%v: %s", who != "", len(hits), want, res.Body)
			}
		}
	}
	visible(t, true)

	t.Run("plain users and bad input never hide", func(t *testing.T) {
		app.Do("POST", "/api/moderation/articles/"+slug+"/hide", reader, map[string]any{"reason": "mine"}).Expect(t, http.StatusForbidden)
		app.Do("POST", "/api/moderation/articles/"+slug+"/hide", author, map[string]any{"reason": "mine"}).Expect(t, http.StatusForbidden)
		requireErrorField(t, app.Do("POST", "/api/moderation/articles/"+slug+"/hide", mod, map[string]any{"reason": ""}), http.StatusUnprocessableEntity, "reason")
		requireErrorField(t, app.Do("POST", "/api/moderation/articles/"+slug+"/hide", mod, map[string]any{"reason": strings.Repeat("x", 1001)}), http.StatusUnprocessableEntity, "reason")
		app.Do("POST", "/api/moderation/articles/"+slug+"/hide", mod, `{"reason": "a\u0000b"}`).Expect(t, http.StatusUnprocessableEntity)
		app.Do("POST", "/api/moderation/articles/no-such-article/hide", mod, map[string]any{"reason": "spam"}).Expect(t, http.StatusNotFound)
		visible(t, true)
	})

	res := app.Do("POST", "/api/moderation/articles/"+slug+"/hide", mod, map[string]any{"reason": "spam links"}).Expect(t, http.StatusOK)
	if m := res.Article(t)["moderation"].(map[string]any); m["hidden"] != true || m["reason"] != "spam links" {
		t.Fatalf("hide answer: %s", res.Body)
	}
	visible(t, false)
	app.Do("GET", "/api/articles/"+slug, "", nil).Expect(t, http.StatusNotFound)

	t.Run("its author still sees it, with the reason", func(t *testing.T) {
		art := app.Do("GET", "/api/articles/"+slug, author, nil).Expect(t, http.StatusOK).Article(t)
		m, _ := art["moderation"].(map[string]any)
		if m["hidden"] != true || m["reason"] != "spam links" || art["status"] != "published" {
			t.Fatalf("the author's view: %v", art)
		}
		mine := app.Do("GET", "/api/user/articles", author, nil).Expect(t, http.StatusOK)
		if !contains(slugsOfList(t, mine), slug) || mine.JSON(t)["articlesCount"] != float64(2) {
			t.Fatalf("the author's own list: %s", mine.Body)
		}
		if n := app.Do("GET", "/api/articles/"+other, author, nil).Expect(t, http.StatusOK).Article(t)["moderation"]; n != nil {
			t.Fatalf("a visible article carries moderation: %v", n)
		}
	})
	t.Run("withdraw and publish keep it hidden", func(t *testing.T) {
		app.Do("POST", "/api/articles/"+slug+"/withdraw", author, nil).Expect(t, http.StatusOK)
		if st := app.Do("GET", "/api/articles/"+slug, author, nil).Expect(t, http.StatusOK).Article(t)["status"]; st != "withdrawn" {
			t.Fatalf("status after withdraw: %v", st)
		}
		app.Do("POST", "/api/articles/"+slug+"/publish", author, nil).Expect(t, http.StatusOK)
		visible(t, false)
	})
	t.Run("the author is told", func(t *testing.T) {
		page := app.notifications(author, "")
		found := false
		for _, n := range page.Items {
			if n["kind"] == "moderation.hidden" && strings.Contains(fmt.Sprint(n["detail"]), "spam links") {
				found = true
			}
		}
		if !found {
			t.Fatalf("no moderation.hidden notice: %+v", page.Items)
		}
	})

	app.Do("POST", "/api/moderation/articles/"+slug+"/unhide", mod, nil).Expect(t, http.StatusOK)
	visible(t, true)
	if n := app.pgCount(t, `SELECT count(*) FROM moderation_log WHERE target_kind = 'article' AND target_label = $1`, slug); n != 2 {
		t.Fatalf("moderation log: %d entries for the article, want 2 (hide, unhide)", n)
	}
}

func TestModeration_HideComment(t *testing.T) {
	parallel(t)
	app := startApp(t)
	_, mod := app.staff(t, "hc")
	author, troll, reader := app.Register("hcauthor"), app.Register("hctroll"), app.Register("hcreader")
	slug := app.publish(author, "Comments welcome")
	cid := app.Do("POST", "/api/articles/"+slug+"/comments", troll, map[string]any{"comment": map[string]any{"body": "you are all idiots"}}).
		Expect(t, http.StatusOK).JSON(t)["comment"].(map[string]any)["id"].(float64)
	app.Do("POST", "/api/articles/"+slug+"/comments", reader, map[string]any{"comment": map[string]any{"body": "nice"}}).Expect(t, http.StatusOK)
	bodies := func(token string) []any {
		return app.Do("GET", "/api/articles/"+slug+"/comments", token, nil).Expect(t, http.StatusOK).JSON(t)["comments"].([]any)
	}
	if n := len(bodies(reader)); n != 2 {
		t.Fatalf("%d comments before, want 2", n)
	}
	path := fmt.Sprintf("/api/moderation/comments/%d/hide", int64(cid))
	app.Do("POST", path, reader, map[string]any{"reason": "rude"}).Expect(t, http.StatusForbidden)
	app.Do("POST", "/api/moderation/comments/99999999/hide", mod, map[string]any{"reason": "rude"}).Expect(t, http.StatusNotFound)
	app.Do("POST", "/api/moderation/comments/abc/hide", mod, map[string]any{"reason": "rude"}).Expect(t, http.StatusNotFound)
	app.Do("POST", path, mod, map[string]any{"reason": "rude"}).Expect(t, http.StatusOK)
	for _, who := range []string{reader, author, ""} {
		if n := len(bodies(who)); n != 1 {
			t.Fatalf("%d comments after the hide, want 1", n)
		}
	}
	mine := bodies(troll)
	if len(mine) != 2 {
		t.Fatalf("the comment's author sees %d comments, want 2", len(mine))
	}
	if m, _ := mine[0].(map[string]any)["moderation"].(map[string]any); m["hidden"] != true || m["reason"] != "rude" {
		t.Fatalf("the author's view of the hidden comment: %v", mine[0])
	}
	app.Do("POST", fmt.Sprintf("/api/moderation/comments/%d/unhide", int64(cid)), mod, nil).Expect(t, http.StatusOK)
	if n := len(bodies(reader)); n != 2 {
		t.Fatalf("%d comments after the unhide, want 2", n)
	}
}

func TestModeration_Suspend(t *testing.T) {
	parallel(t)
	app := startApp(t)
	admin, mod := app.staff(t, "su")
	spammer, reader := app.Register("suspammer"), app.Register("sureader")
	key := app.Do("POST", "/api/user/api-keys", spammer, map[string]any{"apiKey": map[string]any{"name": "bot"}}).
		Expect(t, http.StatusCreated).JSON(t)["apiKey"].(map[string]any)["key"].(string)
	login := app.Do("POST", "/api/users/login", "", map[string]any{"user": map[string]any{"email": "suspammer@example.com", "password": "correct horse battery"}}).
		Expect(t, http.StatusOK).JSON(t)["user"].(map[string]any)
	refresh := login["refreshToken"].(string)
	slug := app.publish(spammer, "Totally legit offer")
	other := app.publish(reader, "A reader writes")
	app.Do("POST", "/api/articles/"+other+"/comments", spammer, map[string]any{"comment": map[string]any{"body": "click here"}}).Expect(t, http.StatusOK)
	app.Do("GET", "/api/articles/"+slug, reader, nil).Expect(t, http.StatusOK)

	t.Run("moderators' limits", func(t *testing.T) {
		far := time.Now().Add(8 * 24 * time.Hour).UTC().Format(time.RFC3339)
		requireErrorField(t, app.Do("POST", "/api/moderation/users/suspammer/suspend", mod, map[string]any{"reason": "spam", "until": far}), http.StatusUnprocessableEntity, "until")
		requireErrorField(t, app.Do("POST", "/api/moderation/users/suspammer/suspend", mod, map[string]any{"reason": "spam", "until": nil}), http.StatusUnprocessableEntity, "until")
		past := time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
		requireErrorField(t, app.Do("POST", "/api/moderation/users/suspammer/suspend", mod, map[string]any{"reason": "spam", "until": past}), http.StatusUnprocessableEntity, "until")
		soon := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
		app.Do("POST", "/api/moderation/users/suadmin/suspend", mod, map[string]any{"reason": "coup", "until": soon}).Expect(t, http.StatusForbidden)
		app.Do("POST", "/api/moderation/users/suspammer/suspend", reader, map[string]any{"reason": "spam", "until": soon}).Expect(t, http.StatusForbidden)
		app.Do("POST", "/api/moderation/users/nobody-here/suspend", mod, map[string]any{"reason": "spam", "until": soon}).Expect(t, http.StatusNotFound)
		app.Do("POST", "/api/moderation/users/suspammer/suspend", mod, map[string]any{"reason": "spam", "until": "tomorrow"}).Expect(t, http.StatusUnprocessableEntity)
		requireErrorField(t, app.Do("POST", "/api/moderation/users/sumod/suspend", mod, map[string]any{"reason": "me", "until": soon}), http.StatusUnprocessableEntity, "username")
		app.Do("GET", "/api/user", spammer, nil).Expect(t, http.StatusOK)
	})

	until := time.Now().Add(48 * time.Hour).UTC().Truncate(time.Second)
	res := app.Do("POST", "/api/moderation/users/suspammer/suspend", mod, map[string]any{"reason": "spam", "until": until.Format(time.RFC3339)}).Expect(t, http.StatusOK)
	if s, _ := res.JSON(t)["user"].(map[string]any)["suspension"].(map[string]any); s["reason"] != "spam" {
		t.Fatalf("suspend answer: %s", res.Body)
	}
	refused := func(t *testing.T, r response) {
		t.Helper()
		r.Expect(t, http.StatusForbidden)
		body := r.JSON(t)
		s, _ := body["suspension"].(map[string]any)
		if s["reason"] != "spam" || s["until"] != until.Format(time.RFC3339) || !strings.Contains(fmt.Sprint(body["errors"]), "suspended until") {
			t.Fatalf("refusal body: %s", r.Body)
		}
	}
	refused(t, app.Do("GET", "/api/user", spammer, nil))
	refused(t, app.Do("GET", "/api/articles", spammer, nil))
	refused(t, app.Do("POST", "/api/articles", key, newArticle("More spam")))
	refused(t, app.Do("POST", "/api/users/login", "", map[string]any{"user": map[string]any{"email": "suspammer@example.com", "password": "correct horse battery"}}))
	refused(t, app.Do("POST", "/api/users/refresh", "", map[string]any{"refreshToken": refresh}))
	app.Do("POST", "/api/users/login", "", map[string]any{"user": map[string]any{"email": "suspammer@example.com", "password": "wrong password!!"}}).Expect(t, http.StatusUnauthorized)

	app.Do("GET", "/api/articles/"+slug, reader, nil).Expect(t, http.StatusNotFound)
	if contains(slugsOfList(t, app.Do("GET", "/api/articles", "", nil).Expect(t, http.StatusOK)), slug) {
		t.Fatal("the suspended author's article is still listed")
	}
	comments := app.Do("GET", "/api/articles/"+other+"/comments", reader, nil).Expect(t, http.StatusOK).JSON(t)["comments"].([]any)
	if len(comments) != 0 {
		t.Fatalf("the suspended author's comment is still shown: %v", comments)
	}

	t.Run("only admins suspend without an end", func(t *testing.T) {
		app.Do("POST", "/api/moderation/users/sureader/suspend", admin, map[string]any{"reason": "test", "until": nil}).Expect(t, http.StatusOK)
		r := app.Do("GET", "/api/user", reader, nil).Expect(t, http.StatusForbidden)
		if s := r.JSON(t)["suspension"].(map[string]any); s["until"] != nil {
			t.Fatalf("an endless suspension's until: %v", s["until"])
		}
		app.Do("POST", "/api/moderation/users/sureader/unsuspend", admin, nil).Expect(t, http.StatusOK)
		app.Do("GET", "/api/user", reader, nil).Expect(t, http.StatusOK)
	})

	app.Do("POST", "/api/moderation/users/suspammer/unsuspend", mod, map[string]any{"reason": "appeal accepted"}).Expect(t, http.StatusOK)
	app.Do("GET", "/api/user", spammer, nil).Expect(t, http.StatusOK)
	app.Do("GET", "/api/articles/"+slug, reader, nil).Expect(t, http.StatusOK)
	if n := len(app.Do("GET", "/api/articles/"+other+"/comments", reader, nil).Expect(t, http.StatusOK).JSON(t)["comments"].([]any)); n != 1 {
		t.Fatalf("%d comments after the unsuspension, want 1", n)
	}
	if n := app.pgCount(t, `SELECT count(*) FROM moderation_log WHERE target_label = 'suspammer' AND action IN ('suspend', 'unsuspend')`); n != 2 {
		t.Fatalf("moderation log: %d suspension entries, want 2", n)
	}
}

// TestModeration_SuspensionEndsByItself: a suspension with an end schedules a durable job at that
// end; when it runs (here: its time is moved to now, as the clock would), the account works again
// and its articles come back, and the log says the suspension ended.
func TestModeration_SuspensionEndsByItself(t *testing.T) {
	parallel(t)
	app := startApp(t)
	_, mod := app.staff(t, "se")
	author := app.Register("seauthor")
	slug := app.publish(author, "Back soon")
	until := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	app.Do("POST", "/api/moderation/users/seauthor/suspend", mod, map[string]any{"reason": "cool off", "until": until}).Expect(t, http.StatusOK)
	app.Do("GET", "/api/user", author, nil).Expect(t, http.StatusForbidden)
	app.Do("GET", "/api/articles/"+slug, "", nil).Expect(t, http.StatusNotFound)
	if n := app.pgCount(t, `SELECT count(*) FROM jobs WHERE kind = 'suspension_end' AND available_at > now()`); n != 1 {
		t.Fatalf("%d suspension_end jobs waiting, want 1", n)
	}

	// The end comes: the stored end and the job's time move to now, and the workers are woken.
	ctx := context.Background()
	if _, err := app.DB.Pool.Exec(ctx, `UPDATE users SET suspended_until = now() - interval '1 second' WHERE username = 'seauthor'`); err != nil {
		t.Fatal(err)
	}
	if _, err := app.DB.Pool.Exec(ctx, `UPDATE jobs SET available_at = now() WHERE kind = 'suspension_end'`); err != nil {
		t.Fatal(err)
	}
	if _, err := app.DB.Pool.Exec(ctx, `SELECT pg_notify('inkwell_jobs', 'default')`); err != nil {
		t.Fatal(err)
	}
	// The job's commit comes before its cache drops (after-commit hooks): wait for what a client
	// sees, the account working again, not for the row.
	app.waitFor("the suspension_end job lifts the suspension", func() bool {
		return app.Do("GET", "/api/user", author, nil).Status == http.StatusOK &&
			app.Do("GET", "/api/articles/"+slug, "", nil).Status == http.StatusOK
	})
	if n := app.pgCount(t, `SELECT count(*) FROM moderation_log WHERE action = 'suspension-ended' AND target_label = 'seauthor'`); n != 1 {
		t.Fatalf("moderation log: %d suspension-ended entries, want 1", n)
	}
}

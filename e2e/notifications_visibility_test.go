package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// articleOfNotification is the article a notification shows, nil when it shows none.
func articleOfNotification(n map[string]any) map[string]any {
	art, _ := n["article"].(map[string]any)
	return art
}

// A follower's notification shows its article only while the article is published: withdrawn, it
// shows neither the title it was announced with nor one typed since; published again, it shows the
// article as it is now, and the new publication notifies nobody again.
func TestNotificationsShowOnlyArticlesTheReaderMaySee(t *testing.T) {
	parallel(t)
	app := startApp(t)
	author := app.Register("visible_author")
	reader := app.Register("visible_reader")
	app.Do("POST", "/api/profiles/visible_author/follow", reader, nil).Expect(t, http.StatusOK)

	art := articleOf(t, app.Do("POST", "/api/articles", author, newArticle("Announced title")).Expect(t, http.StatusCreated))
	slug := art["slug"].(string)
	if got := articleOfNotification(app.awaitNotifications(reader, 1).Items[0]); got == nil || got["title"] != "Announced title" {
		t.Fatalf("notification shows %v, want the published article", got)
	}

	app.Do("POST", "/api/articles/"+slug+"/withdraw", author, nil).Expect(t, http.StatusOK)
	app.Do("PUT", "/api/articles/"+slug, author, map[string]any{"article": map[string]any{"title": "Typed after withdrawing"}}).
		Expect(t, http.StatusOK)
	res := app.Do("GET", "/api/user/notifications", reader, nil).Expect(t, http.StatusOK)
	for _, leak := range []string{"Announced title", "Typed after withdrawing", slug} {
		if strings.Contains(string(res.Body), leak) {
			t.Fatalf("notifications of a withdrawn article show %q: %s", leak, res.Body)
		}
	}
	p := app.notifications(reader, "")
	if len(p.Items) != 1 || articleOfNotification(p.Items[0]) != nil || p.Items[0]["actor"] != "visible_author" || p.Unread != 1 {
		t.Fatalf("notifications %v (unread %v); want the one, without its article", p.Items, p.Unread)
	}

	// Published again: no new notification (a later article's proves the event was applied), and
	// the first one shows the article as it is now.
	app.Do("POST", "/api/articles/"+slug+"/publish", author, nil).Expect(t, http.StatusOK)
	later := articleOf(t, app.Do("POST", "/api/articles", author, newArticle("Later article")).Expect(t, http.StatusCreated))
	p = app.awaitNotifications(reader, 2)
	if slugOfNotification(p.Items[0]) != later["slug"] {
		t.Fatalf("newest notification %v, want %s's", p.Items[0], later["slug"])
	}
	if got := articleOfNotification(p.Items[1]); got == nil || got["slug"] != slug || got["title"] != "Typed after withdrawing" {
		t.Fatalf("republished article's notification shows %v", got)
	}
}

// A publication whose article is withdrawn before the notifications consumer applies it notifies
// nobody. The consumer is held off by a lock on its inbox while the article is published and
// withdrawn.
func TestNotificationsSkipArticlesWithdrawnBeforeTheFanOut(t *testing.T) {
	parallel(t)
	singleInstance(t, "a later article's notification proves the earlier event was applied only with one consumer")
	app := startApp(t)
	author := app.Register("hasty_author")
	reader := app.Register("hasty_reader")
	app.Do("POST", "/api/profiles/hasty_author/follow", reader, nil).Expect(t, http.StatusOK)

	ctx := context.Background()
	hold, err := app.DB.Pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = hold.Rollback(ctx) }()
	if _, err := hold.Exec(ctx, `LOCK TABLE inbox IN SHARE ROW EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	hasty := articleOf(t, app.Do("POST", "/api/articles", author, newArticle("Second thoughts")).Expect(t, http.StatusCreated))
	app.Do("POST", "/api/articles/"+hasty["slug"].(string)+"/withdraw", author, nil).Expect(t, http.StatusOK)
	if err := hold.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	later := articleOf(t, app.Do("POST", "/api/articles", author, newArticle("Meant this one")).Expect(t, http.StatusCreated))
	p := app.awaitNotifications(reader, 1)
	if slugOfNotification(p.Items[0]) != later["slug"] {
		t.Fatalf("notifications %v, want only %s's", p.Items, later["slug"])
	}
	if n := app.pgCount(t, `SELECT count(*) FROM notifications n JOIN articles a ON a.id = n.article_id WHERE a.slug = $1`, hasty["slug"]); n != 0 {
		t.Fatalf("%d notifications of the article withdrawn before the fan-out", n)
	}
}

package e2e

import (
	"net/http"
	"net/url"
	"testing"
)

// notificationsOf is one page of a user's notifications.
type notificationPage struct {
	Items  []map[string]any
	Unread float64
	Next   string
}

func (a *testApp) notifications(token, query string) notificationPage {
	a.T.Helper()
	m := a.Do("GET", "/api/user/notifications"+query, token, nil).Expect(a.T, http.StatusOK).JSON(a.T)
	raw, ok := m["notifications"].([]any)
	if !ok {
		a.T.Fatalf("no notifications list in %v", m)
	}
	p := notificationPage{Unread: m["unreadCount"].(float64)}
	for _, n := range raw {
		p.Items = append(p.Items, n.(map[string]any))
	}
	p.Next, _ = m["nextCursor"].(string)
	return p
}

// awaitNotifications waits until token's first page holds n notifications (the outbox relay and
// the notifications consumer work asynchronously) and returns it.
func (a *testApp) awaitNotifications(token string, n int) notificationPage {
	a.T.Helper()
	var p notificationPage
	a.waitFor("the reader has notifications", func() bool {
		p = a.notifications(token, "?limit=50")
		return len(p.Items) >= n
	})
	if len(p.Items) != n {
		a.T.Fatalf("%d notifications, want %d: %v", len(p.Items), n, p.Items)
	}
	return p
}

func slugOfNotification(n map[string]any) string {
	art, _ := n["article"].(map[string]any)
	s, _ := art["slug"].(string)
	return s
}

func TestNotificationsJourney(t *testing.T) {
	parallel(t)
	app := startApp(t)
	author := app.Register("notifying_author")
	reader := app.Register("loyal_reader")
	bystander := app.Register("bystander")
	app.Do("POST", "/api/profiles/notifying_author/follow", reader, nil).Expect(t, http.StatusOK)

	// Without a token there is nothing to see or mark.
	app.Do("GET", "/api/user/notifications", "", nil).Expect(t, http.StatusUnauthorized)
	app.Do("POST", "/api/user/notifications/read", "", nil).Expect(t, http.StatusUnauthorized)

	// A draft notifies nobody; a publication notifies the followers.
	draft := articleOf(t, app.Do("POST", "/api/articles", author, map[string]any{"article": map[string]any{
		"title": "Work in progress", "description": "d", "body": "b", "draft": true,
	}}).Expect(t, http.StatusCreated))
	first := articleOf(t, app.Do("POST", "/api/articles", author, newArticle("Hello followers")).Expect(t, http.StatusCreated))
	p := app.awaitNotifications(reader, 1)
	n := p.Items[0]
	if n["kind"] != "article.published" || n["actor"] != "notifying_author" || slugOfNotification(n) != first["slug"] ||
		n["article"].(map[string]any)["title"] != "Hello followers" || n["read"] != false || p.Unread != 1 {
		t.Fatalf("notification %v, unread %v", n, p.Unread)
	}
	if _, ok := n["readAt"]; ok {
		t.Fatalf("unread notification has readAt: %v", n)
	}
	if b := app.notifications(bystander, ""); len(b.Items) != 0 || b.Unread != 0 {
		t.Fatalf("a non-follower was notified: %v", b.Items)
	}
	if a := app.notifications(author, ""); len(a.Items) != 0 {
		t.Fatalf("the author was notified of their own article: %v", a.Items)
	}

	// Marking all read.
	if m := app.Do("POST", "/api/user/notifications/read", reader, nil).Expect(t, http.StatusOK).JSON(t); m["marked"] != 1.0 {
		t.Fatalf("marked %v", m)
	}
	p = app.notifications(reader, "")
	if len(p.Items) != 1 || p.Items[0]["read"] != true || p.Items[0]["readAt"] == nil || p.Unread != 0 {
		t.Fatalf("after marking read: %v, unread %v", p.Items, p.Unread)
	}

	// Publishing the draft notifies; withdrawing an article does not. Three more publications
	// follow, so that the withdrawal (written before them) has certainly been relayed by the end.
	app.Do("POST", "/api/articles/"+draft["slug"].(string)+"/publish", author, nil).Expect(t, http.StatusOK)
	p = app.awaitNotifications(reader, 2)
	if slugOfNotification(p.Items[0]) != draft["slug"] || p.Items[0]["read"] != false || p.Unread != 1 {
		t.Fatalf("newest notification %v, unread %v; want the published draft, unread", p.Items[0], p.Unread)
	}
	app.Do("POST", "/api/articles/"+first["slug"].(string)+"/withdraw", author, nil).Expect(t, http.StatusOK)
	var later []string
	for _, title := range []string{"Second thoughts", "Third time", "Fourth wall"} {
		later = append(later, articleOf(t, app.Do("POST", "/api/articles", author, newArticle(title)).Expect(t, http.StatusCreated))["slug"].(string))
	}
	p = app.awaitNotifications(reader, 5)
	if p.Unread != 4 {
		t.Fatalf("unread %v, want 4", p.Unread)
	}

	// Cursor paging: newest first, two per page, every notification once.
	var pages [][]map[string]any
	query := "?limit=2"
	for range 4 {
		page := app.notifications(reader, query)
		pages = append(pages, page.Items)
		if page.Next == "" {
			break
		}
		query = "?limit=2&cursor=" + url.QueryEscape(page.Next)
	}
	var slugs []string
	seen := map[float64]bool{}
	for _, page := range pages {
		for _, item := range page {
			id := item["id"].(float64)
			if seen[id] {
				t.Fatalf("notification %v on two pages", id)
			}
			seen[id] = true
			slugs = append(slugs, slugOfNotification(item))
		}
	}
	// The first article is withdrawn: its notification keeps its place but shows no article.
	want := []string{later[2], later[1], later[0], draft["slug"].(string), ""}
	if len(pages) != 3 || len(pages[2]) != 1 || !equalStrings(slugs, want) {
		t.Fatalf("pages of %v: %v, want %v", []int{len(pages[0]), len(pages[len(pages)-1])}, slugs, want)
	}
	app.Do("GET", "/api/user/notifications?cursor=not-a-cursor", reader, nil).Expect(t, http.StatusUnprocessableEntity)

	// Marking some read by id.
	newest := pages[0][0]["id"].(float64)
	if m := app.Do("POST", "/api/user/notifications/read", reader, map[string]any{"ids": []float64{newest}}).Expect(t, http.StatusOK).JSON(t); m["marked"] != 1.0 {
		t.Fatalf("marked %v", m)
	}
	p = app.notifications(reader, "")
	if p.Unread != 3 || p.Items[0]["read"] != true || p.Items[1]["read"] != false {
		t.Fatalf("after marking the newest read: unread %v, %v", p.Unread, p.Items[:2])
	}
	// Someone else's ids change nothing.
	if m := app.Do("POST", "/api/user/notifications/read", bystander, map[string]any{"ids": []float64{newest}}).Expect(t, http.StatusOK).JSON(t); m["marked"] != 0.0 {
		t.Fatalf("a stranger marked %v", m)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

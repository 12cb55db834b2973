package e2e

import (
	"net/http"
	"strings"
	"testing"
)

// TestRender_BodyHTML: the single-article answers carry the body rendered and sanitized, a write's
// answer as much as a read's, on every instance, and an edit of the body changes it at once;
// lists carry neither body nor HTML.
func TestRender_BodyHTML(t *testing.T) {
	parallel(t)
	app := startApp(t)
	author := app.Register("renderer1")
	body := "# Title\n\nSee [docs](https://example.com) ~~old~~\n\n<script>alert(1)</script>\n\n[x](javascript:alert(1)) <img src=x onerror=alert(1)>"
	created := articleOf(t, app.Do("POST", "/api/articles", author, map[string]any{"article": map[string]any{
		"title": "Rendered", "description": "d", "body": body,
	}}).Expect(t, http.StatusCreated))
	slug := created["slug"].(string)
	check := func(what string, a map[string]any, want ...string) {
		t.Helper()
		html, ok := a["bodyHtml"].(string)
		if !ok {
			t.Fatalf("%s: no bodyHtml in %v", what, a)
		}
		for _, w := range want {
			if !strings.Contains(html, w) {
				t.Errorf("%s: bodyHtml %q lacks %q", what, html, w)
			}
		}
		for _, bad := range []string{"<script", "onerror", "javascript:"} {
			if strings.Contains(html, bad) {
				t.Errorf("%s: bodyHtml %q holds %q", what, html, bad)
			}
		}
	}
	wantFirst := []string{`<h1 id="title">Title</h1>`, `<a href="https://example.com" rel="nofollow ugc noopener">docs</a>`, "<del>old</del>"}
	check("the create's answer", created, wantFirst...)
	for range 3 { // behind a balancer, each read may be another instance, from Redis or its own copy
		check("a read", articleOf(t, app.Do("GET", "/api/articles/"+slug, "", nil).Expect(t, http.StatusOK)), wantFirst...)
	}

	updated := articleOf(t, app.Do("PUT", "/api/articles/"+slug, author, map[string]any{"article": map[string]any{"body": "## Second"}}).Expect(t, http.StatusOK))
	check("the update's answer", updated, `<h2 id="second">Second</h2>`)
	for range 3 {
		got := articleOf(t, app.Do("GET", "/api/articles/"+slug, "", nil).Expect(t, http.StatusOK))
		check("a read after the update", got, `<h2 id="second">Second</h2>`)
		if strings.Contains(got["bodyHtml"].(string), "Title") {
			t.Fatalf("a read after the update still shows the old body: %q", got["bodyHtml"])
		}
	}
	retitled := articleOf(t, app.Do("PUT", "/api/articles/"+slug, author, map[string]any{"article": map[string]any{"title": "Renamed"}}).Expect(t, http.StatusOK))
	check("a retitle's answer", retitled, `<h2 id="second">Second</h2>`)

	list, _ := articlesOf(t, app.Do("GET", "/api/articles?author=renderer1", "", nil).Expect(t, http.StatusOK))
	if len(list) != 1 {
		t.Fatalf("list = %v", list)
	}
	if _, ok := list[0]["bodyHtml"]; ok {
		t.Errorf("a list item carries bodyHtml: %v", list[0])
	}
}

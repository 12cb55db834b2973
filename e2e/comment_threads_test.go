package e2e

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/inkwell-dev/inkwell/internal/testenv"
)

// threadComment posts a comment (a reply when parentID is not 0) and returns it.
func (a *testApp) threadComment(token, slug, body string, parentID int64) map[string]any {
	a.T.Helper()
	c := map[string]any{"body": body}
	if parentID != 0 {
		c["parentId"] = parentID
	}
	return a.Do("POST", "/api/articles/"+slug+"/comments", token, map[string]any{"comment": c}).Expect(a.T, http.StatusOK).JSON(a.T)["comment"].(map[string]any)
}

// threadList is an article's comment list (or one comment's replies with ?parent=) as token sees it.
func (a *testApp) threadList(token, slug, query string) []map[string]any {
	a.T.Helper()
	raw := a.Do("GET", "/api/articles/"+slug+"/comments"+query, token, nil).Expect(a.T, http.StatusOK).JSON(a.T)["comments"].([]any)
	out := make([]map[string]any, len(raw))
	for i, c := range raw {
		out[i] = c.(map[string]any)
	}
	return out
}

func idOf(c map[string]any) int64 { return int64(c["id"].(float64)) }

// TestCommentThreads: replies nest at most three deep, the list stays a flat, threadable array with
// the EXT fields, ?parent= pages one comment's replies, deleting a comment with replies leaves a
// placeholder, edits are the author's own, and bad input is a 4xx with nothing stored.
func TestCommentThreads(t *testing.T) {
	parallel(t)
	app := startApp(t)
	author, ann, bob := app.Register("thauthor"), app.Register("thann"), app.Register("thbob")
	slug := app.publish(author, "Threads of thought")
	other := app.publish(author, "Another thread")

	top := app.threadComment(ann, slug, "top", 0)
	if top["parentId"] != nil || top["repliesCount"] != float64(0) || top["deleted"] != false || top["edited"] != false {
		t.Fatalf("a top-level comment: %v", top)
	}
	d2 := app.threadComment(bob, slug, "depth 2", idOf(top))
	d3 := app.threadComment(ann, slug, "depth 3", idOf(d2))
	d4 := app.threadComment(bob, slug, "a reply to depth 3", idOf(d3))
	if d2["parentId"] != float64(idOf(top)) || d3["parentId"] != float64(idOf(d2)) {
		t.Fatalf("d2 %v, d3 %v", d2, d3)
	}
	if d4["parentId"] != float64(idOf(d2)) {
		t.Errorf("a reply to a depth-3 comment has parentId %v, want %d (a sibling at depth 3)", d4["parentId"], idOf(d2))
	}

	// The list: flat, every parent before its replies, with the EXT fields.
	list := app.threadList("", slug, "")
	if len(list) != 4 {
		t.Fatalf("list %v", list)
	}
	seen := map[float64]bool{}
	for _, c := range list {
		if p, ok := c["parentId"].(float64); ok && !seen[p] {
			t.Errorf("comment %v comes before its parent", c)
		}
		seen[c["id"].(float64)] = true
	}
	if list[0]["repliesCount"] != float64(1) || list[1]["repliesCount"] != float64(2) {
		t.Errorf("repliesCount: top %v, d2 %v", list[0]["repliesCount"], list[1]["repliesCount"])
	}

	// ?parent= pages one comment's direct replies.
	page := app.Do("GET", fmt.Sprintf("/api/articles/%s/comments?parent=%d&limit=1", slug, idOf(d2)), "", nil).Expect(t, http.StatusOK).JSON(t)
	first := page["comments"].([]any)
	cursor, _ := page["nextCursor"].(string)
	if len(first) != 1 || idOf(first[0].(map[string]any)) != idOf(d3) || cursor == "" {
		t.Fatalf("first page of replies: %v", page)
	}
	rest := app.threadList("", slug, fmt.Sprintf("?parent=%d&limit=1&cursor=%s", idOf(d2), cursor))
	if len(rest) != 1 || idOf(rest[0]) != idOf(d4) {
		t.Fatalf("second page of replies: %v", rest)
	}

	// Bad input: 4xx, nothing stored.
	foreign := app.threadComment(ann, other, "elsewhere", 0)
	for _, tc := range []struct {
		name   string
		body   any
		status int
		field  string
	}{
		{"another article's parent", map[string]any{"comment": map[string]any{"body": "x", "parentId": idOf(foreign)}}, 422, "parentId"},
		{"a missing parent", map[string]any{"comment": map[string]any{"body": "x", "parentId": 1 << 50}}, 422, "parentId"},
		{"a zero parent", map[string]any{"comment": map[string]any{"body": "x", "parentId": 0}}, 422, "parentId"},
		{"a string parent", map[string]any{"comment": map[string]any{"body": "x", "parentId": "1"}}, 422, "parentId"},
		{"NUL in a reply", map[string]any{"comment": map[string]any{"body": "a\x00b", "parentId": idOf(top)}}, 422, "body"},
	} {
		res := app.Do("POST", "/api/articles/"+slug+"/comments", bob, tc.body)
		res.Expect(t, tc.status)
		if errs, _ := res.JSON(t)["errors"].(map[string]any); errs[tc.field] == nil {
			t.Errorf("%s: errors %s, want the field %q", tc.name, res.Body, tc.field)
		}
	}
	if n := len(app.threadList("", slug, "")); n != 4 {
		t.Errorf("%d comments after the refused replies, want 4", n)
	}
	app.Do("GET", "/api/articles/"+slug+"/comments?parent=0", "", nil).Expect(t, http.StatusUnprocessableEntity)
	app.Do("GET", fmt.Sprintf("/api/articles/%s/comments?parent=%d", slug, idOf(foreign)), "", nil).Expect(t, http.StatusNotFound)

	// Edits: one's own only, same body rules as a new comment.
	editPath := fmt.Sprintf("/api/articles/%s/comments/%d", slug, idOf(d3))
	app.Do("PUT", editPath, bob, map[string]any{"comment": map[string]any{"body": "hijack"}}).Expect(t, http.StatusForbidden)
	app.Do("PUT", editPath, ann, map[string]any{"comment": map[string]any{"body": " "}}).Expect(t, http.StatusUnprocessableEntity)
	app.Do("PUT", editPath, ann, map[string]any{"comment": map[string]any{"body": "a\x00"}}).Expect(t, http.StatusUnprocessableEntity)
	app.Do("PUT", fmt.Sprintf("/api/articles/%s/comments/%d", other, idOf(d3)), ann, map[string]any{"comment": map[string]any{"body": "x"}}).Expect(t, http.StatusNotFound)
	edited := app.Do("PUT", editPath, ann, map[string]any{"comment": map[string]any{"body": "depth 3, better"}}).Expect(t, http.StatusOK).JSON(t)["comment"].(map[string]any)
	if edited["edited"] != true || edited["body"] != "depth 3, better" {
		t.Errorf("edited comment: %v", edited)
	}

	// Delete: a comment with replies stays as a placeholder; a leaf goes.
	app.Do("DELETE", fmt.Sprintf("/api/articles/%s/comments/%d", slug, idOf(d2)), bob, nil).Expect(t, http.StatusNoContent)
	list = app.threadList(ann, slug, "")
	if len(list) != 4 || list[1]["deleted"] != true || list[1]["body"] != "" || !anonymousAuthor(list[1]) || list[1]["repliesCount"] != float64(2) {
		t.Fatalf("after deleting a comment with replies: %v", list)
	}
	app.Do("DELETE", fmt.Sprintf("/api/articles/%s/comments/%d", slug, idOf(d2)), bob, nil).Expect(t, http.StatusNotFound)
	app.Do("PUT", fmt.Sprintf("/api/articles/%s/comments/%d", slug, idOf(d2)), bob, map[string]any{"comment": map[string]any{"body": "back"}}).Expect(t, http.StatusNotFound)
	app.Do("DELETE", fmt.Sprintf("/api/articles/%s/comments/%d", slug, idOf(d4)), bob, nil).Expect(t, http.StatusNoContent)
	app.Do("DELETE", fmt.Sprintf("/api/articles/%s/comments/%d", slug, idOf(d3)), ann, nil).Expect(t, http.StatusNoContent)
	// The placeholder's last reply gone, it goes too; the top comment is a leaf again.
	list = app.threadList(ann, slug, "")
	if len(list) != 1 || idOf(list[0]) != idOf(top) || list[0]["repliesCount"] != float64(0) {
		t.Fatalf("after deleting the replies: %v", list)
	}
}

// TestFleet_CommentThreadsShowAtOnce: a reply, an edit and a delete through one instance show on
// the others with the very next request (comments are not cached; nothing to invalidate).
func TestFleet_CommentThreadsShowAtOnce(t *testing.T) {
	parallel(t)
	db, rds := testenv.NewDB(t), testenv.NewRedis(t)
	apps := []*testApp{startReplica(t, db, rds.Prefix, noCron), startReplica(t, db, rds.Prefix, noCron), startReplica(t, db, rds.Prefix, noCron)}
	author, ann := apps[0].Register("fthauthor"), apps[0].Register("fthann")
	slug := apps[0].publish(author, "Fleet threads")
	top := apps[0].threadComment(author, slug, "top", 0)
	for _, app := range apps { // every instance has read the list
		if n := len(app.threadList(ann, slug, "")); n != 1 {
			t.Fatalf("warming: %d comments", n)
		}
	}

	reply := apps[1].threadComment(ann, slug, "a reply", idOf(top))
	for i, app := range []*testApp{apps[0], apps[2]} {
		list := app.threadList("", slug, "")
		if len(list) != 2 || list[0]["repliesCount"] != float64(1) || list[1]["parentId"] != float64(idOf(top)) {
			t.Errorf("after a reply on instance 2, instance %d: %v", i, list)
		}
		if r := app.threadList("", slug, fmt.Sprintf("?parent=%d", idOf(top))); len(r) != 1 || idOf(r[0]) != idOf(reply) {
			t.Errorf("after a reply on instance 2, its replies on another instance: %v", r)
		}
	}

	apps[2].Do("PUT", fmt.Sprintf("/api/articles/%s/comments/%d", slug, idOf(reply)), ann, map[string]any{"comment": map[string]any{"body": "edited"}}).Expect(t, http.StatusOK)
	for _, app := range apps[:2] {
		if list := app.threadList("", slug, ""); list[1]["body"] != "edited" || list[1]["edited"] != true {
			t.Errorf("after an edit on instance 3, another instance: %v", list)
		}
	}

	apps[0].Do("DELETE", fmt.Sprintf("/api/articles/%s/comments/%d", slug, idOf(top)), author, nil).Expect(t, http.StatusNoContent)
	for _, app := range apps[1:] {
		if list := app.threadList("", slug, ""); len(list) != 2 || list[0]["deleted"] != true || !anonymousAuthor(list[0]) {
			t.Errorf("after a delete on instance 1, another instance: %v", list)
		}
	}
}

// TestCommentThreadsModeration: a hidden comment is its author's alone, as before threads; its
// replies stay visible to everyone, their parentId naming a comment the reader does not get.
func TestCommentThreadsModeration(t *testing.T) {
	parallel(t)
	app := startApp(t)
	_, mod := app.staff(t, "thm")
	author, troll, reader := app.Register("thmauthor"), app.Register("thmtroll"), app.Register("thmreader")
	slug := app.publish(author, "Moderated threads")
	rude := app.threadComment(troll, slug, "rude", 0)
	answer := app.threadComment(reader, slug, "please be kind", idOf(rude))
	app.Do("POST", fmt.Sprintf("/api/moderation/comments/%d/hide", idOf(rude)), mod, map[string]any{"reason": "rude"}).Expect(t, http.StatusOK)
	for _, who := range []string{"", reader, author} {
		list := app.threadList(who, slug, "")
		if len(list) != 1 || idOf(list[0]) != idOf(answer) || list[0]["parentId"] != float64(idOf(rude)) {
			t.Errorf("after the hide: %v", list)
		}
		if r := app.threadList(who, slug, fmt.Sprintf("?parent=%d", idOf(rude))); len(r) != 1 {
			t.Errorf("the hidden comment's replies: %v", r)
		}
	}
	if n := len(app.threadList(troll, slug, "")); n != 2 {
		t.Errorf("the hidden comment's author sees %d comments, want 2", n)
	}
	// To anyone but its author, a hidden comment is not there to answer.
	app.Do("POST", "/api/articles/"+slug+"/comments", reader, map[string]any{"comment": map[string]any{"body": "still?", "parentId": idOf(rude)}}).
		Expect(t, http.StatusUnprocessableEntity)
	app.threadComment(troll, slug, "my own hidden comment, answered", idOf(rude))
}

// TestCommentThreadsPlaceholderEdges: a reply under an Idempotency-Key is stored once and
// replayed; a placeholder cannot be reported (404) and a moderator may still hide it (no author
// to notify).
func TestCommentThreadsPlaceholderEdges(t *testing.T) {
	parallel(t)
	app := startApp(t)
	_, mod := app.staff(t, "thp")
	author, ann, bob := app.Register("thpauthor"), app.Register("thpann"), app.Register("thpbob")
	slug := app.publish(author, "Placeholder edges")
	top := app.threadComment(ann, slug, "top", 0)
	body := map[string]any{"comment": map[string]any{"body": "keyed reply", "parentId": idOf(top)}}
	first := app.Do("POST", "/api/articles/"+slug+"/comments", bob, body, "Idempotency-Key", "thp-1").Expect(t, http.StatusOK).JSON(t)["comment"].(map[string]any)
	again := app.Do("POST", "/api/articles/"+slug+"/comments", bob, body, "Idempotency-Key", "thp-1").Expect(t, http.StatusOK).JSON(t)["comment"].(map[string]any)
	if idOf(first) != idOf(again) || first["parentId"] != float64(idOf(top)) {
		t.Fatalf("keyed reply %v, replayed %v", first, again)
	}
	if list := app.threadList("", slug, ""); len(list) != 2 || list[0]["repliesCount"] != float64(1) {
		t.Fatalf("after the keyed reply and its replay: %v", list)
	}

	app.Do("DELETE", fmt.Sprintf("/api/articles/%s/comments/%d", slug, idOf(top)), ann, nil).Expect(t, http.StatusNoContent)
	app.Do("POST", "/api/reports", bob, map[string]any{"report": map[string]any{"comment": idOf(top), "article": slug, "reason": "spam"}}).Expect(t, http.StatusNotFound)
	app.Do("POST", fmt.Sprintf("/api/moderation/comments/%d/hide", idOf(top)), mod, map[string]any{"reason": "tidy"}).Expect(t, http.StatusOK)
	if list := app.threadList("", slug, ""); len(list) != 1 || idOf(list[0]) != idOf(first) {
		t.Errorf("after hiding the placeholder: %v", list)
	}
}

// anonymousAuthor reports whether a comment names no one: a placeholder's author is the empty
// profile, kept so RealWorld clients that read author.username do not break.
func anonymousAuthor(c map[string]any) bool {
	a, ok := c["author"].(map[string]any)
	return ok && a["username"] == "" && a["bio"] == "" && a["image"] == "" && a["following"] == false
}

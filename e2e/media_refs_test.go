package e2e

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

// insertUpload stores an upload row for username straight in PostgreSQL (the bytes are not
// needed to refer to it) and returns its path.
func (a *testApp) insertUpload(t *testing.T, username, hexDigit string) string {
	t.Helper()
	key := strings.Repeat(hexDigit, 64) + ".png"
	thumb := variantOf(key)[len("/media/"):]
	if _, err := a.DB.Pool.Exec(context.Background(), `INSERT INTO uploads (user_id, object_key, content_type, width, height, bytes, sha256, variants, variant_keys)
		SELECT id, $2, 'image/png', 10, 10, 100, $3, jsonb_build_object('thumb', jsonb_build_object('key', $4::text, 'width', 5, 'height', 5, 'bytes', 50)), ARRAY[$4::text]
		FROM users WHERE username = $1`, username, key, strings.Repeat(hexDigit, 64), thumb); err != nil {
		t.Fatal(err)
	}
	return "/media/" + key
}

// variantOf is the path of the thumbnail insertUpload gives the upload at path (or key).
func variantOf(path string) string {
	key := strings.TrimPrefix(path, "/media/")
	return "/media/" + key[:63] + "0.png"
}

// TestImageURLs: an avatar and an article cover are an https URL or the path of one of the
// user's own uploads; anything else is 422. What refers to an upload is recorded with the write.
func TestImageURLs(t *testing.T) {
	parallel(t)
	app := startApp(t)
	owner, other := app.Register("imgowner"), app.Register("imgother")
	mine := app.insertUpload(t, "imgowner", "a")
	theirs := app.insertUpload(t, "imgother", "b")
	refs := func(kind string) int64 {
		return app.pgCount(t, `SELECT count(*) FROM upload_references WHERE owner_kind = $1`, kind)
	}

	for _, bad := range []string{"javascript:alert(1)", "data:image/png;base64,AAAA", "http://example.com/a.png", "/etc/passwd", "https://", "ftp://x/y.png", theirs} {
		requireErrorField(t, app.Do("PUT", "/api/user", owner, map[string]any{"user": map[string]any{"image": bad}}), http.StatusUnprocessableEntity, "image")
		requireErrorField(t, app.Do("POST", "/api/articles", owner, map[string]any{"article": map[string]any{
			"title": "Cover " + bad, "description": "d", "body": "b", "coverImage": bad}}), http.StatusUnprocessableEntity, "coverImage")
	}

	app.Do("PUT", "/api/user", owner, map[string]any{"user": map[string]any{"image": "https://example.com/me.png"}}).Expect(t, http.StatusOK)
	res := app.Do("PUT", "/api/user", owner, map[string]any{"user": map[string]any{"image": mine}}).Expect(t, http.StatusOK)
	if got := res.JSON(t)["user"].(map[string]any)["image"]; got != mine {
		t.Fatalf("image = %v, want %s", got, mine)
	}
	if n := refs("avatar"); n != 1 {
		t.Fatalf("%d avatar references, want 1", n)
	}
	// A derived size of one's own upload refers to that upload; another user's is refused.
	app.Do("PUT", "/api/user", owner, map[string]any{"user": map[string]any{"image": variantOf(mine)}}).Expect(t, http.StatusOK)
	if n := app.pgCount(t, `SELECT count(*) FROM upload_references r JOIN uploads u ON u.id = r.upload_id
		WHERE r.owner_kind = 'avatar' AND u.object_key = $1`, strings.TrimPrefix(mine, "/media/")); n != 1 {
		t.Fatalf("%d avatar references to the upload whose thumbnail is the avatar, want 1", n)
	}
	requireErrorField(t, app.Do("PUT", "/api/user", owner, map[string]any{"user": map[string]any{"image": variantOf(theirs)}}), http.StatusUnprocessableEntity, "image")
	app.Do("PUT", "/api/user", owner, map[string]any{"user": map[string]any{"image": ""}}).Expect(t, http.StatusOK)
	if n := refs("avatar"); n != 0 {
		t.Fatalf("%d avatar references after clearing the image, want 0", n)
	}

	art := articleOf(t, app.Do("POST", "/api/articles", owner, map[string]any{"article": map[string]any{
		"title": "With a cover", "description": "d", "body": "see ![x](" + theirs + ")", "coverImage": mine}}).Expect(t, http.StatusCreated))
	if art["coverImage"] != mine {
		t.Fatalf("coverImage = %v, want %s", art["coverImage"], mine)
	}
	slug := art["slug"].(string)
	if n := refs("article"); n != 1 { // the cover; another user's image in the body is not the author's to keep
		t.Fatalf("%d article references, want 1", n)
	}
	if got := articleOf(t, app.Do("GET", "/api/articles/"+slug, other, nil).Expect(t, http.StatusOK))["coverImage"]; got != mine {
		t.Fatalf("a reader sees coverImage %v", got)
	}
	app.Do("PUT", "/api/articles/"+slug, owner, map[string]any{"article": map[string]any{"coverImage": "https://example.com/c.jpg"}}).Expect(t, http.StatusOK)
	if n := refs("article"); n != 0 {
		t.Fatalf("%d article references after the cover changed, want 0", n)
	}
	app.Do("PUT", "/api/articles/"+slug, owner, map[string]any{"article": map[string]any{"body": "now ![me](" + mine + ") inside"}}).Expect(t, http.StatusOK)
	if n := refs("article"); n != 1 {
		t.Fatalf("%d article references after the body named an upload, want 1", n)
	}
	app.Do("DELETE", "/api/articles/"+slug, owner, nil).Expect(t, http.StatusNoContent)
	if n := refs("article"); n != 0 {
		t.Fatalf("%d article references after the delete, want 0", n)
	}
}
